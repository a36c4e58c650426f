"""Reads of ingested content that other layers need (the pipeline freezes them per request)."""

from __future__ import annotations

from ingestion.models import Source


def source_priorities() -> dict[str, int]:
    """``{source key: priority}`` (0–10) of every source with a priority above 0 (one query)."""
    return dict(Source.objects.filter(priority__gt=0).values_list("key", "priority"))
