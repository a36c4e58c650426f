"""Connectors by name, as used by ``manage.py ingest <connector> PATH``."""

from __future__ import annotations

from ingestion.connectors.base import Connector, ConnectorError
from ingestion.connectors.html import HTMLConnector
from ingestion.connectors.jsonl import JSONLConnector
from ingestion.connectors.medquad import MedQuADConnector
from ingestion.connectors.rivm import RIVMConnector

CONNECTORS: dict[str, type[Connector]] = {
    c.name: c for c in (MedQuADConnector, RIVMConnector, JSONLConnector, HTMLConnector)
}


def connector_get(name: str) -> Connector:
    """A new connector instance by name. Raises ``ConnectorError`` for an unknown name."""
    try:
        return CONNECTORS[name]()
    except KeyError:
        raise ConnectorError(f"unknown connector {name!r}; choose one of: {', '.join(sorted(CONNECTORS))}") from None


__all__ = ["CONNECTORS", "Connector", "ConnectorError", "connector_get"]
