"""Statistics of an ablation study, as pure functions (no database): a confidence interval over
questions and repetitions, the per-question change matrix against the base, majority pass over
repetitions, the spread between repetitions, and factorial main effects and two-factor
interactions with bootstrap intervals.

McNemar's test, Cochran's Q and the ordinary bootstrap live in :mod:`evaluation.metrics.stats`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from evaluation.ablation.design import LETTERS
from evaluation.metrics.stats import BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED

# Bootstrap resamples are drawn in chunks of about this many cells, to bound memory
# (8 bytes a cell) whatever the number of questions and repetitions.
_CHUNK_CELLS = 1 << 21


def _bootstrap_args_check(samples: int, confidence: float) -> None:
    if samples < 1:
        raise ValueError(f"samples must be ≥ 1, got {samples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def _percentile_interval(estimates: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    low, high = np.percentile(estimates, [50.0 * (1.0 - confidence), 50.0 * (1.0 + confidence)], axis=0)
    return low, high


def _matrix(values: ArrayLike, *, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional, got shape {array.shape}")
    if np.any(np.isinf(array)):
        raise ValueError(f"{name} must not hold infinities")
    return array


def _bool_array(values: ArrayLike, *, name: str, ndim: int) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {array.shape}")
    if array.dtype != np.bool_:
        if array.size and not np.all((array == 0) | (array == 1)):
            raise ValueError(f"{name} must hold booleans (or 0/1)")
        array = array.astype(np.bool_)
    return array


def two_stage_bootstrap_ci(
    matrix: ArrayLike,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = 0.95,
) -> tuple[float, float, float] | None:
    """``(mean, low, high)`` of a score over questions and repetitions, with a two-stage
    (cluster) percentile-bootstrap confidence interval.

    ``matrix``: shape (questions, repetitions), floats (or bools), typically in [0, 1] (pass 0/1,
    entity recall, NDCG@5); NaN marks a cell where the metric is undefined. ``mean`` is the mean
    of the per-question means over each question's non-NaN cells; with no NaN this is the mean
    of all cells. Questions whose cells are all NaN are dropped before anything else (they
    neither count nor draw random numbers).

    Each resample draws questions with replacement, then, for each drawn question, as many of
    its non-NaN cells as it has, with replacement (Davison & Hinkley 1997, *Bootstrap Methods and
    their Application*, §3.8, resampling at both stages); ``low``/``high`` are the
    (1 − confidence)/2 and (1 + confidence)/2 percentiles of the ``samples`` resample means
    (linear interpolation). With one repetition the second stage is the identity and this is
    the ordinary bootstrap over questions. Resampling at both stages counts the
    within-question spread somewhat more than once, so the interval errs on the wide side
    (Davison & Hinkley §3.8). Deterministic: ``numpy.random.default_rng(seed)``.

    ``None`` when no question has a defined cell; ``(v, v, v)`` when every defined cell is
    ``v``. Raises ``ValueError`` for a matrix that is not two-dimensional, infinities,
    ``samples < 1`` or ``confidence`` outside (0, 1).
    """
    _bootstrap_args_check(samples, confidence)
    values = _matrix(matrix, name="matrix")
    defined = ~np.isnan(values)
    counts = defined.sum(axis=1)
    keep = counts > 0
    values, defined, counts = values[keep], defined[keep], counts[keep]
    questions, repetitions = values.shape
    if questions == 0:
        return None
    zeroed = np.where(defined, values, 0.0)
    mean = float((zeroed.sum(axis=1) / counts).mean())
    cells = values[defined]
    if np.all(cells == cells[0]):
        value = float(cells[0])
        return value, value, value
    # Defined cells first in each row, so a question's cells are columns 0 .. count − 1.
    packed = np.take_along_axis(zeroed, np.argsort(~defined, axis=1, kind="stable"), axis=1)
    positions = np.arange(repetitions)
    rng = np.random.default_rng(seed)
    estimates = np.empty(samples, dtype=np.float64)
    chunk = max(1, _CHUNK_CELLS // (questions * repetitions))
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        drawn = rng.integers(0, questions, size=(size, questions))
        count = counts[drawn][..., None]
        columns = np.minimum((rng.random((size, questions, repetitions)) * count).astype(np.int64), count - 1)
        cell_values = np.where(positions < count, packed[drawn[..., None], columns], 0.0)
        estimates[start : start + size] = (cell_values.sum(axis=-1) / count[..., 0]).mean(axis=-1)
    low, high = _percentile_interval(estimates, confidence)
    return mean, float(low), float(high)


def change_matrix(base: Sequence[bool], other: Sequence[bool]) -> dict[str, int]:
    """Paired per-question pass/fail of a configuration against the base, on the same questions
    in the same order.

    ``base``, ``other``: one bool (or 0/1) per question. Returns ``{"both_pass", "both_fail",
    "regressions"`` (base passed, other failed), ``"recoveries"`` (base failed, other passed),
    ``"net"`` (recoveries − regressions), ``"questions"}``. ``regressions`` and ``recoveries``
    are McNemar's discordant counts ``b`` and ``c`` (:func:`evaluation.metrics.stats.mcnemar`).
    Raises ``ValueError`` for sequences of different lengths or non-boolean values.
    """
    before = _bool_array(base, name="base", ndim=1)
    after = _bool_array(other, name="other", ndim=1)
    if before.shape != after.shape:
        raise ValueError(f"base and other must cover the same questions, got {before.size} and {after.size}")
    regressions = int(np.sum(before & ~after))
    recoveries = int(np.sum(~before & after))
    return {
        "both_pass": int(np.sum(before & after)),
        "both_fail": int(np.sum(~before & ~after)),
        "regressions": regressions,
        "recoveries": recoveries,
        "net": recoveries - regressions,
        "questions": int(before.size),
    }


def majority_pass(matrix: ArrayLike) -> np.ndarray:
    """Per-question pass over repetitions: shape (questions, repetitions) bools (or 0/1) → shape
    (questions,) bool, True when the question passed in strictly more than half its repetitions.
    A tie (e.g. 1 of 2) fails: a question the configuration passes only half the time is not
    one it can be relied on for. Raises ``ValueError`` for a matrix that is not two-dimensional,
    has no repetition, or holds values other than booleans/0/1.
    """
    passed = _bool_array(matrix, name="matrix", ndim=2)
    if passed.shape[1] == 0:
        raise ValueError("matrix needs at least one repetition")
    return np.asarray(passed.sum(axis=1) * 2 > passed.shape[1])


def repetition_spread(matrix: ArrayLike) -> dict[str, float | int]:
    """How much repetitions of one configuration disagree.

    ``matrix``: shape (questions, repetitions), floats or bools (pass 0/1); NaN cells are left
    out of a repetition's mean. Returns ``{"repetitions"`` (int), ``"min"``, ``"max"`` (of the
    per-repetition means over questions), ``"sd"`` (their sample standard deviation, ddof 1; 0.0
    for one repetition), ``"identical"}`` (bool: every repetition column equals the first
    cell by cell, NaN equal to NaN — an offline configuration should show True). Raises
    ``ValueError`` for a matrix that is not two-dimensional, has no question or no repetition,
    holds infinities, or has a repetition with no defined cell.
    """
    values = _matrix(matrix, name="matrix")
    questions, repetitions = values.shape
    if questions == 0 or repetitions == 0:
        raise ValueError(f"matrix needs at least one question and one repetition, got shape {values.shape}")
    defined = ~np.isnan(values)
    if not np.all(defined.any(axis=0)):
        raise ValueError("every repetition needs at least one defined (non-NaN) cell")
    means = np.where(defined, values, 0.0).sum(axis=0) / defined.sum(axis=0)
    identical = all(np.array_equal(values[:, 0], values[:, column], equal_nan=True) for column in range(repetitions))
    return {
        "repetitions": int(repetitions),
        "min": float(means.min()),
        "max": float(means.max()),
        "sd": float(means.std(ddof=1)) if repetitions > 1 else 0.0,
        "identical": identical,
    }


def factorial_effects(
    coded: Sequence[Mapping[str, int]],
    outcomes: ArrayLike,
    *,
    letters: Mapping[str, str] | None = None,
    aliases: Mapping[str, Sequence[str]] | None = None,
    interactions: bool = True,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """Main effects and two-factor interactions of a two-level design, each with a bootstrap
    confidence interval over questions.

    ``coded``: one mapping per design point, factor name → −1 or +1 (``DesignPoint.coded``), all
    with the same factors; their order (that of the first point) orders the rows. ``outcomes``:
    shape (points, questions) floats, e.g. each question's pass rate over repetitions at that
    point; a question with a NaN at any point is left out (effects compare the same questions
    at every point).

    Effect of X = mean outcome over the points with X = +1 − mean over the points with X = −1;
    interaction XY the same with the column X·Y. For a full or regular fractional two-level
    design (balanced columns) this is Montgomery's effect = contrast / (n 2^(k−1))
    (*Design and Analysis of Experiments*, 8th ed., §6.2–6.3); for other codings (one factor
    at a time) it is the plain difference of means, not an adjusted estimate. In a fractional
    design an effect estimates the sum of its alias chain.

    ``letters``: factor name → letter (``Design.letters``); default A, B, … (no I) in factor
    order. ``aliases``: letters → aliased effects (``Design.aliases``). ``interactions=False``
    gives main effects only. The interval is the percentile bootstrap over questions
    (``samples`` resamples of the question columns with replacement, effects recomputed;
    Efron & Tibshirani 1993, §13.3), deterministic for a given ``seed``; when every question
    shows the same effects the interval is the estimate.

    Returns one row per term, main effects first then interactions (pairs in factor order):
    ``{"term"`` (``"crag_enabled"`` or ``"crag_enabled × filco_enabled"``), ``"letters"``
    (``"A"``, ``"AB"``: the factors' letters concatenated in factor order), ``"effect"``,
    ``"ci_low"``, ``"ci_high"`` (floats, in outcome units), ``"aliases"`` (list of str from
    ``aliases[letters]``, ``[]`` if none)}.

    Raises ``ValueError`` for no points, points with different factors, a coded value other
    than −1/+1, ``outcomes`` not of shape (points, questions), infinities, no question defined
    at every point, a term whose column is all +1 or all −1, ``letters`` lacking a factor,
    ``samples < 1`` or ``confidence`` outside (0, 1).
    """
    _bootstrap_args_check(samples, confidence)
    if not coded:
        raise ValueError("coded needs at least one design point")
    names = list(coded[0])
    for position, point in enumerate(coded):
        if set(point) != set(names):
            raise ValueError(f"design point {position} has factors {sorted(point)}, expected {sorted(names)}")
        odd = {name: value for name, value in point.items() if value not in (-1, 1)}
        if odd:
            raise ValueError(f"design point {position} is not two-level coded (−1/+1): {odd}")
    values = _matrix(outcomes, name="outcomes")
    if values.shape[0] != len(coded):
        raise ValueError(f"outcomes must have one row per design point ({len(coded)}), got shape {values.shape}")
    values = values[:, ~np.isnan(values).any(axis=0)]
    if values.shape[1] == 0:
        raise ValueError("no question has an outcome at every design point")
    if letters is None:
        if len(names) > len(LETTERS):
            raise ValueError(f"at most {len(LETTERS)} factors get default letters, got {len(names)}")
        letters = {name: LETTERS[position] for position, name in enumerate(names)}
    lacking = [name for name in names if name not in letters]
    if lacking:
        raise ValueError(f"letters lacks {', '.join(lacking)}")

    columns = np.array([[point[name] for name in names] for point in coded], dtype=np.int64)
    terms: list[tuple[str, str, np.ndarray]] = [
        (name, letters[name], columns[:, position]) for position, name in enumerate(names)
    ]
    if interactions:
        terms += [
            (f"{names[a]} × {names[b]}", letters[names[a]] + letters[names[b]], columns[:, a] * columns[:, b])
            for a, b in itertools.combinations(range(len(names)), 2)
        ]
    # Each term's contrast weights: 1/n₊ on its + points, −1/n₋ on its − points.
    weights = np.empty((len(coded), len(terms)), dtype=np.float64)
    for index, (term, _, column) in enumerate(terms):
        plus, minus = int(np.sum(column == 1)), int(np.sum(column == -1))
        if not plus or not minus:
            raise ValueError(f"{term} takes one sign at every design point; its effect is not estimable")
        weights[:, index] = np.where(column == 1, 1.0 / plus, -1.0 / minus)

    # An effect is linear in the outcomes, so it is the mean of per-question effects and a
    # resample's effect is the mean of the resampled questions' effects.
    per_question = values.T @ weights
    effects = per_question.mean(axis=0)
    if np.allclose(per_question, per_question[0], rtol=0.0, atol=1e-12):
        lows, highs = effects, effects
    else:
        questions = per_question.shape[0]
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(questions, np.full(questions, 1.0 / questions), size=samples)
        lows, highs = _percentile_interval(counts @ per_question / questions, confidence)
    return [
        {
            "term": term,
            "letters": key,
            "effect": float(effects[index]),
            "ci_low": float(lows[index]),
            "ci_high": float(highs[index]),
            "aliases": list(aliases.get(key, ())) if aliases else [],
        }
        for index, (term, key, _) in enumerate(terms)
    ]
