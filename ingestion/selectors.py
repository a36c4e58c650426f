"""Reads of ingested content that other layers need (the pipeline freezes them per request)."""

from __future__ import annotations

from django.db.models import CharField, F, Func, Max, Value

from ingestion.models import Chunk, Document, Source


def source_priorities() -> dict[str, int]:
    """``{source key: priority}`` (0–10) of every source with a priority above 0 (one query)."""
    return dict(Source.objects.filter(priority__gt=0).values_list("key", "priority"))


def index_version() -> str:
    """A value that changes whenever the indexed content changes: the highest chunk id (chunks
    are only ever replaced, never edited, so every ingestion that changes a document creates new
    ids). One index-only query. ``"0"`` for an empty index."""
    return str(Chunk.objects.aggregate(top=Max("id"))["top"] or 0)


def document_hosts() -> list[str]:
    """The distinct hosts of the documents' web addresses (``"www.uzgent.be"``; the third
    ``/``-separated part of ``scheme://host/...``), sorted; documents without an address are
    left out. One query."""
    host = Func(F("url"), Value("/"), Value(3), function="split_part", output_field=CharField())
    rows = Document.objects.filter(url__contains="//").annotate(host=host).values_list("host", flat=True)
    return sorted({h for h in rows.distinct() if h})
