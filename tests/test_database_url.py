"""``DATABASE_URL`` pointing at a PostgreSQL server without pgvector fails loudly at migrate.

Uses the PostgreSQL 15 server at 127.0.0.1:5432 (trust authentication, user ``postgres``), which
does not have pgvector installed. The test creates a throw-away database there and drops it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

SERVER = {"host": "127.0.0.1", "port": 5432, "user": "postgres", "dbname": "test"}
MIGRATE_TIMEOUT_S = 300


def _admin_connection() -> psycopg.Connection:
    try:
        return psycopg.connect(**SERVER, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        pytest.fail(
            "this test needs the PostgreSQL server without pgvector at 127.0.0.1:5432 "
            f"(user postgres, trust auth, database 'test'), which is not reachable: {exc}"
        )


@pytest.mark.slow
def test_migrate_on_server_without_pgvector_fails_with_clear_message() -> None:
    """GIVEN DATABASE_URL pointing to a fresh database on a PostgreSQL 15 server without pgvector
    WHEN ``manage.py migrate`` runs in a subprocess with that environment
    THEN it exits non-zero and stderr explains that the server does not offer the 'vector'
    extension; no ZOL Search table was created.
    """
    name = f"zol_novector_{uuid.uuid4().hex[:12]}"
    admin = _admin_connection()
    try:
        with admin.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            assert cursor.fetchone() is None, "precondition: the server at 127.0.0.1:5432 must lack pgvector"
            cursor.execute(f'CREATE DATABASE "{name}"')
        env = dict(os.environ)
        for key in ("EMBEDDED_PGDATA", "EMBEDDED_PGDATABASE"):
            env.pop(key, None)
        env.update(
            DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{name}",
            DJANGO_SETTINGS_MODULE="zolsearch.settings",
            DJANGO_SECRET_KEY="test-only-secret-for-a-production-mode-process",  # DATABASE_URL implies production mode
        )

        result = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=Path(settings.BASE_DIR),
            env=env,
            capture_output=True,
            text=True,
            timeout=MIGRATE_TIMEOUT_S,
        )

        assert result.returncode != 0, f"migrate succeeded unexpectedly:\n{result.stdout}\n{result.stderr}"
        assert "does not offer the 'vector' extension" in result.stderr, result.stderr
        with psycopg.connect(**{**SERVER, "dbname": name}, autocommit=True) as conn, conn.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'ingestion_%'")
            assert cursor.fetchone() == (0,)
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()
