"""Ablation designs against textbook cases worked by hand (Montgomery, Design and Analysis of
Experiments, ch. 6 and 8). Pure functions: no database."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from evaluation.ablation.design import (
    MAX_POINTS,
    STANDARD_GENERATORS,
    Design,
    DesignInvalid,
    Factor,
    design_build,
    design_fractional_factorial,
    design_full_factorial,
    design_one_factor_at_a_time,
    factors_parse,
)


def two_level(count: int) -> tuple[Factor, ...]:
    return tuple(Factor(name=f"flag_{position}", levels=(False, True)) for position in range(count))


def coded_matrix(design: Design) -> np.ndarray:
    """Points × factors of the coded values, in factor order."""
    return np.array([[point.coded[factor.name] for factor in design.factors] for point in design.points])


# factors_parse


def test_factors_parse_reads_json_and_keeps_order_and_base() -> None:
    factors = factors_parse(
        [
            {"name": "crag_enabled", "levels": [True, False]},
            {"name": "crag_threshold", "levels": [0.3, 0.5, 0.7], "note": "ignored"},
        ]
    )

    assert factors == (
        Factor(name="crag_enabled", levels=(True, False)),
        Factor(name="crag_threshold", levels=(0.3, 0.5, 0.7)),
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([{"name": "a", "levels": [1, 2]}, {"name": "a", "levels": [3, 4]}], "more than once"),
        ([{"name": "a", "levels": [True]}], "at least 2 distinct levels"),
        ([{"name": "a", "levels": [True, True]}], "at least 2 distinct levels"),
        ([{"name": "a", "levels": [1, 2, 1]}], "repeats a level"),
        ([{"name": "", "levels": [1, 2]}], "needs a name"),
        ([{"name": "   ", "levels": [1, 2]}], "needs a name"),
        ([{"name": "a"}], "lacks levels"),
        ([{"levels": [1, 2]}], "lacks name"),
        ([{"name": "a", "levels": "ab"}], "must be a list"),
        ([{"name": "a", "levels": [float("nan"), 1.0]}], "JSON values"),
        (["a"], "must be an object"),
        ([], "at least one factor"),
        ({"name": "a", "levels": [1, 2]}, "must be a list"),
    ],
)
def test_factors_parse_rejects_with_a_clear_message(raw: object, message: str) -> None:
    with pytest.raises(DesignInvalid, match=message):
        factors_parse(raw)  # type: ignore[arg-type]


def test_levels_true_and_one_are_distinct() -> None:
    """GIVEN levels true and 1 (equal in Python, different JSON) THEN both are kept."""
    assert Factor(name="x", levels=(True, 1)).levels == (True, 1)


# One factor at a time


def test_ofat_base_first_then_each_non_base_level_alone() -> None:
    factors = (
        Factor(name="crag_enabled", levels=(True, False)),
        Factor(name="crag_threshold", levels=(0.5, 0.3, 0.7)),
        Factor(name="filco_enabled", levels=(False, True)),
    )

    design = design_one_factor_at_a_time(factors)

    assert len(design.points) == 1 + (1 + 2 + 1)
    base = design.points[0]
    assert base.index == 0
    assert base.label == "base"
    assert base.levels == {"crag_enabled": True, "crag_threshold": 0.5, "filco_enabled": False}
    assert base.coded == {"crag_enabled": -1, "crag_threshold": 0, "filco_enabled": -1}
    assert [point.label for point in design.points[1:]] == [
        "crag_enabled=false",
        "crag_threshold=0.3",
        "crag_threshold=0.7",
        "filco_enabled=true",
    ]
    for point in design.points[1:]:
        changed = [name for name, value in point.levels.items() if value != base.levels[name]]
        assert len(changed) == 1
    assert [point.index for point in design.points] == list(range(5))
    assert design.letters == {"crag_enabled": "A", "crag_threshold": "B", "filco_enabled": "C"}
    assert design.generators == () and design.resolution is None and design.aliases == {}
    assert (
        design.describe() == "one factor at a time: the base and 4 single-factor changes of 3 factors; 5 configurations"
    )


# Full factorial


def test_full_factorial_two_level_is_in_yates_order() -> None:
    design = design_full_factorial(two_level(3))

    # (1), a, b, ab, c, ac, bc, abc: the first factor changes fastest.
    assert coded_matrix(design).tolist() == [
        [-1, -1, -1],
        [1, -1, -1],
        [-1, 1, -1],
        [1, 1, -1],
        [-1, -1, 1],
        [1, -1, 1],
        [-1, 1, 1],
        [1, 1, 1],
    ]
    assert design.points[0].label == "base"
    assert design.points[3].label == "flag_0=true, flag_1=true"
    assert design.describe() == "2^3 full factorial; 8 configurations"


def test_full_factorial_mixed_levels_counts_and_order() -> None:
    factors = (
        Factor(name="reranker", levels=("none", "local")),
        Factor(name="depth", levels=(10, 20, 40)),
        Factor(name="llm", levels=(False, True)),
    )

    design = design_full_factorial(factors)

    assert len(design.points) == 2 * 3 * 2
    assert [(point.levels["reranker"], point.levels["depth"], point.levels["llm"]) for point in design.points[:7]] == [
        ("none", 10, False),
        ("local", 10, False),
        ("none", 20, False),
        ("local", 20, False),
        ("none", 40, False),
        ("local", 40, False),
        ("none", 10, True),
    ]
    assert design.points[5].coded == {"reranker": 1, "depth": 2, "llm": -1}
    combinations = {tuple(point.levels.values()) for point in design.points}
    assert combinations == set(itertools.product(("none", "local"), (10, 20, 40), (False, True)))
    assert design.describe() == "2×3×2 full factorial; 12 configurations"


# Fractional factorial: textbook cases


def test_half_fraction_of_three_factors_c_equals_ab() -> None:
    """Montgomery §8.2: 2^(3-1) with C = AB: I = ABC, resolution III, A = BC, B = AC, C = AB."""
    design = design_fractional_factorial(two_level(3), p=1, generators=["C=AB"])

    assert coded_matrix(design).tolist() == [[-1, -1, 1], [1, -1, -1], [-1, 1, -1], [1, 1, 1]]
    assert design.generators == ("C=AB",)
    assert design.defining_relation == ("I=ABC",)
    assert design.resolution == 3
    assert design.aliases["A"] == ("BC",)
    assert design.aliases["B"] == ("AC",)
    assert design.aliases["C"] == ("AB",)
    assert design.aliases["AB"] == ("C",)
    assert design.describe() == "2^(3-1) fractional factorial, resolution III (I=ABC); 4 configurations"


def test_negative_generator_takes_the_other_half() -> None:
    """GIVEN C = -AB THEN I = -ABC, A is aliased with -BC, and C is minus the product of A and B."""
    design = design_fractional_factorial(two_level(3), p=1, generators=["C = -ab"])

    matrix = coded_matrix(design)
    assert matrix[:, 2].tolist() == (-matrix[:, 0] * matrix[:, 1]).tolist()
    assert design.generators == ("C=-AB",)
    assert design.defining_relation == ("I=-ABC",)
    assert design.aliases["A"] == ("-BC",)


def test_half_fraction_of_four_factors_is_resolution_iv() -> None:
    """Montgomery §8.2: 2^(4-1) with D = ABC: I = ABCD; main effects with three-factor
    interactions, AB = CD, AC = BD, AD = BC."""
    design = design_fractional_factorial(two_level(4), p=1, generators=["D=ABC"])

    assert design.defining_relation == ("I=ABCD",)
    assert design.resolution == 4
    assert design.aliases["A"] == ("BCD",)
    assert design.aliases["AB"] == ("CD",)
    assert design.aliases["AC"] == ("BD",)
    assert design.aliases["AD"] == ("BC",)
    matrix = coded_matrix(design)
    assert (matrix[:, 0] * matrix[:, 1]).tolist() == (matrix[:, 2] * matrix[:, 3]).tolist()


def test_quarter_fraction_of_five_factors_default_generators() -> None:
    """Montgomery §8.3: 2^(5-2) with D = AB, E = AC: I = ABD = ACE = BCDE, resolution III."""
    design = design_fractional_factorial(two_level(5), p=2)

    assert design.generators == ("D=AB", "E=AC")
    assert design.defining_relation == ("I=ABD", "I=ACE", "I=BCDE")
    assert design.resolution == 3
    # A·ABD = BD, A·ACE = CE, A·BCDE = ABCDE (five letters: left out).
    assert design.aliases["A"] == ("BD", "CE")
    assert design.aliases["D"] == ("AB", "BCE")
    assert design.aliases["BC"] == ("DE", "ABE", "ACD")  # BC·ACE = ABE, BC·ABD = ACD
    assert len(design.points) == 8
    assert design.describe() == "2^(5-2) fractional factorial, resolution III (I=ABD=ACE=BCDE); 8 configurations"


def test_half_fraction_of_five_factors_is_resolution_v() -> None:
    """Montgomery §8.2: 2^(5-1) with E = ABCD: resolution V, two-factor interactions aliased only
    with three-factor ones."""
    design = design_fractional_factorial(two_level(5), p=1, generators=["E=ABCD"])

    assert design.defining_relation == ("I=ABCDE",)
    assert design.resolution == 5
    assert design.aliases["A"] == ()  # only BCDE, four letters
    assert design.aliases["AB"] == ("CDE",)
    assert len(design.aliases) == 5 + 10
    assert design.describe() == "2^(5-1) fractional factorial, resolution V (I=ABCDE); 16 configurations"
    assert design_fractional_factorial(two_level(5), p=1).generators == ("E=ABCD",)


@pytest.mark.parametrize(("k", "p"), sorted(STANDARD_GENERATORS))
def test_standard_designs_are_balanced_orthogonal_and_of_the_stated_resolution(k: int, p: int) -> None:
    design = design_fractional_factorial(two_level(k), p=p)

    matrix = coded_matrix(design)
    assert matrix.shape == (2 ** (k - p), k)
    assert design.resolution == STANDARD_GENERATORS[(k, p)][1]
    assert len(design.defining_relation) == 2**p - 1
    assert np.all(matrix.sum(axis=0) == 0)  # balanced
    assert np.array_equal(matrix.T @ matrix, len(matrix) * np.eye(k, dtype=int))  # orthogonal
    assert len({tuple(row) for row in matrix}) == len(matrix)
    assert set(np.unique(matrix)) == {-1, 1}
    # Every word of the defining relation multiplies to the identity column (+1 everywhere).
    by_letter = {letter: name for name, letter in design.letters.items()}
    for word in design.defining_relation:
        names = [by_letter[letter] for letter in word.removeprefix("I=")]
        product = np.prod([[point.coded[name] for name in names] for point in design.points], axis=1)
        assert np.all(product == 1)


def test_fractional_levels_follow_the_coding() -> None:
    factors = (
        Factor(name="guard", levels=("on", "off")),
        Factor(name="cache", levels=(True, False)),
        Factor(name="rescue", levels=(0, 1)),
    )

    design = design_fractional_factorial(factors, p=1)

    for point in design.points:
        for factor in factors:
            expected = factor.levels[0] if point.coded[factor.name] == -1 else factor.levels[1]
            assert point.levels[factor.name] == expected
    assert design.points[0].label == "rescue=1"


@pytest.mark.parametrize(
    ("k", "p", "generators", "message"),
    [
        (5, 0, None, "p ≥ 1"),
        (5, -1, None, "p ≥ 1"),
        (5, 5, None, "less than the number of factors"),
        (5, 2, ["D=AB", "E=AZ"], "not a base letter"),
        (5, 2, ["D=AB", "E=AI"], "not a base letter"),
        (5, 2, ["D=AB", "E=AD"], "a generated factor"),
        (5, 2, ["C=AB", "E=AC"], "not one of the generated factors"),
        (5, 2, ["D=AB", "D=AC"], "more than one generator"),
        (5, 2, ["D=AB"], "needs 2 generators"),
        (5, 2, ["D=AB", "E=A"], "main effects A and E would be confounded"),
        (5, 2, ["D=AB", "E=AB"], "main effects D and E would be confounded"),
        (5, 2, ["D=AB", "E=AAB"], "repeats A"),
        (5, 2, ["D=AB", "E=A+B"], "not of the form"),
        (5, 2, ["D=AB", "E="], "not of the form"),
        (4, 2, None, "no standard 2\\^\\(4-2\\) design"),
        (10, 1, None, "512 configurations"),
    ],
)
def test_fractional_rejects_invalid_parameters(k: int, p: int, generators: list[str] | None, message: str) -> None:
    with pytest.raises(DesignInvalid, match=message):
        design_fractional_factorial(two_level(k), p=p, generators=generators)


def test_fractional_needs_two_level_factors() -> None:
    factors = (*two_level(3), Factor(name="depth", levels=(10, 20, 40)))

    with pytest.raises(DesignInvalid, match="depth"):
        design_fractional_factorial(factors, p=1)


# design_build


def test_design_build_dispatches_and_parses_json() -> None:
    raw = [{"name": f"flag_{position}", "levels": [False, True]} for position in range(4)]

    assert design_build("ofat", raw).kind == "ofat"
    assert len(design_build("ofat", raw).points) == 5
    assert len(design_build("full", raw).points) == 16
    fractional = design_build("fractional", raw, p=1)
    assert fractional.kind == "fractional" and fractional.resolution == 4
    assert design_build("full", two_level(2)).points == design_full_factorial(two_level(2)).points


@pytest.mark.parametrize(
    ("kind", "count", "options", "message"),
    [
        ("plackett", 3, {}, "unknown design"),
        ("full", 9, {}, "512 configurations"),
        ("fractional", 4, {}, "p ≥ 1"),
        ("full", 3, {"p": 1}, "only to fractional"),
        ("ofat", 3, {"generators": ["C=AB"]}, "only to fractional"),
    ],
)
def test_design_build_rejects(kind: str, count: int, options: dict[str, object], message: str) -> None:
    raw = [{"name": f"flag_{position}", "levels": [False, True]} for position in range(count)]

    with pytest.raises(DesignInvalid, match=message):
        design_build(kind, raw, **options)  # type: ignore[arg-type]


def test_point_limit_is_inclusive() -> None:
    many = [Factor(name=f"threshold_{position}", levels=tuple(range(12))) for position in range(25)]

    with pytest.raises(DesignInvalid, match="276 configurations"):
        design_one_factor_at_a_time(many)
    assert len(design_one_factor_at_a_time(many[:23]).points) == 1 + 23 * 11
    assert len(design_full_factorial(two_level(8)).points) == MAX_POINTS
