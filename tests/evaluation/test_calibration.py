"""Threshold calibration and agreement on hand-computed cohorts."""

from __future__ import annotations

import pytest

from evaluation.calibration import (
    SWEEP,
    cohen_kappa,
    operating_point_with_max_false_refusal,
    roc_auc,
    threshold_sweep,
    youden_optimum,
)

POSITIVE = [0.9, 0.8, 0.7, 0.4]  # should pass
NEGATIVE = [0.6, 0.3, 0.2, 0.1]  # should be refused


def test_the_sweep_runs_from_0_20_to_0_91_in_hundredths() -> None:
    assert SWEEP[0] == 0.20 and SWEEP[-1] == 0.91 and len(SWEEP) == 72


def test_tpr_fpr_and_j_at_given_thresholds() -> None:
    at = {p.threshold: p for p in threshold_sweep(positive=POSITIVE, negative=NEGATIVE, thresholds=[0.5, 0.65])}
    assert (at[0.5].tpr, at[0.5].fpr) == (0.75, 0.25) and at[0.5].j == pytest.approx(0.5)
    assert (at[0.65].tpr, at[0.65].fpr) == (0.75, 0.0) and at[0.65].j == pytest.approx(0.75)


def test_youden_optimum_is_the_highest_threshold_with_the_largest_j() -> None:
    """J = 0.75 at every threshold in (0.6, 0.7]; among the observed scores that is 0.7."""
    best = youden_optimum(positive=POSITIVE, negative=NEGATIVE)
    assert best.threshold == pytest.approx(0.7) and best.j == pytest.approx(0.75)
    assert (best.tpr, best.fpr) == (0.75, 0.0)


def test_a_maximum_false_refusal_rate_moves_the_operating_point() -> None:
    """Refusing at most 0 % of good answers needs a threshold ≤ 0.4 (FPR 0.25 at 0.31–0.40)."""
    point = operating_point_with_max_false_refusal(positive=POSITIVE, negative=NEGATIVE, max_false_refusal=0.0)
    assert point is not None and point.tpr == 1.0 and point.fpr == 0.25 and point.threshold == pytest.approx(0.40)
    assert operating_point_with_max_false_refusal(positive=[0.1], negative=[0.0], max_false_refusal=0.0) is None


def test_roc_auc_counts_ordered_pairs() -> None:
    """15 of the 16 (positive, negative) pairs are ordered (0.4 < 0.6 is the exception): 15/16."""
    assert roc_auc(positive=POSITIVE, negative=NEGATIVE) == pytest.approx(15 / 16)
    with pytest.raises(ValueError):
        roc_auc(positive=[], negative=[0.1])


def test_cohen_kappa_on_a_two_by_two_table() -> None:
    """Agreement 3/4; chance agreement 0.5·0.75 + 0.5·0.25 = 0.5; kappa (0.75 − 0.5)/(1 − 0.5)."""
    assert cohen_kappa([1, 1, 0, 0], [1, 1, 1, 0]) == pytest.approx(0.5)
    assert cohen_kappa([1, 1], [1, 1]) is None
