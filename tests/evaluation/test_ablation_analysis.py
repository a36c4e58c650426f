"""Ablation statistics against hand-computed values, and McNemar's test and Cochran's Q
(``evaluation.metrics.stats``) on hand-computed tables. Pure functions: no database."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.ablation.analysis import (
    change_matrix,
    factorial_effects,
    majority_pass,
    repetition_spread,
    two_stage_bootstrap_ci,
)
from evaluation.ablation.design import design_full_factorial, factors_parse
from evaluation.metrics.stats import bootstrap_ci, cochrans_q, mcnemar

# change_matrix


def test_change_matrix_counts_a_small_table() -> None:
    base = [True, True, False, False, True, False]
    other = [True, False, True, False, False, False]

    assert change_matrix(base, other) == {
        "both_pass": 1,  # question 0
        "both_fail": 2,  # 3, 5
        "regressions": 2,  # 1, 4
        "recoveries": 1,  # 2
        "net": -1,
        "questions": 6,
    }


def test_change_matrix_rejects_different_lengths_and_non_booleans() -> None:
    with pytest.raises(ValueError, match="same questions"):
        change_matrix([True, False], [True])
    with pytest.raises(ValueError, match="booleans"):
        change_matrix([0.5, 1.0], [1, 0])


# majority_pass and repetition_spread


def test_majority_pass_needs_more_than_half_and_ties_fail() -> None:
    assert majority_pass([[True, True], [True, False], [False, False]]).tolist() == [True, False, False]
    assert majority_pass([[1, 1, 0], [1, 0, 0], [1, 1, 1]]).tolist() == [True, False, True]
    with pytest.raises(ValueError, match="repetition"):
        majority_pass(np.zeros((3, 0), dtype=bool))


def test_repetition_spread_of_differing_repetitions() -> None:
    # Repetition means: 2/4, 3/4, 1/4; sample sd of (0.5, 0.75, 0.25) = sqrt((0 + 0.0625 + 0.0625) / 2) = 0.25.
    matrix = [[1, 1, 0], [0, 1, 0], [1, 1, 1], [0, 0, 0]]

    assert repetition_spread(matrix) == {
        "repetitions": 3,
        "min": 0.25,
        "max": 0.75,
        "sd": pytest.approx(0.25),
        "identical": False,
    }


def test_repetition_spread_flags_identical_repetitions() -> None:
    """GIVEN an offline configuration whose three repetitions agree on every question (an
    undefined metric included) THEN identical is True and the spread is zero."""
    matrix = [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [np.nan, np.nan, np.nan], [0.5, 0.5, 0.5]]

    spread = repetition_spread(matrix)

    assert spread["identical"] is True
    assert spread["sd"] == 0.0
    assert spread["min"] == spread["max"] == pytest.approx(0.5)
    assert repetition_spread([[1], [0]]) == {"repetitions": 1, "min": 0.5, "max": 0.5, "sd": 0.0, "identical": True}


def test_repetition_spread_same_mean_different_questions_is_not_identical() -> None:
    assert repetition_spread([[1, 0], [0, 1]])["identical"] is False


# two_stage_bootstrap_ci


def noisy_matrix(questions: int, repetitions: int, *, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    difficulty = rng.random(questions)
    return (rng.random((questions, repetitions)) < difficulty[:, None]).astype(float)


def test_two_stage_bootstrap_is_deterministic_and_contains_the_mean() -> None:
    matrix = noisy_matrix(80, 3)

    first = two_stage_bootstrap_ci(matrix)
    assert first is not None
    mean, low, high = first

    assert two_stage_bootstrap_ci(matrix) == first
    assert two_stage_bootstrap_ci(matrix, seed=1) != first
    assert mean == pytest.approx(matrix.mean())
    assert low < mean < high
    narrower = two_stage_bootstrap_ci(matrix, confidence=0.5)
    assert narrower is not None and low < narrower[1] < narrower[2] < high


def test_two_stage_bootstrap_with_one_repetition_is_the_bootstrap_over_questions() -> None:
    """GIVEN one repetition THEN the interval matches the ordinary percentile bootstrap of the
    same values (scipy, another random stream) up to Monte Carlo error."""
    matrix = noisy_matrix(120, 1)

    two_stage = two_stage_bootstrap_ci(matrix, samples=20000)
    ordinary = bootstrap_ci(matrix[:, 0].tolist(), samples=20000)

    assert two_stage is not None and ordinary is not None
    assert two_stage[0] == pytest.approx(ordinary[0])
    assert two_stage[1] == pytest.approx(ordinary[1], abs=0.01)
    assert two_stage[2] == pytest.approx(ordinary[2], abs=0.01)


def test_two_stage_bootstrap_resamples_repetitions_within_a_question() -> None:
    """GIVEN one question passed in half its repetitions THEN the interval is not degenerate
    (an ordinary bootstrap over questions would give (0.5, 0.5, 0.5))."""
    result = two_stage_bootstrap_ci([[1.0, 0.0, 1.0, 0.0]])

    assert result is not None
    mean, low, high = result
    assert mean == 0.5
    assert low < 0.5 < high
    assert low >= 0.0 and high <= 1.0


def test_two_stage_bootstrap_degenerate_and_empty() -> None:
    assert two_stage_bootstrap_ci([[0.7, 0.7], [0.7, np.nan]]) == (0.7, 0.7, 0.7)
    assert two_stage_bootstrap_ci(np.empty((0, 3))) is None
    assert two_stage_bootstrap_ci([[np.nan, np.nan]]) is None


def test_two_stage_bootstrap_nan_handling() -> None:
    """GIVEN a question with no defined cell THEN it is dropped (the same answer as without it);
    GIVEN a question with some NaN cells THEN it counts as the mean of its defined cells."""
    matrix = noisy_matrix(40, 3)
    with_undefined = np.vstack([matrix[:10], [np.nan, np.nan, np.nan], matrix[10:]])

    assert two_stage_bootstrap_ci(with_undefined) == two_stage_bootstrap_ci(matrix)

    partial = two_stage_bootstrap_ci([[1.0, np.nan], [0.0, 0.0], [1.0, 0.0]])
    assert partial is not None
    # Question means 1, 0 and 0.5: mean 0.5 (the mean over the five defined cells would be 0.4).
    assert partial[0] == pytest.approx(0.5)
    assert 0.0 <= partial[1] < 0.5 < partial[2] <= 1.0


def test_two_stage_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="two-dimensional"):
        two_stage_bootstrap_ci([1.0, 0.0])
    with pytest.raises(ValueError, match="infinities"):
        two_stage_bootstrap_ci([[1.0, np.inf]])
    with pytest.raises(ValueError, match="samples"):
        two_stage_bootstrap_ci([[1.0]], samples=0)
    with pytest.raises(ValueError, match="confidence"):
        two_stage_bootstrap_ci([[1.0]], confidence=1.0)


# factorial_effects

# A 2^2 design in Yates order: (1), a, b, ab.
CODED_2X2 = [{"crag": -1, "filco": -1}, {"crag": 1, "filco": -1}, {"crag": -1, "filco": 1}, {"crag": 1, "filco": 1}]


def test_factorial_effects_of_a_two_by_two_design_by_hand() -> None:
    """Point means (1) = 0.1, a = 0.2, b = 0.3, ab = 0.5 (two questions, the second 0.2 higher).

    A  = (a + ab)/2 − ((1) + b)/2  = 0.35 − 0.20 = 0.15
    B  = (b + ab)/2 − ((1) + a)/2  = 0.40 − 0.15 = 0.25
    AB = ((1) + ab)/2 − (a + b)/2  = 0.30 − 0.25 = 0.05
    Every question shows the same effects, so each interval is the estimate.
    """
    outcomes = [[0.0, 0.2], [0.1, 0.3], [0.2, 0.4], [0.4, 0.6]]

    rows = factorial_effects(CODED_2X2, outcomes, aliases={"AB": ("C",)})

    assert [(row["term"], row["letters"]) for row in rows] == [("crag", "A"), ("filco", "B"), ("crag × filco", "AB")]
    assert [row["effect"] for row in rows] == pytest.approx([0.15, 0.25, 0.05])
    for row in rows:
        assert row["ci_low"] == row["ci_high"] == row["effect"]
    assert [row["aliases"] for row in rows] == [[], [], ["C"]]
    assert [row["term"] for row in factorial_effects(CODED_2X2, outcomes, interactions=False)] == ["crag", "filco"]


def test_factorial_effects_interval_over_questions() -> None:
    """GIVEN questions whose response to crag differs THEN the interval has width, contains the
    effect, and is the same for the same seed."""
    rng = np.random.default_rng(3)
    questions = 50
    base = rng.random(questions)
    lift = rng.normal(0.1, 0.1, questions)
    outcomes = np.vstack([base, base + lift, base, base + lift])

    rows = factorial_effects(CODED_2X2, outcomes, letters={"crag": "C", "filco": "F"})

    crag, filco, both = rows
    assert crag["letters"] == "C" and both["letters"] == "CF"
    assert crag["effect"] == pytest.approx(lift.mean())
    assert crag["ci_low"] < crag["effect"] < crag["ci_high"]
    assert filco["effect"] == pytest.approx(0.0) and both["effect"] == pytest.approx(0.0)
    assert rows == factorial_effects(CODED_2X2, outcomes, letters={"crag": "C", "filco": "F"})


def test_factorial_effects_from_a_design_and_nan_questions() -> None:
    """GIVEN a 2^3 design's points and a question undefined at one point THEN that question is
    left out and the main effect of A is the hand-computed one."""
    design = design_full_factorial(factors_parse([{"name": name, "levels": [0, 1]} for name in ("a", "b", "c")]))
    # Question 0: outcome 1 exactly where A is high; question 1 undefined at one point.
    outcomes = np.array(
        [[0.0, np.nan], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    )

    rows = factorial_effects([point.coded for point in design.points], outcomes, letters=design.letters)

    assert len(rows) == 3 + 3
    assert rows[0]["effect"] == 1.0 and rows[0]["ci_low"] == rows[0]["ci_high"] == 1.0
    assert all(row["effect"] == 0.0 for row in rows[1:])


@pytest.mark.parametrize(
    ("coded", "outcomes", "message"),
    [
        ([{"a": -1}, {"a": 0}], [[1.0], [0.0]], "two-level"),
        ([{"a": -1}, {"b": 1}], [[1.0], [0.0]], "has factors"),
        ([{"a": -1}, {"a": 1}], [[1.0], [0.0], [1.0]], "one row per design point"),
        ([{"a": -1}, {"a": 1}], [1.0, 0.0], "two-dimensional"),
        ([{"a": 1}, {"a": 1}], [[1.0], [0.0]], "one sign"),
        ([{"a": -1}, {"a": 1}], [[np.nan], [0.0]], "no question"),
        ([], [], "at least one design point"),
    ],
)
def test_factorial_effects_rejects(coded: list[dict[str, int]], outcomes: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factorial_effects(coded, outcomes)  # type: ignore[arg-type]


# McNemar and Cochran's Q (evaluation.metrics.stats) on hand-computed tables


def test_mcnemar_exact_on_a_hand_computed_table() -> None:
    """b = 1, c = 7: n = 8 < 25, exact two-sided p = 2 · (C(8,0) + C(8,1)) / 2^8 = 18/256."""
    result = mcnemar(b=1, c=7)

    assert result["method"] == "exact_binomial"
    assert result["p_value"] == pytest.approx(2 * (math.comb(8, 0) + math.comb(8, 1)) / 2**8)
    assert result["p_value"] == pytest.approx(0.0703125)


def test_mcnemar_chi_square_on_a_hand_computed_table() -> None:
    """b = 10, c = 20: n = 30 ≥ 25, x = (|10 − 20| − 1)² / 30 = 2.7; the chi-square(1) upper
    tail is erfc(sqrt(x / 2))."""
    result = mcnemar(b=10, c=20)

    assert result["method"] == "chi2_cc"
    assert result["statistic"] == pytest.approx(2.7)
    assert result["p_value"] == pytest.approx(math.erfc(math.sqrt(2.7 / 2)))


def test_cochrans_q_on_a_hand_computed_table() -> None:
    """Six questions × three configurations.

    Column totals C = (5, 4, 1), N = 10, row totals R = (3, 2, 1, 2, 1, 1), Σ R² = 20:
    Q = (k − 1)(k Σ C² − N²) / (k N − Σ R²) = 2 · (3 · 42 − 100) / (30 − 20) = 5.2;
    p = chi-square(2) upper tail = exp(−Q / 2).
    """
    table = [
        [1, 1, 1],
        [1, 1, 0],
        [1, 0, 0],
        [1, 1, 0],
        [0, 1, 0],
        [1, 0, 0],
    ]
    k = 3
    columns = [sum(row[j] for row in table) for j in range(k)]
    rows = [sum(row) for row in table]
    total = sum(rows)
    by_hand = (k - 1) * (k * sum(c * c for c in columns) - total**2) / (k * total - sum(r * r for r in rows))
    assert by_hand == pytest.approx(5.2)

    result = cochrans_q([[bool(cell) for cell in row] for row in table])

    assert result["statistic"] == pytest.approx(5.2)
    assert result["p_value"] == pytest.approx(math.exp(-2.6))
    assert result["df"] == 2
    assert result["n"] == 6
