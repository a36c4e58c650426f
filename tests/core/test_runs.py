"""The background-run machinery shared by ingestion and evaluation runs, on a real row."""

from __future__ import annotations

import pytest

from core.runs import RunStatus, code_version, run_abandon, run_claim, run_progress, worker_identity
from ingestion.models import IngestionRun
from ingestion.services import ingestion_run_create

pytestmark = pytest.mark.django_db


def test_only_one_claim_wins_and_records_the_worker() -> None:
    """GIVEN a PENDING run WHEN two workers claim it THEN exactly one gets it, and the row says
    which worker and which code version run it."""
    run = ingestion_run_create(connector="medquad", path="data/medquad-slice")
    assert run.status == RunStatus.PENDING and run.worker == ""
    assert run_claim(model=IngestionRun, run_id=run.pk) is True
    assert run_claim(model=IngestionRun, run_id=run.pk) is False
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.started_at is not None
    assert run.worker == worker_identity() and run.code_version == code_version() and run.code_version


def test_progress_and_abandon_only_touch_running_runs() -> None:
    run = ingestion_run_create(connector="medquad", path="data/medquad-slice")
    run_progress(model=IngestionRun, run_id=run.pk, done=3, total=10)
    run.refresh_from_db()
    assert (run.done, run.total) == (0, 0)  # not claimed yet: nothing moves
    assert run_abandon(model=IngestionRun, run_id=run.pk, reason="worker lost") is False
    run_claim(model=IngestionRun, run_id=run.pk)
    run_progress(model=IngestionRun, run_id=run.pk, done=3, total=10)
    run.refresh_from_db()
    assert (run.done, run.total, run.progress_percent) == (3, 10, 30)
    assert run_abandon(model=IngestionRun, run_id=run.pk, reason="worker lost") is True
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.error == "worker lost" and run.finished_at is not None
    assert run_abandon(model=IngestionRun, run_id=run.pk, reason="again") is False
