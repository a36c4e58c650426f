"""Statistics for evaluation runs: bootstrap confidence intervals, percentiles and latency
summaries, and McNemar's test for comparing two runs on the same questions.

No SciPy: the binomial and chi-square tails McNemar needs are exact closed forms
(:func:`math.comb`, :func:`math.erfc`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 20261122
# Below this many discordant pairs the chi-square approximation is not trusted and the exact
# binomial test is used: the common rule of thumb, not a measured threshold.
MCNEMAR_EXACT_BELOW = 25


def _finite_array(values: Sequence[float], *, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    return array


def bootstrap_ci(
    values: Sequence[float],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = 0.95,
) -> tuple[float, float, float] | None:
    """``(mean, low, high)``: the sample mean and its percentile-bootstrap confidence interval.

    ``samples`` resamples of ``len(values)`` draws with replacement, made at once as a
    ``(samples, n)`` index matrix from ``numpy.random.default_rng(seed)`` (memory ≈ 8·samples·n
    bytes); ``low``/``high`` are the (1 − confidence)/2 and (1 + confidence)/2 percentiles
    (linear interpolation) of the resample means (Efron & Tibshirani 1993, *An Introduction to
    the Bootstrap*, §13.3). The same values, samples and seed always give the same interval.

    ``values``: finite floats (e.g. per-question scores in [0, 1]). ``None`` for no values; one
    value ``v`` gives ``(v, v, v)``. Raises ``ValueError`` for non-finite values, ``samples < 1``
    or ``confidence`` outside (0, 1).
    """
    if samples < 1:
        raise ValueError(f"samples must be ≥ 1, got {samples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    array = _finite_array(values, name="values")
    if array.size == 0:
        return None
    mean = float(array.mean())
    if array.size == 1:
        return mean, mean, mean
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, array.size, size=(samples, array.size))
    means = array[indices].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return mean, float(low), float(high)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of ``values``, q in [0, 100], by linear interpolation between
    closest ranks (NumPy's default ``linear`` method, Hyndman & Fan 1996 type 7).

    ``None`` for no values. Raises ``ValueError`` for ``q`` outside [0, 100] or non-finite values.
    """
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must be in [0, 100], got {q}")
    array = _finite_array(values, name="values")
    if array.size == 0:
        return None
    return float(np.percentile(array, q, method="linear"))


def latency_summary(values_ms: Sequence[float | None]) -> dict[str, float | int | None]:
    """``{"p50", "p95", "mean", "n"}`` of latencies in ms; ``None`` entries (not measured) are
    left out and ``n`` counts the rest. With no measured latency: ``n`` 0 and the rest ``None``.
    Percentiles as :func:`percentile`. Raises ``ValueError`` for non-finite values."""
    measured = [value for value in values_ms if value is not None]
    if not measured:
        return {"p50": None, "p95": None, "mean": None, "n": 0}
    array = _finite_array(measured, name="values_ms")
    return {
        "p50": percentile(measured, 50),
        "p95": percentile(measured, 95),
        "mean": float(array.mean()),
        "n": int(array.size),
    }


def mcnemar(*, b: int, c: int) -> dict[str, float | int | str]:
    """McNemar's test of two systems on the same questions (McNemar 1947, Psychometrika 12(2)).

    ``b``: questions only the first system passed; ``c``: only the second (the discordant
    pairs; concordant ones carry no information). Two-sided; under the null both kinds of
    disagreement are equally likely.

    - ``b + c < 25`` (:data:`MCNEMAR_EXACT_BELOW`): exact binomial test, ``method``
      ``"exact_binomial"``, ``statistic`` = min(b, c), p = min(1, 2·Σ_{i ≤ min(b,c)} C(n, i) / 2ⁿ)
      with n = b + c; p = 1 for n = 0.
    - otherwise: chi-square with Edwards' continuity correction, ``method`` ``"chi2_cc"``,
      ``statistic`` x = max(|b − c| − 1, 0)² / (b + c), p = erfc(√(x / 2)), which is the exact
      upper tail of chi-square with 1 degree of freedom (x = Z², P(|Z| > √x) = erfc(√(x/2))).
      The max(·, 0) keeps b = c at x = 0 (R's ``mcnemar.test`` gives 1/(b + c) there).

    Returns ``{"b", "c", "statistic", "p_value", "method"}``; p in [0, 1]. Raises ``ValueError``
    for a negative count.
    """
    if b < 0 or c < 0:
        raise ValueError(f"counts must be ≥ 0, got b={b}, c={c}")
    n = b + c
    if n < MCNEMAR_EXACT_BELOW:
        smaller = min(b, c)
        tail = sum(math.comb(n, i) for i in range(smaller + 1))
        p_value = min(1.0, 2.0 * tail / 2**n)
        return {"b": b, "c": c, "statistic": float(smaller), "p_value": p_value, "method": "exact_binomial"}
    statistic = max(abs(b - c) - 1, 0) ** 2 / n
    p_value = math.erfc(math.sqrt(statistic / 2.0))
    return {"b": b, "c": c, "statistic": statistic, "p_value": p_value, "method": "chi2_cc"}
