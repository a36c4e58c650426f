"""Chunk vectors stored in the table's rows (column storage MAIN), not in its TOAST table.

pgvector's type asks for EXTERNAL storage, and a 512-dimension vector is 2,056 bytes, which makes
a row of this table longer than PostgreSQL's 2,032-byte TOAST threshold: every USE vector lived
out of line (the heap of the slice corpus was 256 kB beside 6.9 MB of TOAST), and every read of
one (the distance the HNSW query returns for each hit, a sequential scan on a small corpus, the
reranker's and the gate's vectors by id) went through the TOAST index and two TOAST chunks. With
MAIN a vector stays in its row unless the row would not fit on a page (a 3,072-dimension vector
still moves out of line); MAIN allows compression, which float vectors do not take (none of the
full MedQuAD's was compressed). Measured on the full MedQuAD index (docs/BENCHMARKS.md, sixteenth
session): the dense query at ef_search 200 p50 5.0 → 3.9 ms, 40 vectors by id 1.8 → 1.05 ms; on
the slice corpus the sequential scan the planner chooses 5 → 3.3 ms.

Rows already stored out of line are rewritten (an UPDATE of each to the same value), which leaves
a dead version of each row in the HNSW index: the table's indexes are then rebuilt (REINDEX,
faster than VACUUM repairing the graph, as pgvector's README advises) and VACUUM makes the dead
rows' space reusable. So this migration is not atomic (VACUUM cannot run in a transaction; inside
one, only the UPDATE runs and autovacuum follows). Timed on the slice corpus (2,326 vectors): see
docs/BENCHMARKS.md. Reversible: back to EXTERNAL (rows stay as they are until rewritten).
"""

from django.db import migrations

TABLE = "ingestion_chunkembedding"


def vectors_inline(apps, schema_editor):
    schema_editor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN vector SET STORAGE MAIN")
    # Only rows whose vector is out of line (PostgreSQL >= 17 tells: pg_column_toast_chunk_id is
    # NULL for a value in its row); on an older server every row.
    out_of_line = (
        " WHERE pg_column_toast_chunk_id(vector) IS NOT NULL"
        if schema_editor.connection.pg_version >= 170000
        else ""
    )
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET vector = vector::text::vector{out_of_line}")
        rewritten = cursor.rowcount
    if rewritten and not schema_editor.connection.in_atomic_block:
        schema_editor.execute(f"REINDEX TABLE {TABLE}")
        schema_editor.execute(f"VACUUM {TABLE}")


def vectors_external(apps, schema_editor):
    schema_editor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN vector SET STORAGE EXTERNAL")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("ingestion", "0009_chunk_sentence_vectors")]

    operations = [migrations.RunPython(vectors_inline, vectors_external)]
