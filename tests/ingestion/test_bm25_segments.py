"""The BM25 index after small ingestion runs: nothing waits in pg_search's mutable segment.

Rows in the mutable segment are scanned one by one by every query (216 of them cost ~100 ms per
BM25 query, docs/BENCHMARKS.md): migration ingestion 0008 sets ``mutable_segment_rows = 0``.
Transactional: ingestion runs commit batch by batch, as they do when served.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from ingestion.services import BULK_CHUNKS, ingestion_run_create, ingestion_run_execute
from zolsearch.search.selectors import BM25_INDEX_NAME, chunks_lexical_search

pytestmark = pytest.mark.django_db(transaction=True)


def _index_segments() -> tuple[int, int]:
    """``(segments, rows in mutable segments)`` of the BM25 index."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), coalesce(sum(num_docs) FILTER (WHERE mutable), 0) "
            f"FROM paradedb.index_info('{BM25_INDEX_NAME}')"
        )
        segments, mutable = cursor.fetchone()
    return int(segments), int(mutable)


def test_the_bm25_index_is_created_without_a_mutable_segment() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [BM25_INDEX_NAME])
        (options,) = cursor.fetchone()
    assert "mutable_segment_rows=0" in (options or []), options


def test_small_ingestion_runs_leave_no_rows_in_a_mutable_segment(slice_dir: Path) -> None:
    """GIVEN an empty index WHEN two small runs (each < BULK_CHUNKS chunks, no REINDEX) write
    chunks THEN no row is in a mutable segment and BM25 finds the second run's documents."""
    for subset in ("CDC", "GARD"):
        run = ingestion_run_create(connector="medquad", path=str(slice_dir), subsets=[subset])
        run = ingestion_run_execute(run_id=run.id)
        assert 0 < run.chunk_count < BULK_CHUNKS, run.chunk_count
        segments, mutable = _index_segments()
        assert mutable == 0, (subset, segments, mutable)
    hits = chunks_lexical_search(query="Aicardi syndrome", language="en", limit=5)
    assert hits, "BM25 finds nothing of the second run"
