"""Statistics for evaluation runs: bootstrap confidence intervals (``scipy.stats.bootstrap``),
percentiles and latency summaries, McNemar's test for two runs and Cochran's Q for several
(``statsmodels``), on the same questions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats
from scipy.stats import chi2
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

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

    ``scipy.stats.bootstrap`` with ``samples`` resamples, ``method="percentile"`` and
    ``numpy.random.default_rng(seed)``: ``low``/``high`` are the (1 − confidence)/2 and
    (1 + confidence)/2 percentiles of the resample means (Efron & Tibshirani 1993, *An
    Introduction to the Bootstrap*, §13.3). The same values, samples and seed always give the
    same interval.

    ``values``: finite floats (e.g. per-question scores in [0, 1]). ``None`` for no values; one
    value, or values all equal to ``v``, give ``(v, v, v)`` (a degenerate distribution, for which
    SciPy refuses an interval). Raises ``ValueError`` for non-finite values, ``samples < 1``
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
    if np.all(array == array[0]):
        return mean, mean, mean  # every resample has the same mean
    result = stats.bootstrap(
        (array,),
        np.mean,
        n_resamples=samples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
        vectorized=True,
    )
    return mean, float(result.confidence_interval.low), float(result.confidence_interval.high)


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

    - ``b + c < 25`` (:data:`MCNEMAR_EXACT_BELOW`): exact binomial test (statsmodels'
      ``mcnemar(exact=True)``), ``method`` ``"exact_binomial"``, ``statistic`` = min(b, c),
      p = min(1, 2·Σ_{i ≤ min(b,c)} C(n, i) / 2ⁿ) with n = b + c; p = 1 for n = 0.
    - otherwise: chi-square with Edwards' continuity correction, ``method`` ``"chi2_cc"``,
      ``statistic`` x = max(|b − c| − 1, 0)² / (b + c), p the upper tail of chi-square with 1
      degree of freedom (``scipy.stats.chi2.sf``).
      The max(·, 0) keeps b = c at x = 0 (R's ``mcnemar.test`` gives 1/(b + c) there).

    Returns ``{"b", "c", "statistic", "p_value", "method"}``; p in [0, 1]. Raises ``ValueError``
    for a negative count.
    """
    if b < 0 or c < 0:
        raise ValueError(f"counts must be ≥ 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return {"b": b, "c": c, "statistic": 0.0, "p_value": 1.0, "method": "exact_binomial"}
    table = [[0, b], [c, 0]]
    exact = n < MCNEMAR_EXACT_BELOW
    result = sm_mcnemar(table, exact=exact, correction=True)
    if exact:
        return {
            "b": b,
            "c": c,
            "statistic": float(min(b, c)),
            "p_value": float(result.pvalue),
            "method": "exact_binomial",
        }
    statistic = max(abs(b - c) - 1, 0) ** 2 / n
    p_value = float(chi2.sf(statistic, df=1))
    return {"b": b, "c": c, "statistic": statistic, "p_value": p_value, "method": "chi2_cc"}


def cochrans_q(outcomes: Sequence[Sequence[bool]]) -> dict[str, float | int]:
    """Cochran's Q test that k ≥ 2 configurations pass the same share of the same questions
    (Cochran 1950, Biometrika 37(3/4)), through ``statsmodels.stats.contingency_tables.cochrans_q``.

    ``outcomes``: one row per question, one column per configuration, pass = True. Returns
    ``{"statistic", "p_value", "df", "n"}`` (Q is chi-square with k − 1 degrees of freedom under
    the null); with no question or every row alike (no information), statistic 0 and p 1.
    Raises ``ValueError`` for fewer than 2 configurations or ragged rows.
    """
    matrix = np.asarray(outcomes, dtype=np.int64)
    if matrix.ndim != 2 or matrix.shape[1] < 2:
        raise ValueError(f"need a (questions × configurations ≥ 2) table, got shape {matrix.shape}")
    k = int(matrix.shape[1])
    informative = matrix[(matrix.sum(axis=1) > 0) & (matrix.sum(axis=1) < k)]
    if informative.shape[0] == 0:
        return {"statistic": 0.0, "p_value": 1.0, "df": k - 1, "n": int(matrix.shape[0])}
    result = sm_cochrans_q(informative)
    return {
        "statistic": float(result.statistic),
        "p_value": float(result.pvalue),
        "df": k - 1,
        "n": int(matrix.shape[0]),
    }
