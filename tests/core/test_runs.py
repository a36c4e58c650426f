"""The background-run machinery every run kind shares (ingestion runs, evaluation runs, SNOMED
CT imports), on real rows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from core.admin_runs import BackgroundRunAdminMixin
from core.runs import BackgroundRun, RunStatus, code_version, run_abandon, run_claim, run_progress, worker_identity
from evaluation.services.runs import evaluation_run_create
from ingestion.services import ingestion_run_create
from taxonomy.snomed import snomed_import_create
from tests.evaluation.factories import GoldenQuestionFactory

pytestmark = pytest.mark.django_db
SNOMED = Path(__file__).resolve().parent.parent.parent / "data" / "snomed" / "heartfailure-subset"

KINDS: dict[str, Callable[[], BackgroundRun]] = {
    "ingestion": lambda: ingestion_run_create(connector="medquad", path="data/medquad-slice"),
    "evaluation": lambda: evaluation_run_create(golden_set=GoldenQuestionFactory().golden_set),
    "snomed": lambda: snomed_import_create(path=SNOMED),
}


@pytest.fixture(params=sorted(KINDS))
def pending(request: pytest.FixtureRequest) -> BackgroundRun:
    """A PENDING run of each kind, as its service creates it."""
    return KINDS[request.param]()


def test_only_one_claim_wins_and_records_the_worker(pending: BackgroundRun) -> None:
    """GIVEN a PENDING run WHEN two workers claim it THEN exactly one gets it, and the row says
    which worker and which code version run it."""
    model = type(pending)
    assert pending.status == RunStatus.PENDING and pending.worker == "" and pending.started_at is None
    assert run_claim(model=model, run_id=pending.pk) is True
    assert run_claim(model=model, run_id=pending.pk) is False
    pending.refresh_from_db()
    assert pending.status == RunStatus.RUNNING and pending.started_at is not None
    assert pending.worker == worker_identity() and pending.code_version == code_version() and pending.code_version


def test_progress_and_abandon_only_touch_running_runs(pending: BackgroundRun) -> None:
    model = type(pending)
    before = (pending.done, pending.total)
    run_progress(model=model, run_id=pending.pk, done=3, total=10)
    pending.refresh_from_db()
    assert (pending.done, pending.total) == before  # not claimed yet: nothing moves
    assert run_abandon(model=model, run_id=pending.pk, reason="worker lost") is False
    run_claim(model=model, run_id=pending.pk)
    run_progress(model=model, run_id=pending.pk, done=3, total=10)
    pending.refresh_from_db()
    assert (pending.done, pending.total, pending.progress_percent) == (3, 10, 30)
    run_progress(model=model, run_id=pending.pk, done=4)  # total unchanged when not given
    pending.refresh_from_db()
    assert (pending.done, pending.total) == (4, 10)
    assert run_abandon(model=model, run_id=pending.pk, reason="worker lost") is True
    pending.refresh_from_db()
    assert pending.status == RunStatus.FAILED and pending.error == "worker lost" and pending.finished_at is not None
    assert run_abandon(model=model, run_id=pending.pk, reason="again") is False


def test_the_progress_column_shows_done_of_total(pending: BackgroundRun) -> None:
    pending.done, pending.total = 2, 8
    assert BackgroundRunAdminMixin().progress(pending) == ('<progress value="2" max="8" title="2 / 8"></progress> 25%')
    pending.done, pending.total = 0, 0  # total not known yet
    assert BackgroundRunAdminMixin().progress(pending) == ('<progress value="0" max="1" title="0 / 0"></progress> 0%')


def test_the_shared_task_body_guards_status_and_records_failures(pending: BackgroundRun) -> None:
    """GIVEN a PENDING run of each kind
    WHEN the shared task body runs it with an executor that claims and succeeds, again (a
    duplicate message), for a redelivered message of a RUNNING run, and with a failing executor
    THEN it executes once, skips the duplicate, abandons the orphan with the reason, and returns
    "failed" without raising."""
    from core.runs import run_task_body

    model = type(pending)
    calls: list[int] = []

    def succeed(run_id: int) -> BackgroundRun:
        calls.append(run_id)
        run_claim(model=model, run_id=run_id)
        model._default_manager.filter(pk=run_id).update(status=RunStatus.SUCCEEDED)
        return model._default_manager.get(pk=run_id)

    def body(execute: Callable[[int], BackgroundRun], *, redelivered: bool = False, run_id: int | None = None) -> str:
        return run_task_body(
            model=model, run_id=run_id or pending.pk, redelivered=redelivered, execute=execute, what="test"
        )

    assert body(succeed, run_id=10**9) == "skipped"  # gone
    assert body(succeed) == RunStatus.SUCCEEDED and calls == [pending.pk]
    assert body(succeed) == "skipped" and calls == [pending.pk]  # a duplicate message

    another = {
        "IngestionRun": KINDS["ingestion"],
        "EvaluationRun": KINDS["evaluation"],
        "SnomedImport": KINDS["snomed"],
    }[model.__name__]
    orphan = another()
    run_claim(model=model, run_id=orphan.pk)  # its worker died while RUNNING
    assert body(succeed, run_id=orphan.pk, redelivered=True) == "abandoned"
    orphan.refresh_from_db()
    assert orphan.status == RunStatus.FAILED and "worker running this test stopped" in orphan.error

    def fail(run_id: int) -> BackgroundRun:
        raise RuntimeError("boom")

    third = another()
    assert body(fail, run_id=third.pk) == "failed"
