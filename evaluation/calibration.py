"""Threshold calibration and agreement statistics (one module for benchmarks and, later, the
admin's calibration screen), on scikit-learn.

A score separates a positive cohort (answers that should pass: related, judged good) from a
negative one (should be refused: unrelated, judged bad). A threshold t passes scores ≥ t.
TPR = share of positives passed, FPR = share of negatives passed, Youden's J = TPR − FPR
(Youden 1950, "Index for rating diagnostic tests", Cancer 3(1)).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import cohen_kappa_score, roc_auc_score, roc_curve

# The sweep of issue 12 / seed 000: 0.20 to 0.91 in steps of 0.01.
SWEEP = tuple(round(0.20 + 0.01 * i, 2) for i in range(72))


@dataclass(frozen=True)
class OperatingPoint:
    """One threshold with its TPR, FPR and J (all in [0, 1], J in [−1, 1])."""

    threshold: float
    tpr: float
    fpr: float

    @property
    def j(self) -> float:
        return self.tpr - self.fpr


def _cohorts(positive: Sequence[float], negative: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    pos, neg = np.asarray(positive, dtype=np.float64), np.asarray(negative, dtype=np.float64)
    if pos.size == 0 or neg.size == 0:
        raise ValueError("both cohorts need at least one score")
    return pos, neg


def threshold_sweep(
    *, positive: Sequence[float], negative: Sequence[float], thresholds: Sequence[float] = SWEEP
) -> list[OperatingPoint]:
    """TPR, FPR and J at each of ``thresholds`` (default :data:`SWEEP`). Raises ``ValueError``
    for an empty cohort."""
    pos, neg = _cohorts(positive, negative)
    return [OperatingPoint(float(t), float((pos >= t).mean()), float((neg >= t).mean())) for t in thresholds]


def youden_optimum(*, positive: Sequence[float], negative: Sequence[float]) -> OperatingPoint:
    """The threshold with the largest J over every observed score (the ROC curve's points,
    ``sklearn.metrics.roc_curve``); ties go to the higher threshold (fewer false passes).
    Raises ``ValueError`` for an empty cohort."""
    pos, neg = _cohorts(positive, negative)
    labels = np.concatenate([np.ones(pos.size), np.zeros(neg.size)])
    fpr, tpr, thresholds = roc_curve(labels, np.concatenate([pos, neg]), drop_intermediate=False)
    finite = np.isfinite(thresholds)
    j = (tpr - fpr)[finite]
    best = int(np.flatnonzero(j == j.max())[0])  # thresholds are decreasing: first = highest
    return OperatingPoint(float(thresholds[finite][best]), float(tpr[finite][best]), float(fpr[finite][best]))


def operating_point_with_max_false_refusal(
    *,
    positive: Sequence[float],
    negative: Sequence[float],
    max_false_refusal: float,
    thresholds: Sequence[float] = SWEEP,
) -> OperatingPoint | None:
    """Among ``thresholds``, the one with the lowest FPR whose false-refusal rate (1 − TPR) is at
    most ``max_false_refusal`` (in [0, 1]); the pure Youden optimum may refuse too many good
    answers (seed 000). ``None`` when no threshold meets it."""
    allowed = [
        p
        for p in threshold_sweep(positive=positive, negative=negative, thresholds=thresholds)
        if 1 - p.tpr <= max_false_refusal
    ]
    return min(allowed, key=lambda p: (p.fpr, -p.threshold)) if allowed else None


def roc_auc(*, positive: Sequence[float], negative: Sequence[float]) -> float:
    """Area under the ROC curve in [0, 1] (``sklearn.metrics.roc_auc_score``): the probability
    that a random positive scores above a random negative. Raises ``ValueError`` for an empty
    cohort."""
    pos, neg = _cohorts(positive, negative)
    labels = np.concatenate([np.ones(pos.size), np.zeros(neg.size)])
    return float(roc_auc_score(labels, np.concatenate([pos, neg])))


def cohen_kappa(labels: Sequence[int], predictions: Sequence[int]) -> float | None:
    """Cohen's kappa of two raters (Cohen 1960, Educational and Psychological Measurement 20(1)),
    ``sklearn.metrics.cohen_kappa_score``, in [−1, 1]; ``None`` when it is undefined (no item,
    or both raters give one label only)."""
    if not labels or len(set(labels) | set(predictions)) < 2:
        return None
    value = float(cohen_kappa_score(list(labels), list(predictions)))
    return None if np.isnan(value) else value
