"""Lexical index on ``Chunk.embedded_text``.

ParadeDB ``pg_search`` present: one BM25 index with a Dutch
and an English Snowball-stemmed alias of the same column (``text_nl``, ``text_en``).
Otherwise: GIN full-text indexes on ``to_tsvector('dutch'|'english', embedded_text)``; the
pipeline then runs PostgreSQL full-text search and says so in the answer's trace.
"""

from django.db import migrations

BM25_NAME = "chunk_bm25_idx"


# Written as SQL rather than django-paradedb's BM25Index: its 0.5 renderer joins tokenizer options
# into one string ('alias=text_nl,stemmer=dutch'), which pg_search 0.21 does not read as two
# options, so the aliases were not queryable. Separate arguments work (checked on 0.21.14).
BM25_SQL = (
    f"CREATE INDEX IF NOT EXISTS {BM25_NAME} ON ingestion_chunk USING bm25 ("
    "id, "
    "(embedded_text::pdb.simple('stemmer=dutch', 'alias=text_nl')), "
    "(embedded_text::pdb.simple('stemmer=english', 'alias=text_en'))"
    ") WITH (key_field='id')"
)


def lexical_index_create(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_search'")
        has_pg_search = cursor.fetchone() is not None
    if has_pg_search:
        schema_editor.execute(BM25_SQL)
        return
    for config in ("dutch", "english"):
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS chunk_fts_{config}_idx ON ingestion_chunk "
            f"USING gin (to_tsvector('{config}', embedded_text))"
        )


def lexical_index_drop(apps, schema_editor):
    schema_editor.execute(f"DROP INDEX IF EXISTS {BM25_NAME}")
    for config in ("dutch", "english"):
        schema_editor.execute(f"DROP INDEX IF EXISTS chunk_fts_{config}_idx")


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0002_initial")]
    operations = [migrations.RunPython(lexical_index_create, lexical_index_drop)]
