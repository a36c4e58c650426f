"""``make bench``: every benchmark in turn; results in docs/bench-results/*.json."""

from __future__ import annotations

import subprocess
import sys

for module in (
    "benchmarks.search_latency",
    "benchmarks.snomed_national",
    "benchmarks.model_choice",
    "benchmarks.judging_overhead",
    "benchmarks.judge_agreement",
    "benchmarks.safety",
):
    print(f"== {module}", flush=True)
    subprocess.run([sys.executable, "-m", module], check=True)
