"""Calibrate the fast gate's threshold per embedding model and language on dev golden sets.

Cohorts (seed 000's method, per language of the question):

- **related** (should pass): the draft the pipeline writes for a dev question (safety stages,
  CRAG and the gate off) when one of the pages it cites is relevant (url grade ≥ 0.5), scored as
  the gate scores it: ``0.7·cos(answer, context) + 0.3·cos(question, answer)`` with the stored
  vectors of the cited chunks as context (:func:`zolsearch.search.gate.gate_score`);
- **unrelated** (should be refused): the same drafts with their context, put to another question
  of the same language (rotated by one within the language: an off-topic answer).

The threshold is the lowest-FPR point of the 0.20–0.91 sweep whose false refusals of the related
cohort are at most ``max_false_refusal`` (``evaluation.calibration``); Youden's J optimum, ROC AUC
and cohort percentiles are stored beside it as evidence. The result is the JSON the pipeline reads
(``GATE_CALIBRATION_PATH``): ``{model key: {"thresholds": {language: t}, "evidence": {…}}}``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from evaluation.calibration import operating_point_with_max_false_refusal, roc_auc, youden_optimum
from evaluation.golden.io import GoldenItem
from evaluation.metrics.retrieval import RELEVANT_GRADE, url_grade
from zolsearch.search.config import MEASUREMENT_OVERRIDES, PipelineConfig
from zolsearch.search.gate import gate_score
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.stages.quality_gate import draft_gate_vectors

DRAFT_ONLY = {**MEASUREMENT_OVERRIDES, "crag_enabled": False}
MIN_COHORT = 20


def gate_cohorts(*, items: Sequence[GoldenItem], config: PipelineConfig) -> dict[str, dict[str, list[float]]]:
    """``{language: {"related": [scores], "unrelated": [scores]}}`` (see the module docstring)."""
    drafting = config.with_overrides(**DRAFT_ONLY)
    drafts: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = defaultdict(list)
    related: dict[str, list[float]] = defaultdict(list)
    for item in items:
        if not item.expected_urls:
            continue
        state = pipeline_run(request=SearchRequest(question=item.question, language=item.language), config=drafting)
        if state.draft is None or state.query_vector is None or not state.draft.cited_chunk_ids:
            continue
        urls = [state.chunks[i].document.url for i in state.draft.cited_chunk_ids if i in state.chunks]
        if not any(url_grade(u, item.expected_urls) >= RELEVANT_GRADE for u in urls):
            continue
        answer, context = draft_gate_vectors(state)
        related[item.language].append(
            gate_score(answer=answer, context=context, question=state.query_vector, threshold=0.0).score
        )
        drafts[item.language].append((state.query_vector, answer, context))
    cohorts: dict[str, dict[str, list[float]]] = {}
    for language, rows in drafts.items():
        unrelated = (
            [
                gate_score(
                    answer=rows[(n + 1) % len(rows)][1], context=rows[(n + 1) % len(rows)][2], question=q, threshold=0.0
                ).score
                for n, (q, _, _) in enumerate(rows)
            ]
            if len(rows) > 1
            else []
        )
        cohorts[language] = {"related": related[language], "unrelated": unrelated}
    return cohorts


def gate_calibrate(
    *, cohorts: dict[str, dict[str, list[float]]], model_key: str, sets: Sequence[str], max_false_refusal: float
) -> dict[str, Any]:
    """Thresholds per language with at least :data:`MIN_COHORT` related drafts, and the evidence
    of each (also for languages left out). Raises ``ValueError`` when no language qualifies."""
    thresholds: dict[str, float] = {}
    evidence: dict[str, Any] = {}
    for language, cohort in sorted(cohorts.items()):
        pos, neg = cohort["related"], cohort["unrelated"]
        if len(pos) < MIN_COHORT or len(neg) < MIN_COHORT:
            evidence[language] = {
                "related": len(pos),
                "unrelated": len(neg),
                "threshold": None,
                "why": "cohort too small",
            }
            continue
        chosen = operating_point_with_max_false_refusal(positive=pos, negative=neg, max_false_refusal=max_false_refusal)
        youden = youden_optimum(positive=pos, negative=neg)
        point = chosen or youden
        thresholds[language] = round(point.threshold, 4)
        evidence[language] = {
            "related": len(pos),
            "unrelated": len(neg),
            "threshold": round(point.threshold, 4),
            "rule": f"lowest FPR with false refusals ≤ {max_false_refusal:.0%}"
            if chosen
            else "Youden's J (no sweep point met the cap)",
            "false_refusal": round(1 - point.tpr, 4),
            "unrelated_passed": round(point.fpr, 4),
            "youden": {
                "threshold": round(youden.threshold, 4),
                "tpr": round(youden.tpr, 4),
                "fpr": round(youden.fpr, 4),
            },
            "roc_auc": round(roc_auc(positive=pos, negative=neg), 4),
            "related_percentiles": {str(p): round(float(np.percentile(pos, p)), 4) for p in (5, 10, 25, 50)},
            "unrelated_percentiles": {str(p): round(float(np.percentile(neg, p)), 4) for p in (50, 75, 90, 95)},
        }
    if not thresholds:
        raise ValueError(f"no language has {MIN_COHORT} related and unrelated drafts: {evidence}")
    return {
        model_key: {
            "thresholds": thresholds,
            "evidence": {
                "calibrated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                "sets": list(sets),
                "max_false_refusal": max_false_refusal,
                "method": "related: own drafts citing a relevant page; unrelated: the same drafts put to another "
                "question of the same language (rotated by one); gate score as served",
                "languages": evidence,
            },
        }
    }
