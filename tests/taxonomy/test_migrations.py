"""Migrations 0003/0004: SNOMED CT import rows written before imports were background runs
survive, with their statuses and timestamps mapped."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db

BEFORE = [("taxonomy", "0002_snomed_term_fulltext")]
AFTER = [("taxonomy", "0004_snomedimport_background_run_data")]
STARTED = datetime(2026, 11, 1, 9, 30, tzinfo=UTC)
FINISHED = datetime(2026, 11, 1, 9, 31, tzinfo=UTC)


def _migrate(targets: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


def test_old_import_rows_become_background_runs() -> None:
    """GIVEN a succeeded, a failed and an interrupted import stored by the old schema WHEN the
    migrations run THEN the rows keep their status, error, counts and times; created_at is the
    old start time; total is the number of files and done equals it only for the success.
    Backwards, the old schema gets the same rows back."""
    old = _migrate(BEFORE).get_model("taxonomy", "SnomedImport")
    files = {"concept": ["c.txt"], "description": ["d-en.txt", "d-nl.txt"]}
    rows = {
        status: old.objects.create(path=f"/{status}", release_type="Snapshot", status=status, files=files).pk
        for status in ("succeeded", "failed", "running")
    }
    old.objects.filter(pk=rows["succeeded"]).update(
        started_at=STARTED, finished_at=FINISHED, counts={"concept": 1}, timings_ms={"total": 60000.0}
    )
    old.objects.filter(pk=rows["failed"]).update(started_at=STARTED, finished_at=FINISHED, error="d-nl.txt: line 4")

    new = _migrate(AFTER).get_model("taxonomy", "SnomedImport")
    succeeded, failed, running = (new.objects.get(pk=rows[s]) for s in ("succeeded", "failed", "running"))
    assert (succeeded.status, succeeded.done, succeeded.total) == ("succeeded", 3, 3)
    assert succeeded.created_at == succeeded.started_at == STARTED and succeeded.finished_at == FINISHED
    assert succeeded.counts == {"concept": 1} and succeeded.timings_ms == {"total": 60000.0}
    assert (failed.status, failed.done, failed.total, failed.error) == ("failed", 0, 3, "d-nl.txt: line 4")
    assert failed.created_at == STARTED
    assert (running.status, running.done, running.total, running.finished_at) == ("running", 0, 3, None)
    assert running.worker == "" and running.code_version == ""
    pending = new.objects.create(path="/pending", release_type="Full", files=files)

    back = _migrate(BEFORE).get_model("taxonomy", "SnomedImport")
    assert back.objects.get(pk=rows["succeeded"]).started_at == STARTED
    reverted = back.objects.get(pk=pending.pk)
    assert (reverted.status, reverted.error) == ("failed", "never started")
    assert reverted.started_at == pending.created_at
    _migrate(AFTER)
