"""Run-level summary: means with bootstrap 95 % CIs, pass rates, refusal accuracy, latency
percentiles, and the breakdown per category and per language. Pure: plain dicts in and out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluation.metrics.stats import bootstrap_ci, latency_summary

SCORE_METRICS = (
    "entity_recall",
    "ndcg_at_5",
    "ndcg_trec_at_5",
    "mrr",
    "precision_at_5",
    "recall_at_5",
    "faithfulness",
    "relevancy",
)
# refused: explicit refusals (guard, red flag); fallback: gate rejections and no results;
# red_flag_correct: questions tagged red_flag:<category> routed to that category (none: not routed);
# cited_expected: answered questions whose answer cites an expected page (answers.answer_cites_expected).
# reviewed_correct: questions whose draft a reviewer labelled, served when labelled good and not
# served when labelled wrong (evaluation.draft_labels.reviewed_correct; a question refused before
# a draft was written, by CRAG or a guard, served nothing: right when its labels all say wrong,
# wrong when they all say good; an error is undefined).
RATE_METRICS = (
    "passed",
    "passed_er",
    "refusal_correct",
    "refused",
    "fallback",
    "red_flag_correct",
    "cited_expected",
    "reviewed_correct",
)


def _mean_ci(values: Sequence[float], *, samples: int, seed: int) -> dict[str, float | int] | None:
    ci = bootstrap_ci(values, samples=samples, seed=seed)
    if ci is None:
        return None
    mean, low, high = ci
    return {"mean": round(mean, 4), "low": round(low, 4), "high": round(high, 4), "n": len(values)}


def _group(rows: Sequence[Mapping[str, Any]], *, samples: int, seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for name in (*SCORE_METRICS, *RATE_METRICS):
        values = [float(r[name]) for r in rows if r.get(name) is not None]
        out[name] = _mean_ci(values, samples=samples, seed=seed)
    out["errors"] = sum(1 for r in rows if r.get("error"))
    return out


def run_summary(rows: Sequence[Mapping[str, Any]], *, samples: int = 2000, seed: int = 20261122) -> dict[str, Any]:
    """Summarise one run's per-question ``rows``.

    Each row: ``category``, ``language``, the metrics of :data:`SCORE_METRICS` (float in [0, 1]
    or ``None`` when undefined for that question), the booleans of :data:`RATE_METRICS`,
    ``latency_ms`` (float ms) and ``error`` (str). Means are over the questions where a metric
    is defined; each mean has a percentile-bootstrap 95 % CI (``samples`` resamples, fixed
    ``seed``: the same rows always give the same CI). Pass rates and refusal accuracy are means
    of 0/1 with their CIs. Returns ``{"overall", "per_category", "per_language", "latency_ms",
    "bootstrap"}``.
    """
    by_category: dict[str, list[Mapping[str, Any]]] = {}
    by_language: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_category.setdefault(str(row.get("category") or "general"), []).append(row)
        by_language.setdefault(str(row.get("language") or "?"), []).append(row)
    latencies = [float(r["latency_ms"]) for r in rows if r.get("latency_ms") is not None]
    return {
        "overall": _group(rows, samples=samples, seed=seed),
        "per_category": {k: _group(v, samples=samples, seed=seed) for k, v in sorted(by_category.items())},
        "per_language": {k: _group(v, samples=samples, seed=seed) for k, v in sorted(by_language.items())},
        "latency_ms": latency_summary(latencies),
        "bootstrap": {"samples": samples, "seed": seed, "confidence": 0.95, "method": "percentile"},
    }


def metric_mean(summary: Mapping[str, Any], name: str) -> float | None:
    """The overall mean of ``name`` in a :func:`run_summary` result, or ``None``."""
    value = (summary.get("overall") or {}).get(name)
    return float(value["mean"]) if value else None
