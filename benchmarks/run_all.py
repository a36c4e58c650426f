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
    ("benchmarks.retrieval_quality", ["--set", "data/golden/medquad-heldout.jsonl", "--quiet"], BENCH_DB),
    ("benchmarks.retrieval_quality", ["--set", "data/golden/medquad-heldout-noisy.jsonl", "--quiet"], BENCH_DB),
    ("benchmarks.ablation", [], {}),
):
    print(f"== {module} {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, "-m", module, *args], check=True, env={**os.environ, **env})
