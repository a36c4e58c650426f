"""``make bench``: every benchmark in turn; results in docs/bench-results/*.json.

The retrieval-quality runs use the benchmark database that ``search_latency`` fills with the
full MedQuAD (``BENCH_PGDATA``, default ``.data/bench/postgres``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
BENCH_DB = {"EMBEDDED_PGDATA": str(BASE_DIR / os.environ.get("BENCH_PGDATA", ".data/bench/postgres"))}

for module, args, env in (
    ("benchmarks.search_latency", [], {}),
    ("benchmarks.snomed_national", [], {}),
    ("benchmarks.model_choice", [], {}),
    ("benchmarks.judging_overhead", [], {}),
    ("benchmarks.judge_agreement", [], {}),
    ("benchmarks.safety", [], {}),
    ("benchmarks.understanding", [], {}),
    ("benchmarks.encoder_threads", [], {}),
    ("benchmarks.retrieval_quality", ["--set", "data/golden/medquad-heldout.jsonl", "--quiet"], BENCH_DB),
    ("benchmarks.retrieval_quality", ["--set", "data/golden/medquad-heldout-noisy.jsonl", "--quiet"], BENCH_DB),
    ("benchmarks.request_cost", [], BENCH_DB),
    ("benchmarks.ablation", [], {}),
    # HTTP under load against `manage.py serve`, its floor, BM25 after each ingestion run, a
    # 5-minute soak (about 15 minutes; BENCH_LOAD_CORPUS=full adds the whole MedQuAD, ~25 min more).
    ("benchmarks.load", ["--fresh", "--soak", "300", "--corpus", os.environ.get("BENCH_LOAD_CORPUS", "default")], {}),
):
    print(f"== {module} {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, "-m", module, *args], check=True, env={**os.environ, **env})
