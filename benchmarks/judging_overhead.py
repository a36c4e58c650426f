"""API latency with background judging off and on: the response must never wait for the judge.

Database: the bundled MedQuAD slice in its own embedded database (``BENCH_SLICE_PGDATA``,
default ``.data/bench/slice``; ingested when missing, about two minutes). Broker: kombu's
filesystem transport in ``.data/bench/judging-broker`` (emptied first), or
``BENCH_BROKER_URL=redis://127.0.0.1:6379/9`` (that Redis database is flushed first). The
filesystem transport polls once a second, so its worker judges about one answer a second;
with Redis the worker judges as fast as it can, which is the case where judging competes with
the web process for the two cores.

Three conditions, 150 MedQuAD questions of the slice each (fixed seed, after 5 warm-ups),
posted to ``/api/v1/search`` through Django's test client with on-commit callbacks running as
in production (autocommit):

- ``off``: ``JUDGE_ON_ANSWER=false``;
- ``on``: every answer queues ``answer_judge_task`` after commit, no worker running (the cost
  the request itself pays: one message written to the broker);
- ``on+worker``: the same with a Celery worker process (prefork, concurrency 1) judging at the
  same time on the same 2 cores (the realistic case: judging competes for CPU);
- ``on+worker nice 19``: the same with the worker at the lowest CPU priority, as ``make run``
  starts it.

Run: ``.venv/bin/python -m benchmarks.judging_overhead``.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time

from benchmarks.common import BASE_DIR, django_setup, percentile, results_write

N = 150
BROKER = BASE_DIR / ".data" / "bench" / "judging-broker"


def main() -> None:
    shutil.rmtree(BROKER, ignore_errors=True)
    os.environ["CELERY_BROKER_DIR"] = str(BROKER)
    broker_url = os.environ.get("BENCH_BROKER_URL", "filesystem://")
    os.environ["CELERY_BROKER_URL"] = broker_url
    if broker_url.startswith("redis://"):
        import redis

        redis.Redis.from_url(broker_url).flushdb()  # a database of its own: pass e.g. redis://127.0.0.1:6379/9
    django_setup("BENCH_SLICE_PGDATA", ".data/bench/slice")
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from core.broker import broker_folders_ensure
    from evaluation.models import Judgement
    from ingestion.models import Document

    call_command("demo_setup", verbosity=0)
    broker_folders_ensure()
    questions = list(Document.objects.filter(source__key="medquad").values_list("title", flat=True))
    rng = random.Random(20261122)
    client = Client()

    def measure(label: str) -> dict[str, float]:
        sample = rng.sample(questions, N)
        for q in questions[:5]:
            client.post("/api/v1/search", {"question": q, "language": "en"}, content_type="application/json")
        times = []
        for q in sample:
            t0 = time.perf_counter()
            response = client.post("/api/v1/search", {"question": q, "language": "en"}, content_type="application/json")
            times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200, response.content
        result = {"p50_ms": round(percentile(times, 50), 1), "p95_ms": round(percentile(times, 95), 1), "n": N}
        print(label, result, flush=True)
        return result

    settings.JUDGE_ON_ANSWER = False
    off = measure("off")
    settings.JUDGE_ON_ANSWER = True
    from core.observability import queue_depth

    queued_before = queue_depth()
    on = measure("on")
    queued = queue_depth() - queued_before
    env = dict(os.environ)  # django_setup pointed EMBEDDED_PGDATA at the benchmark database

    def with_worker(label: str, prefix: list[str]) -> tuple[dict[str, float], int]:
        command = [sys.executable, "-m", "celery", "-A", "zolsearch", "worker", "--pool=prefork", "--concurrency=1"]
        worker = subprocess.Popen([*prefix, *command, "-l", "WARNING"], cwd=BASE_DIR, env=env)
        try:
            time.sleep(20)  # worker start-up (model load, slow at nice 19 while idle) before measuring
            before = Judgement.objects.filter(status=Judgement.Status.DONE).count()
            result = measure(label)
            judged = Judgement.objects.filter(status=Judgement.Status.DONE).count() - before
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=60)
        return result, judged

    busy, judged = with_worker("on+worker", [])
    niced, judged_niced = with_worker("on+worker nice 19", ["nice", "-n", "19"])
    results_write(
        "judging_overhead",
        {
            "questions_per_condition": N,
            "broker": broker_url.split("@")[-1],
            "off": off,
            "on": on,
            "on_with_worker": busy,
            "on_with_worker_nice19": niced,
            "messages_queued_in_on": queued,
            "judgements_done_during_on_with_worker": judged,
            "judgements_done_during_on_with_worker_nice19": judged_niced,
        },
    )


if __name__ == "__main__":
    main()
