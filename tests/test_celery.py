"""A real Celery worker process executes ``ingestion_run_task`` from a real broker.

Two brokers: the embedded default (kombu's filesystem transport in a fresh folder) and Redis at
127.0.0.1:6379. The worker is a separate process on the same embedded PostgreSQL server and the
same test database, so the tests are transactional: the run row must be committed before the
worker can read it, and the worker's writes are read back by polling the row.

Each test uses its own queue name, so a worker never takes a message meant for another test or
for another worker on the same Redis.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import kombu
import pytest
import redis
from django.conf import settings

from ingestion.models import Document, IngestionRun
from ingestion.services import ingestion_run_create
from ingestion.tasks import ingestion_run_task
from tests.workers import broker_transport_options, filesystem_broker_make, wait_for, worker_env
from tests.workers import worker as worker_process
from zolsearch.celery import app

BASE_DIR = Path(settings.BASE_DIR)
REDIS_URL = "redis://127.0.0.1:6379/0"
RUN_TIMEOUT_S = 120.0
FINAL_STATUSES = {IngestionRun.Status.SUCCEEDED, IngestionRun.Status.FAILED}

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _jsonl_write(path: Path, tag: str) -> list[str]:
    """Write 3 lines: good, bad (invalid JSON), good. Returns the good external ids."""
    good = [f"celery-{tag}-1", f"celery-{tag}-2"]
    lines = [
        json.dumps(
            {
                "external_id": good[0],
                "url": "https://www.zol.be/bezoekuren",
                "title": "Bezoekuren",
                "text": "Bezoek is toegelaten van 14 tot 20 uur. Op intensieve zorg gelden aparte regels.",
                "language": "nl",
            }
        ),
        '{"external_id": "broken", "title": ',  # line 2: invalid JSON
        json.dumps(
            {
                "external_id": good[1],
                "url": "https://www.zol.be/parkeren",
                "title": "Parkeren",
                "text": "Patiënten en bezoekers parkeren in de ondergrondse parking aan de hoofdingang.",
                "language": "nl",
                "questions": ["Waar kan ik parkeren?"],
                "metadata": {"department": "onthaal"},
            }
        ),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return good


def _run_wait_final(run_id: int, *, worker: subprocess.Popen, log: Path) -> IngestionRun:
    """Poll the run row until its status is final; fail (with the worker's log) after 120 s."""
    return wait_for(
        lambda: IngestionRun.objects.filter(pk=run_id, status__in=FINAL_STATUSES).first(),
        process=worker,
        log=log,
        what=f"finishing run {run_id}",
        timeout_s=RUN_TIMEOUT_S,
    )


def _assert_run_ingested(run: IngestionRun, *, good_ids: list[str], file_name: str, log: Path) -> None:
    assert run.status == IngestionRun.Status.SUCCEEDED, f"{run.error}\nworker log:\n{log.read_text()}"
    assert run.total == 3
    assert run.done == 3
    assert run.created_count == 2
    assert run.error_count == 1
    assert [e["location"] for e in run.errors] == [f"{file_name}:2"]
    assert "invalid JSON" in run.errors[0]["message"]
    assert run.finished_at is not None
    documents = Document.objects.filter(external_id__in=good_ids)
    assert sorted(documents.values_list("external_id", flat=True)) == sorted(good_ids)
    assert all(d.chunks.exists() for d in documents)
    assert not Document.objects.filter(external_id="broken").exists()


def test_worker_runs_ingestion_from_filesystem_broker(tmp_path: Path) -> None:
    """GIVEN a worker process on the embedded filesystem broker in a fresh folder, and a committed
    PENDING jsonl run over a file whose line 2 is invalid JSON
    WHEN this process enqueues ``ingestion_run_task`` into that folder (before the worker starts)
    THEN the message is a file in the fresh folder, and the worker executes it: the run SUCCEEDED
    with 2 documents created, 1 error located at line 2, and both documents (with chunks) exist.
    """
    broker_dir = tmp_path / "broker"
    options = filesystem_broker_make(broker_dir)
    data = tmp_path / "faq.jsonl"
    good_ids = _jsonl_write(data, "fs")
    queue = f"zoltest-fs-{uuid.uuid4().hex[:12]}"
    log = tmp_path / "worker.log"
    run = ingestion_run_create(connector="jsonl", path=str(data), source_key="celery-fs")
    assert run.status == IngestionRun.Status.PENDING

    original_options = app.conf.broker_transport_options
    with broker_transport_options(options), app.connection_for_write("filesystem://") as conn:
        ingestion_run_task.apply_async(args=[run.id], connection=conn, queue=queue)
    assert app.conf.broker_transport_options == original_options  # restored
    assert len(list((broker_dir / "queue").iterdir())) == 1  # the message waits in the fresh folder

    with worker_process(queue=queue, env=worker_env(CELERY_BROKER_DIR=str(broker_dir)), log=log) as worker:
        run = _run_wait_final(run.id, worker=worker, log=log)

    _assert_run_ingested(run, good_ids=good_ids, file_name=data.name, log=log)


def test_worker_runs_ingestion_from_redis_broker(tmp_path: Path) -> None:
    """GIVEN a worker process with CELERY_BROKER_URL=redis://127.0.0.1:6379/0 on a queue of its own,
    and a committed PENDING jsonl run over a file whose line 2 is invalid JSON
    WHEN this process enqueues ``ingestion_run_task`` on that queue through Redis (before the
    worker starts)
    THEN the message waits in Redis, and the worker executes it: the run SUCCEEDED with 2
    documents created, 1 error located at line 2, and both documents (with chunks) exist.
    The queue's Redis keys are removed afterwards.
    """
    data = tmp_path / "faq.jsonl"
    good_ids = _jsonl_write(data, "redis")
    queue = f"zoltest-redis-{uuid.uuid4().hex[:12]}"
    log = tmp_path / "worker.log"
    run = ingestion_run_create(connector="jsonl", path=str(data), source_key="celery-redis")

    client = redis.Redis.from_url(REDIS_URL)
    try:
        with broker_transport_options({}), app.connection_for_write(REDIS_URL) as conn:
            ingestion_run_task.apply_async(args=[run.id], connection=conn, queue=queue)
        assert client.llen(queue) == 1  # the message waits in Redis, on this test's queue only

        with worker_process(queue=queue, env=worker_env(CELERY_BROKER_URL=REDIS_URL), log=log) as worker:
            run = _run_wait_final(run.id, worker=worker, log=log)
    finally:
        # kombu removes the queue and its binding tables (declared here so that it knows them)
        with broker_transport_options({}), app.connection_for_write(REDIS_URL) as conn:
            kombu.Queue(queue, kombu.Exchange(queue, type="direct"), routing_key=queue)(conn.default_channel).declare()
            conn.default_channel.queue_delete(queue)
        leftover = client.keys(f"*{queue}*")
        client.close()

    _assert_run_ingested(run, good_ids=good_ids, file_name=data.name, log=log)
    assert not leftover
