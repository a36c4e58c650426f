"""A Celery worker killed (SIGKILL) in the middle of an ingestion run and of an evaluation run.

Real worker processes (``tests/workers.py``) on a fresh filesystem broker folder (the embedded
default of ``make run``), the same embedded PostgreSQL and test database. What is proven:

- the run does not stay RUNNING forever: the next worker to start on this host marks it FAILED
  with a clear reason (``core.runs.runs_orphaned_abandon``; kombu's filesystem transport deletes
  a message when it hands it out, so acks_late cannot redeliver it);
- what the killed worker committed stays, whole (one transaction per batch or question);
- running it again finishes it without duplicates: ingestion skips the documents already
  stored (no duplicate documents or chunks), evaluation answers every question once.

``tests/test_celery.py`` and ``tests/evaluation/test_celery_runs.py`` cover the runs that finish;
``core.runs.run_task_body``'s redelivery path is covered in ``tests/core/test_runs.py``.

Rerun: ``EMBEDDED_PGDATA=/tmp/pg-proof .venv/bin/python -m pytest tests/proof/test_worker_kill.py -q``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.models import Count

from evaluation.models import EvaluationResult, EvaluationRun
from evaluation.services.golden import golden_set_import
from evaluation.services.runs import evaluation_run_create
from evaluation.tasks import evaluation_run_task
from ingestion.models import Chunk, Document, IngestionRun
from ingestion.services import ingestion_run_create
from ingestion.tasks import ingestion_run_task
from tests.evaluation.factories import medquad_items
from tests.workers import broker_transport_options, filesystem_broker_make, wait_for, worker, worker_env
from zolsearch.celery import app

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
TIMEOUT_S = 240.0
FINAL = [IngestionRun.Status.SUCCEEDED, IngestionRun.Status.FAILED]


def _enqueue(task, run_id: int, *, options: dict[str, object], queue: str) -> None:
    with broker_transport_options(options), app.connection_for_write("filesystem://") as conn:
        task.apply_async(args=[run_id], connection=conn, queue=queue)


def _kill_when(predicate: Callable[[], bool], *, process: subprocess.Popen, log: Path, what: str) -> None:
    """SIGKILL ``process`` as soon as ``predicate`` holds (polled every 50 ms)."""
    deadline = time.monotonic() + TIMEOUT_S
    while not predicate():
        if process.poll() is not None:
            pytest.fail(f"worker exited with {process.returncode} before {what}:\n{log.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not reached after {TIMEOUT_S:.0f} s:\n{log.read_text()}")
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


def _pages_write(path: Path, count: int, tag: str) -> None:
    lines = []
    for i in range(count):
        text = " ".join(
            f"Pagina {i} over onderwerp {j} van de afdeling {tag}: bezoekuren, parkeren en de weg naar campus {i % 7}."
            for j in range(6)
        )
        lines.append(
            json.dumps(
                {
                    "external_id": f"{tag}-{i}",
                    "url": f"https://www.zol.be/{tag}/{i}",
                    "title": f"Pagina {i}",
                    "text": text,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_worker_killed_mid_ingest_leaves_a_failed_run_and_a_rerun_adds_no_duplicates(tmp_path: Path) -> None:
    """GIVEN a 600-page jsonl run executing on a worker, some batches committed
    WHEN the worker is killed (SIGKILL) and another worker starts
    THEN the run is FAILED saying its worker stopped (not RUNNING forever), the committed pages
    are whole (each with its chunks); running it again creates only the missing pages, leaves
    the committed ones unchanged, and no page or chunk is duplicated."""
    broker = filesystem_broker_make(tmp_path / "broker")
    queue = f"zoltest-kill-ingest-{uuid.uuid4().hex[:10]}"
    tag = f"kill{uuid.uuid4().hex[:6]}"
    data = tmp_path / "pages.jsonl"
    _pages_write(data, 600, tag)
    source = f"proof-{tag}"
    env = worker_env(CELERY_BROKER_DIR=str(tmp_path / "broker"))

    run = ingestion_run_create(connector="jsonl", path=str(data), source_key=source)
    _enqueue(ingestion_run_task, run.pk, options=broker, queue=queue)
    log = tmp_path / "worker-1.log"
    with worker(queue=queue, env=env, log=log) as process:
        _kill_when(
            lambda: IngestionRun.objects.filter(pk=run.pk, done__gt=0, status=IngestionRun.Status.RUNNING).exists(),
            process=process,
            log=log,
            what="the first committed batch",
        )
    killed = IngestionRun.objects.get(pk=run.pk)
    assert killed.status == IngestionRun.Status.RUNNING and 0 < killed.done < 600, (killed.status, killed.done)
    committed = Document.objects.filter(source__key=source).count()
    assert committed > 0
    assert not Document.objects.filter(source__key=source).annotate(n=Count("chunks")).filter(n=0).exists()

    log = tmp_path / "worker-2.log"
    with worker(queue=queue, env=env, log=log) as process:
        failed = wait_for(
            lambda: IngestionRun.objects.filter(pk=run.pk, status=IngestionRun.Status.FAILED).first(),
            process=process,
            log=log,
            what="abandoning the killed worker's run",
            timeout_s=TIMEOUT_S,
        )
        assert failed is not None and "stopped before it finished" in failed.error and "run it again" in failed.error

        rerun = ingestion_run_create(connector="jsonl", path=str(data), source_key=source)
        _enqueue(ingestion_run_task, rerun.pk, options=broker, queue=queue)
        again = wait_for(
            lambda: IngestionRun.objects.filter(pk=rerun.pk, status__in=FINAL).first(),
            process=process,
            log=log,
            what="the second run",
            timeout_s=TIMEOUT_S,
        )
    assert again is not None and again.status == IngestionRun.Status.SUCCEEDED, again
    assert again.unchanged_count == committed and again.created_count == 600 - committed
    documents = Document.objects.filter(source__key=source)
    assert documents.count() == 600 == documents.values("external_id").distinct().count()
    chunks = Chunk.objects.filter(document__source__key=source)
    assert chunks.count() == chunks.values("document", "position").distinct().count() > 0
    assert chunks.values("document", "text").distinct().count() == chunks.count()


def test_a_worker_killed_mid_evaluation_leaves_a_failed_run_with_its_results_and_a_rerun_completes(
    tmp_path: Path, slice_dir: Path
) -> None:
    """GIVEN an evaluation run over 12 real questions executing on a worker, some answered
    WHEN the worker is killed (SIGKILL) and another worker starts
    THEN the run is FAILED saying its worker stopped, the results it had written stay (one per
    question, none twice), and running the set again answers all 12 questions once each."""
    call_command("ingest", "medquad", str(slice_dir), "--subsets", "CDC", verbosity=0)
    cdc = Document.objects.filter(external_id__startswith="medquad:CDC:").order_by("external_id")
    external_ids = list(cdc.values_list("external_id", flat=True)[:12])
    golden_set, _ = golden_set_import(
        name=f"kill-{uuid.uuid4().hex[:6]}", items=medquad_items(external_ids=external_ids)
    )
    questions = golden_set.questions.count()
    assert questions == 12
    broker = filesystem_broker_make(tmp_path / "broker")
    queue = f"zoltest-kill-eval-{uuid.uuid4().hex[:10]}"
    env = worker_env(CELERY_BROKER_DIR=str(tmp_path / "broker"), JUDGE_ON_ANSWER="false")

    run = evaluation_run_create(golden_set=golden_set, label="killed")
    _enqueue(evaluation_run_task, run.pk, options=broker, queue=queue)
    log = tmp_path / "worker-1.log"
    with worker(queue=queue, env=env, log=log) as process:
        _kill_when(
            lambda: EvaluationResult.objects.filter(run_id=run.pk).count() >= 2,
            process=process,
            log=log,
            what="two answered questions",
        )
    killed = EvaluationRun.objects.get(pk=run.pk)
    kept = EvaluationResult.objects.filter(run_id=run.pk).count()
    assert killed.status == EvaluationRun.Status.RUNNING and 2 <= kept < questions

    log = tmp_path / "worker-2.log"
    with worker(queue=queue, env=env, log=log) as process:
        failed = wait_for(
            lambda: EvaluationRun.objects.filter(pk=run.pk, status=EvaluationRun.Status.FAILED).first(),
            process=process,
            log=log,
            what="abandoning the killed worker's run",
            timeout_s=TIMEOUT_S,
        )
        assert failed is not None and "stopped before it finished" in failed.error
        rerun = evaluation_run_create(golden_set=golden_set, label="again")
        _enqueue(evaluation_run_task, rerun.pk, options=broker, queue=queue)
        again = wait_for(
            lambda: EvaluationRun.objects.filter(pk=rerun.pk, status__in=FINAL).first(),
            process=process,
            log=log,
            what="the second run",
            timeout_s=TIMEOUT_S,
        )
    assert EvaluationResult.objects.filter(run_id=run.pk).count() == kept  # kept, nothing added later
    assert again is not None and again.status == EvaluationRun.Status.SUCCEEDED, again
    results = EvaluationResult.objects.filter(run_id=again.pk)
    assert results.count() == questions == results.values("question").distinct().count()
