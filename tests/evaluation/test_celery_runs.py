"""An evaluation run and background judging executed by a real Celery worker process.

Transactional: the worker is another process on the same embedded server and test database,
so rows must be committed before it can read them. A previous transactional test may have
flushed the session corpus, so the test ingests the CDC subset of the slice itself (unchanged
documents are skipped when they are still there).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from django.core.management import call_command

from evaluation.models import EvaluationRun, Judgement
from evaluation.services.golden import golden_set_import
from evaluation.services.runs import evaluation_run_create
from evaluation.tasks import answer_judge_task, evaluation_run_task
from tests.evaluation.factories import medquad_items
from tests.workers import broker_transport_options, filesystem_broker_make, wait_for, worker, worker_env
from zolsearch.celery import app
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import search_answer

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
TIMEOUT_S = 180.0
FINISHED = [Judgement.Status.DONE, Judgement.Status.FAILED, Judgement.Status.SKIPPED]


def test_worker_executes_an_evaluation_run_and_judges_an_answer(tmp_path: Path, slice_dir: Path) -> None:
    """GIVEN a committed PENDING run over 3 real CDC questions and a stored API answer
    WHEN their tasks are sent through a fresh filesystem broker folder and a worker process runs
    THEN the run SUCCEEDED with 3 results and a summary, and the answer has a DONE judgement."""
    call_command("ingest", "medquad", str(slice_dir), "--subsets", "CDC", verbosity=0)
    ids = ["medquad:CDC:0000003:2", "medquad:CDC:0000008:2", "medquad:CDC:0000001:1"]
    golden_set, _ = golden_set_import(name=f"celery-{uuid.uuid4().hex[:6]}", items=medquad_items(external_ids=ids))
    run = evaluation_run_create(golden_set=golden_set, label="celery")
    _, answer = search_answer(request=SearchRequest(question="Who is at risk for Acinetobacter?", language="en"))

    broker_dir = tmp_path / "broker"
    options = filesystem_broker_make(broker_dir)
    queue = f"zoltest-eval-{uuid.uuid4().hex[:12]}"
    with broker_transport_options(options), app.connection_for_write("filesystem://") as conn:
        evaluation_run_task.apply_async(args=[run.pk], connection=conn, queue=queue)
        answer_judge_task.apply_async(args=[answer.pk], connection=conn, queue=queue)
    assert len(list((broker_dir / "queue").iterdir())) == 2

    log = tmp_path / "worker.log"
    with worker(queue=queue, env=worker_env(CELERY_BROKER_DIR=str(broker_dir)), log=log) as process:
        finished = wait_for(
            lambda: EvaluationRun.objects.filter(
                pk=run.pk, status__in=[EvaluationRun.Status.SUCCEEDED, EvaluationRun.Status.FAILED]
            ).first(),
            process=process,
            log=log,
            what="the evaluation run",
            timeout_s=TIMEOUT_S,
        )
        judgement = wait_for(
            lambda: Judgement.objects.filter(answer=answer, status__in=FINISHED).first(),
            process=process,
            log=log,
            what="the judgement",
            timeout_s=TIMEOUT_S,
        )
    assert finished.status == EvaluationRun.Status.SUCCEEDED, f"{finished.error}\n{log.read_text()}"
    assert finished.done == 3 and finished.results.count() == 3
    assert finished.metrics["overall"]["ndcg_at_5"]["n"] == 3 and finished.pass_rate is not None
    assert judgement.status == Judgement.Status.DONE and judgement.faithfulness is not None
