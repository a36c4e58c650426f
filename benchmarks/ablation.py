"""Ablation study speed: a 2^4 full factorial over a 200-question golden set, offline, executed
by a real Celery worker with one process per core (as ``make run`` runs studies), and the study's
admin pages (render time, query count).

Done-when of issue 11: the study finishes in ≤ 10 minutes on 2 cores and its admin pages render
in ≤ 1 s with ≤ 20 queries. Needs the corpus of the set in the benchmark database (``make
bench`` fills it with the full MedQuAD in ``benchmarks.search_latency``)::

    BENCH_PGDATA=.data/bench/postgres .venv/bin/python -m benchmarks.ablation \
        [--set medquad-heldout] [--factor crag_enabled …] [--limit 200]

Results: printed and ``docs/bench-results/ablation.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.common import BASE_DIR, django_setup, results_write

FACTORS = ("crag_enabled", "keyword_rescue_enabled", "reduced_query_enabled", "source_authority_enabled")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="medquad-heldout")
    parser.add_argument("--factor", action="append", default=[], help=f"Flags (default: {', '.join(FACTORS)}).")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="Worker processes.")
    args = parser.parse_args()
    django_setup()

    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from evaluation.models import AblationStudy
    from evaluation.services.ablation import ablation_study_create, factors_from_text
    from evaluation.services.golden import golden_set_resolve
    from evaluation.tasks import ablation_study_task
    from zolsearch.celery import app
    from zolsearch.search.config import pipeline_config_default

    golden_set = golden_set_resolve(name=args.set, version=None)
    base = pipeline_config_default()
    factors = factors_from_text(text="\n".join(args.factor or FACTORS), names=[], base=base)
    study = ablation_study_create(
        name=f"bench 2^{len(factors)} {uuid.uuid4().hex[:6]}",
        golden_sets=[golden_set],
        factors=factors,
        design="full",
        base_config=base,
        created_by="benchmarks.ablation",
    )
    print(f"study {study.pk}: {study.design_description}, {study.total} questions", flush=True)

    broker = Path(tempfile.mkdtemp(prefix="zol-ablate-broker-"))
    for sub in ("queue", "processed", "control"):
        (broker / sub).mkdir()
    queue = f"bench-ablate-{uuid.uuid4().hex[:8]}"
    options = {"data_folder_in": str(broker / "queue"), "data_folder_out": str(broker / "queue"),
               "processed_folder": str(broker / "processed"), "control_folder": str(broker / "control"),
               "store_processed": False}  # fmt: skip
    app.conf.broker_transport_options = options
    with app.connection_for_write("filesystem://") as conn:
        for _ in range(args.processes):
            ablation_study_task.apply_async(args=[study.pk], connection=conn, queue=queue)
    threads = str(max(1, (os.cpu_count() or 1) // args.processes))  # no more encoder threads than cores
    env = {**os.environ, "CELERY_BROKER_DIR": str(broker), "CELERY_BROKER_URL": "filesystem://",
           "EMBEDDING_THREADS": threads}  # fmt: skip
    command = [sys.executable, "-m", "celery", "-A", "zolsearch", "worker", f"--concurrency={args.processes}",
               "-l", "WARNING", "-Q", queue, "-n", f"{queue}@%h", "--without-gossip", "--without-mingle"]  # fmt: skip
    started = time.perf_counter()
    worker = subprocess.Popen(command, cwd=BASE_DIR, env=env)
    try:
        while True:
            time.sleep(5)
            study.refresh_from_db()
            print(f"  {study.done}/{study.total} questions, {time.perf_counter() - started:.0f} s", flush=True)
            if study.status in (AblationStudy.Status.SUCCEEDED, AblationStudy.Status.FAILED):
                break
            if worker.poll() is not None:
                raise SystemExit(f"the worker exited with {worker.returncode}")
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    wall_s = time.perf_counter() - started
    if study.status != AblationStudy.Status.SUCCEEDED:
        raise SystemExit(f"study {study.pk} failed: {study.error}")

    user, _ = User.objects.get_or_create(username="bench-admin", defaults={"is_staff": True, "is_superuser": True})
    client = Client()
    client.force_login(user)
    pages = {}
    for name, url in (
        ("study page", reverse("admin:evaluation_ablationstudy_change", args=[study.pk])),
        ("study list", reverse("admin:evaluation_ablationstudy_changelist")),
        ("csv export", reverse("admin:evaluation_ablationstudy_csv", args=[study.pk])),
    ):
        client.get(url)  # warm
        times = []
        for _ in range(5):
            with CaptureQueriesContext(connection) as queries:
                t0 = time.perf_counter()
                response = client.get(url)
                times.append((time.perf_counter() - t0) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        pages[name] = {"max_ms": round(max(times), 1), "queries": len(queries)}
    payload = {
        "command": "python -m benchmarks.ablation " + " ".join(sys.argv[1:]),
        "study": study.pk,
        "design": study.design_description,
        "golden_set": str(golden_set),
        "questions": study.total,
        "worker_processes": args.processes,
        "wall_s": round(wall_s, 1),
        "questions_per_s": round(study.total / wall_s, 2),
        "target_s": 600,
        "admin_pages": pages,
        "pass_rates": {c["label"]: c["pass_rate"]["mean"] for c in study.results["configurations"] if c["pass_rate"]},
    }
    path = results_write("ablation", payload)
    print(f"{study.total} questions in {wall_s:.0f} s ({payload['questions_per_s']}/s); admin {pages}; {path}")


if __name__ == "__main__":
    main()
