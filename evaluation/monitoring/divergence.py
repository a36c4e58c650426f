"""The arithmetic of drift: smoothed histograms over fixed bins, their KL divergence, and the
relative rise of an outcome's rate, each with a significance test. Pure functions on plain
numbers (no database), so they are tested on their own.

Sources:

- KL divergence ``D(P‖Q) = Σ_i p_i · ln(p_i / q_i)`` in nats (Kullback & Leibler 1951, "On
  information and sufficiency", Ann. Math. Statist. 22(1)); computed by
  ``scipy.stats.entropy(p, q)``. P is the current window's empirical distribution
  ``p_i = n_i / n`` (an empty bin adds 0·ln 0 = 0), Q the baseline's: "how surprising is today
  if the last week is the model".
- Smoothing of Q only: additive (Lidstone) smoothing with pseudo-count ½ per bin, the
  Jeffreys–Perks law (Manning & Schütze 1999, *Foundations of Statistical NLP*, §6.2.2; the
  Krichevsky–Trofimov estimator): ``q_i = (m_i + ½) / (m + ½·K)`` over K bins. Without it one
  empty baseline bin makes the divergence infinite. P is not smoothed, so that ``2·n·D`` is
  the G statistic below (smoothing both windows alike would also give the smaller window's
  empty bins more mass than the larger one's: 0.038 instead of 0.024 nats between 60 and 210
  values of one distribution over the 14 gate bins).
- Significance: ``G = 2·n·D(P̂‖Q)`` is the likelihood-ratio (G) statistic of the current counts
  against the baseline distribution, asymptotically χ² with K − 1 degrees of freedom (Wilks
  1938; Sokal & Rohlf, *Biometry*, the G-test). Its expected value under no drift, about
  (K − 1) / (2n) nats, is why a small day's KL is noisy: an alert needs both the threshold and
  significance.
- Rates: the share of answers with an outcome, Jeffreys-smoothed ``(k + ½) / (n + 1)`` (the
  posterior mean under the Jeffreys prior Beta(½, ½)) so that a zero baseline does not divide
  by zero; the rise is ``(current − baseline) / baseline``; significance is the one-sided exact
  binomial test of the current count against the baseline rate (``scipy.stats.binomtest``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from core.observability import GATE_SCORE_BUCKETS, JUDGE_SCORE_BUCKETS

PSEUDO_COUNT = 0.5  # Jeffreys–Perks (module docstring)

# Fixed bin edges: the Prometheus histograms' bucket bounds (core.observability), so the daily
# check and the dashboards bin scores the same way. Gate scores are cosines in [-1, 1] (14 bins,
# finer where the thresholds lie, 0.5-0.9); judge scores are in [0, 1] (10 bins of 0.1).
GATE_SCORE_EDGES: tuple[float, ...] = (-1.0, *GATE_SCORE_BUCKETS)
JUDGE_SCORE_EDGES: tuple[float, ...] = JUDGE_SCORE_BUCKETS


def histogram_counts(values: Sequence[float], *, edges: Sequence[float]) -> list[int]:
    """Counts of ``values`` in the K = ``len(edges) − 1`` bins ``[e_i, e_{i+1})`` (the last bin
    is closed). Values outside ``[edges[0], edges[-1]]`` are clipped into the end bins."""
    bounds = np.asarray(edges, dtype=float)
    clipped = np.clip(np.asarray(values, dtype=float), bounds[0], bounds[-1])
    counts, _ = np.histogram(clipped, bins=bounds)
    return [int(c) for c in counts]


def smoothed_distribution(counts: Sequence[int], *, pseudo_count: float = PSEUDO_COUNT) -> np.ndarray:
    """``(n_i + α) / (n + α·K)``: a probability vector (shape (K,), float64, sums to 1, every
    entry > 0 for α > 0). Raises ``ValueError`` for no bins or a negative count."""
    array = np.asarray(counts, dtype=float)
    if array.size == 0 or (array < 0).any():
        raise ValueError("counts must be a non-empty sequence of non-negative numbers")
    return (array + pseudo_count) / (array.sum() + pseudo_count * array.size)


@dataclass(frozen=True)
class Divergence:
    """``kl``: D(current‖baseline) in nats, ≥ 0. ``p_value``: the G-test's, in [0, 1]."""

    kl: float
    p_value: float


def kl_divergence(current: Sequence[int], baseline: Sequence[int]) -> Divergence:
    """KL divergence of the ``current`` histogram's empirical distribution from the smoothed
    ``baseline`` one (same bins; module docstring) and the G-test's p-value. An empty
    ``current`` has divergence 0 and p-value 1. Raises ``ValueError`` when the histograms differ
    in length or a count is negative."""
    if len(current) != len(baseline):
        raise ValueError(f"histograms differ in bins: {len(current)} and {len(baseline)}")
    q = smoothed_distribution(baseline)
    p = np.asarray(current, dtype=float)
    if (p < 0).any():
        raise ValueError("counts must be non-negative")
    if p.sum() == 0:
        return Divergence(kl=0.0, p_value=1.0)
    kl = float(stats.entropy(p / p.sum(), q))
    return Divergence(kl=kl, p_value=g_test_p_value(kl=kl, n=int(sum(current)), bins=len(current)))


def g_test_p_value(*, kl: float, n: int, bins: int) -> float:
    """P(χ²_{bins−1} ≥ 2·n·kl): the chance of a divergence this large from ``n`` samples of the
    baseline distribution itself. 1.0 for no samples or a single bin."""
    if n <= 0 or bins < 2:
        return 1.0
    return float(stats.chi2.sf(2.0 * n * kl, df=bins - 1))


def rate_smoothed(*, count: int, total: int) -> float:
    """Jeffreys-smoothed share ``(count + ½) / (total + 1)``, in (0, 1). Raises ``ValueError``
    when ``count`` is negative or exceeds ``total``."""
    if count < 0 or count > total:
        raise ValueError(f"count {count} outside 0..{total}")
    return (count + 0.5) / (total + 1.0)


@dataclass(frozen=True)
class RateRise:
    """``current`` / ``baseline``: smoothed shares in (0, 1); ``rise``: ``(current − baseline)
    / baseline`` (−1 < rise; 0.2 = 20 % higher); ``p_value``: the one-sided binomial test's."""

    current: float
    baseline: float
    rise: float
    p_value: float


def rate_rise(*, count: int, total: int, baseline_count: int, baseline_total: int) -> RateRise:
    """The rise of an outcome's share from the baseline window to the current one, and whether
    the current count is significantly above what the baseline rate predicts (module
    docstring). Raises ``ValueError`` as :func:`rate_smoothed`."""
    current = rate_smoothed(count=count, total=total)
    baseline = rate_smoothed(count=baseline_count, total=baseline_total)
    p_value = float(stats.binomtest(count, total, baseline, alternative="greater").pvalue) if total else 1.0
    return RateRise(current=current, baseline=baseline, rise=(current - baseline) / baseline, p_value=p_value)
