"""Shared set-up: Django on a separate embedded database (``BENCH_PGDATA``), machine facts,
percentiles, and the dev golden set built from MedQuAD."""

from __future__ import annotations

import json
import os
import platform
import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
MEDQUAD = Path(os.environ.get("MEDQUAD_PATH", BASE_DIR.parent / "shared" / "data" / "medquad"))
RESULTS = BASE_DIR / "docs" / "bench-results"


def django_setup(pgdata_env: str = "BENCH_PGDATA", default: str = ".data/bench/postgres") -> None:
    """Point Django at the benchmark database (never the dev one) and set it up."""
    os.environ["EMBEDDED_PGDATA"] = str(BASE_DIR / os.environ.get(pgdata_env, default))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def machine() -> dict[str, object]:
    """What the numbers were measured on."""
    import numpy as np

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    }


def percentile(values: list[float], q: float) -> float:
    """:func:`evaluation.metrics.stats.percentile` (linear interpolation, ``q`` in [0, 100]),
    NaN for no values (benchmark JSON keeps a number)."""
    from evaluation.metrics.stats import percentile as stats_percentile

    value = stats_percentile(values, q)
    return float("nan") if value is None else value


def results_write(name: str, payload: dict[str, object]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **payload}, indent=2, ensure_ascii=False) + "\n")
    return path


@dataclass(frozen=True)
class DevQuery:
    """One dev-set query: its own QA pair is the single relevant document."""

    qid: str
    text: str
    variant: str  # original | paraphrase_en | paraphrase_nl
    relevant: str  # external_id


# Paraphrase templates per MedQuAD qtype: the golden set builders' (one copy).
from evaluation.golden.builders.medquad import PARAPHRASES  # noqa: E402


def dev_queries(documents: list[tuple[str, str, str, str]], *, n: int, seed: int = 20261122) -> list[DevQuery]:
    """``n`` documents sampled with ``seed`` from ``(external_id, question, qtype, focus)``
    rows → up to three queries each: the original question and the EN/NL paraphrases."""
    rng = random.Random(seed)
    sample = rng.sample(documents, min(n, len(documents)))
    queries = []
    for i, (external_id, question, qtype, focus) in enumerate(sample):
        queries.append(DevQuery(f"d{i}-orig", question, "original", external_id))
        templates = PARAPHRASES.get(qtype)
        if templates and focus:
            queries.append(DevQuery(f"d{i}-en", templates[0].format(f=focus), "paraphrase_en", external_id))
            queries.append(DevQuery(f"d{i}-nl", templates[1].format(f=focus), "paraphrase_nl", external_id))
    return queries


def reciprocal_rank(ranked: list[str], relevant: str, k: int = 10) -> float:
    """1/rank of ``relevant`` within the first ``k`` (0 when absent): MRR@k per query."""
    for rank, doc in enumerate(ranked[:k], start=1):
        if doc == relevant:
            return 1.0 / rank
    return 0.0
