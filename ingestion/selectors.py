"""Reads of ingested content that other layers need (the pipeline freezes them per request)."""

from __future__ import annotations

from django.db.models import Max

from ingestion.models import Chunk, Source


def source_priorities() -> dict[str, int]:
    """``{source key: priority}`` (0–10) of every source with a priority above 0 (one query)."""
    return dict(Source.objects.filter(priority__gt=0).values_list("key", "priority"))


def index_version() -> str:
    """A value that changes whenever the indexed content changes: the highest chunk id (chunks
    are only ever replaced, never edited, so every ingestion that changes a document creates new
    ids). One index-only query. ``"0"`` for an empty index."""
    return str(Chunk.objects.aggregate(top=Max("id"))["top"] or 0)
