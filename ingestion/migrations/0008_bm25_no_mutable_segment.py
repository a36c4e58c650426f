"""BM25 index without pg_search's mutable segment.

pg_search keeps rows written in small batches in a *mutable segment* until
``mutable_segment_rows`` of them accumulate, and every query scans that segment row by row. After
small ingestion runs (RIVM, hospital pages: a few hundred chunks each) the BM25 stage spent most
of its time there: 216 rows cost 107 ms per query, p95 72 ms served, against 8 ms with the option
at 0 (``benchmarks/load.py --bm25-mutable-segment-rows 0``; docs/BENCHMARKS.md, issue 13). With
0 every write statement goes to a small immutable segment; pg_search merges those by its layer
policy on later writes (55 segments after a RIVM run, 16 after the next), and with parallel plans
off (``chunks_lexical_search``) they cost little. Rows already in a mutable segment move out on
the next VACUUM, which this migration runs (so it is not atomic: VACUUM cannot run in a
transaction). A plain VACUUM does not merge segments (checked on pg_search 0.21).

A no-op where ``pg_search`` is absent (the full-text fallback of 0003).
"""

from django.db import migrations

BM25_NAME = "chunk_bm25_idx"


def _bm25_index_exists(schema_editor) -> bool:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [BM25_NAME])
        return cursor.fetchone() is not None


def mutable_segment_off(apps, schema_editor):
    if _bm25_index_exists(schema_editor):
        schema_editor.execute(f"ALTER INDEX {BM25_NAME} SET (mutable_segment_rows = 0)")
        if not schema_editor.connection.in_atomic_block:
            schema_editor.execute("VACUUM ingestion_chunk")


def mutable_segment_default(apps, schema_editor):
    if _bm25_index_exists(schema_editor):
        schema_editor.execute(f"ALTER INDEX {BM25_NAME} RESET (mutable_segment_rows)")


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("ingestion", "0007_verbose_names")]
    operations = [migrations.RunPython(mutable_segment_off, mutable_segment_default)]
