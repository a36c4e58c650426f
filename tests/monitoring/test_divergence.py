"""The drift arithmetic against values worked out by hand (formulas in
``evaluation.monitoring.divergence``)."""

from __future__ import annotations

import math

import pytest

from evaluation.monitoring.divergence import (
    GATE_SCORE_EDGES,
    JUDGE_SCORE_EDGES,
    g_test_p_value,
    histogram_counts,
    kl_divergence,
    rate_rise,
    rate_smoothed,
    smoothed_distribution,
)


def test_bins_are_the_prometheus_buckets_with_closed_ends() -> None:
    assert GATE_SCORE_EDGES[0] == -1.0 and GATE_SCORE_EDGES[-1] == 1.0 and len(GATE_SCORE_EDGES) == 15
    assert JUDGE_SCORE_EDGES[0] == 0.0 and JUDGE_SCORE_EDGES[-1] == 1.0 and len(JUDGE_SCORE_EDGES) == 11
    # below the range, the last edge itself, above the range: clipped into the end bins
    counts = histogram_counts([-2.0, 0.0, 0.72, 0.95, 1.0, 1.5], edges=GATE_SCORE_EDGES)
    assert counts[0] == 1  # -2.0 -> [-1, -0.5)
    assert counts[GATE_SCORE_EDGES.index(0.0)] == 1  # [0, 0.25)
    assert counts[GATE_SCORE_EDGES.index(0.7)] == 1  # 0.72 in [0.7, 0.75)
    assert counts[-1] == 3  # 0.95, 1.0 and 1.5 in [0.95, 1.0]
    assert sum(counts) == 6


def test_smoothing_is_jeffreys_perks() -> None:
    p = smoothed_distribution([3, 0, 1])  # (n_i + 1/2) / (4 + 3/2)
    assert p.tolist() == pytest.approx([3.5 / 5.5, 0.5 / 5.5, 1.5 / 5.5])
    with pytest.raises(ValueError):
        smoothed_distribution([])
    with pytest.raises(ValueError):
        smoothed_distribution([1, -1])


def test_kl_divergence_of_two_opposite_single_observations() -> None:
    """P = (1, 0) (empirical), Q = (1/4, 3/4) (the baseline (0, 1) smoothed): D = 1·ln(1/(1/4))
    = ln 4 nats; G = 2·1·D = ln 16 on 1 degree of freedom: p = erfc(√(G/2)) = erfc(√ln 4)."""
    divergence = kl_divergence([1, 0], [0, 1])
    assert divergence.kl == pytest.approx(math.log(4))
    assert divergence.p_value == pytest.approx(math.erfc(math.sqrt(math.log(4))))
    assert kl_divergence([0, 0], [0, 1]).kl == 0.0 and kl_divergence([0, 0], [0, 1]).p_value == 1.0


def test_two_samples_of_one_distribution_diverge_little_whatever_their_sizes() -> None:
    """Nearly the same shares in a window of 60 and a baseline of 210 values over the 14 gate
    bins: what separates them is mostly the baseline's smoothing mass on its 10 empty bins
    (10 · ½ / 217 = 2.3 %, about 0.023 nats), far below the 0.1 threshold and not significant."""
    baseline = [0] * 10 + [60, 50, 50, 50]
    current = [0] * 10 + [18, 14, 14, 14]
    divergence = kl_divergence(current, baseline)
    assert 0.02 < divergence.kl < 0.03
    assert divergence.p_value > 0.99
    with pytest.raises(ValueError, match="differ in bins"):
        kl_divergence([1, 2], [1, 2, 3])


def test_g_test_grows_more_certain_with_more_samples_of_the_same_divergence() -> None:
    assert g_test_p_value(kl=0.1, n=0, bins=10) == 1.0
    assert g_test_p_value(kl=0.1, n=10, bins=10) > 0.5 > g_test_p_value(kl=0.1, n=100, bins=10) > 1e-3
    assert g_test_p_value(kl=0.1, n=1000, bins=10) < 1e-20


def test_rate_rise_with_a_zero_baseline_is_finite_and_tested_exactly() -> None:
    """0 of 9 refused before, 3 of 9 now: shares 0.5/10 and 3.5/10, a rise of 6 (600 %); the
    one-sided binomial p-value P(X ≥ 3 | n = 9, p = 0.05) summed by hand."""
    assert rate_smoothed(count=0, total=9) == pytest.approx(0.05)
    rise = rate_rise(count=3, total=9, baseline_count=0, baseline_total=9)
    assert (rise.current, rise.baseline, rise.rise) == pytest.approx((0.35, 0.05, 6.0))
    expected = 1 - sum(math.comb(9, k) * 0.05**k * 0.95 ** (9 - k) for k in range(3))
    assert rise.p_value == pytest.approx(expected)
    assert rate_rise(count=0, total=0, baseline_count=1, baseline_total=10).p_value == 1.0
    with pytest.raises(ValueError):
        rate_smoothed(count=5, total=4)
