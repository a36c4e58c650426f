"""Enable pgvector (required) and ParadeDB pg_search (optional) before any table exists."""

from django.core.exceptions import ImproperlyConfigured
from django.db import migrations


def extensions_create(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_available_extensions WHERE name IN ('vector', 'pg_search')")
        available = {row[0] for row in cursor.fetchall()}
        if "vector" not in available:
            raise ImproperlyConfigured(
                "This PostgreSQL server does not offer the 'vector' extension (pgvector), which ZOL "
                "Search needs for dense retrieval. Install pgvector on the server (or use a managed "
                "PostgreSQL with pgvector), or unset DATABASE_URL to use the embedded PostgreSQL 17."
            )
        cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        if "pg_search" in available:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_search")


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [migrations.RunPython(extensions_create, migrations.RunPython.noop)]
