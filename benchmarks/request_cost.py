"""What one search request costs the web process, in process (evidence for issue 13 item 2:
where the CPU of a request goes, before anyone caches or rewrites a part of it).

Each question of the load benchmark's mix (:func:`benchmarks.load.questions_load`, golden sets
only: ``extend_to`` = their size) is posted to ``/api/v1/search`` through Django's test client:
the whole middleware stack, the API, the pipeline, storing the answer; no socket, no gunicorn.
The semantic cache is off for the run (flag row ``semantic_cache_enabled``, put back after), so
every request runs every stage. Per request: wall time (ms), the CPU time of the requesting
thread (``time.thread_time``, ms: Python, the encoder, the driver; not PostgreSQL's, which runs
in its own processes), and every SQL statement with its time (Django's
``CaptureQueriesContext``; wall time as the client sees it, which includes PostgreSQL's work),
grouped by shape (digits and vector literals masked, first 100 characters).

Run on a database that holds the corpus (the full MedQuAD plus the hospital-nl pages)::

    EMBEDDED_PGDATA=.data/dev .venv/bin/python -m benchmarks.request_cost [--questions 200]

Results: printed, and ``docs/bench-results/request_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
_VECTOR = re.compile(r"'\[[^\]]*\]'")
_DIGITS = re.compile(r"\d+")
# Requests first, unmeasured: the classifiers train, the caches fill, Presidio and SymSpell load.
# In a gunicorn worker these are paid once per process; 20 left some of them in the measured
# requests (CPU a request 55 ms over the first 500 of a process, 37 over requests 400-500).
WARM_UP = 100


def statement_shape(sql: str) -> str:
    """``sql`` with vector literals as ``'[vec]'`` and digit runs as ``N``, first 100 characters:
    the key statements are grouped by."""
    return _DIGITS.sub("N", _VECTOR.sub("'[vec]'", sql))[:100]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=200, help="Measured requests (after the warm-up).")
    parser.add_argument("--warm-up", type=int, default=WARM_UP, help="Unmeasured requests first (default 100).")
    args = parser.parse_args()
    if args.questions < 1:
        parser.error("--questions must be at least 1")
    if args.warm_up < 0:
        parser.error("--warm-up must be 0 or more")

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    # the encoder in the calling thread, as gunicorn's workers run it (benchmarks.load), so that
    # the thread's CPU time holds all of it
    os.environ.setdefault("EMBEDDING_THREADS", "1")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from benchmarks.common import percentile, results_write
    from benchmarks.load import questions_load
    from zolsearch.search.models import PipelineFlag
    from zolsearch.search.services import pipeline_flag_set

    warm_up = args.warm_up
    questions = questions_load(extend_to=0)[: warm_up + args.questions]  # the golden sets' texts only
    if len(questions) <= warm_up:
        raise SystemExit(
            f"only {len(questions)} questions in the golden sets: none left after {warm_up} warm-up requests"
        )
    row = PipelineFlag.objects.filter(name="semantic_cache_enabled", model_key="").first()
    before = row.value if row is not None else None
    pipeline_flag_set(name="semantic_cache_enabled", value=False, changed_by="benchmark", reason="request_cost")
    client = Client(REMOTE_ADDR="127.0.0.1")
    wall: list[float] = []
    cpu: list[float] = []
    statements: list[int] = []
    sql_ms: dict[str, list[float]] = defaultdict(list)
    try:
        for i, item in enumerate(questions):
            body = json.dumps({"question": item["question"], "language": item["language"]})
            t0, c0 = time.perf_counter(), time.thread_time()
            with CaptureQueriesContext(connection) as captured:
                response = client.post("/api/v1/search", data=body, content_type="application/json")
            elapsed, used = (time.perf_counter() - t0) * 1000, (time.thread_time() - c0) * 1000
            if response.status_code != 200:
                raise SystemExit(f"HTTP {response.status_code} for {item['question']!r}: {response.content[:200]!r}")
            if i < warm_up:
                continue
            wall.append(elapsed)
            cpu.append(used)
            statements.append(len(captured.captured_queries))
            for query in captured.captured_queries:
                sql_ms[statement_shape(query["sql"])].append(float(query["time"]) * 1000)
    finally:
        pipeline_flag_set(
            name="semantic_cache_enabled", value=before, changed_by="benchmark", reason="request_cost done"
        )
    n = len(wall)
    per_shape = sorted(
        (
            {"statement": k, "per_request": round(len(v) / n, 2), "ms_per_request": round(sum(v) / n, 3)}
            for k, v in sql_ms.items()
        ),
        key=lambda r: -float(r["ms_per_request"]),
    )
    summary = {
        "requests": n,
        "wall_ms": {
            "p50": round(percentile(wall, 50), 2),
            "p95": round(percentile(wall, 95), 2),
            "mean": round(sum(wall) / n, 2),
        },
        "thread_cpu_ms": {
            "p50": round(percentile(cpu, 50), 2),
            "p95": round(percentile(cpu, 95), 2),
            "mean": round(sum(cpu) / n, 2),
        },
        "sql_ms_per_request": round(sum(sum(v) for v in sql_ms.values()) / n, 2),
        "statements_per_request": round(sum(statements) / n, 1),
    }
    print(json.dumps(summary, indent=1))
    for shape in per_shape[:15]:
        print(f"{shape['ms_per_request']:7.3f} ms  {shape['per_request']:5.2f}x  {shape['statement']}")
    results_write("request_cost", {**summary, "statements": per_shape})


if __name__ == "__main__":
    main()
