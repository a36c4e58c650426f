"""Experimental designs for ablation studies, as pure functions (no database).

A *factor* is a pipeline setting (a ``PipelineConfig`` field) with the levels to try; its first
level is the base. Three designs:

- **one factor at a time** (``"ofat"``): the base, then each non-base level of each factor with
  every other factor at its base;
- **full factorial** (``"full"``): every combination, in standard (Yates) order;
- **2^(k−p) fractional factorial** (``"fractional"``): two-level factors only; a full factorial
  in the first k − p factors and the last p set by generators, with the defining relation,
  resolution and alias chains stated (Montgomery, *Design and Analysis of Experiments*, 8th ed.,
  ch. 8; Box, Hunter & Hunter, *Statistics for Experimenters*, 2nd ed., ch. 6).

Factors get the letters A, B, C, … in their order, skipping I, which stands for the identity
column in a defining relation (Montgomery's and Minitab's convention). A design has at most
:data:`MAX_POINTS` configurations and :data:`MAX_FACTORS` factors.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

KINDS = ("ofat", "full", "fractional")
# A study runs every configuration × repetition over a golden set: more than this is a mistake
# in the form, not an experiment anyone meant to run.
MAX_POINTS = 256
LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
MAX_FACTORS = len(LETTERS)
# Alias chains keep words of at most this many letters: interactions of four or more factors
# are assumed negligible (the sparsity-of-effects principle, Montgomery §8.1).
ALIAS_MAX_LENGTH = 3

# (k, p) -> (generators, resolution): the minimum-aberration 2^(k−p) designs of Montgomery,
# Design and Analysis of Experiments, 8th ed., Table 8.14 (the same generators as Minitab's
# catalogue, "Design generators for 2-level designs", and the NIST/SEMATECH e-Handbook
# §5.3.3.4.7), restricted to designs of at most MAX_POINTS runs. p = 1 is always the highest
# interaction of the base factors. The test suite recomputes every resolution stated here.
STANDARD_GENERATORS: dict[tuple[int, int], tuple[tuple[str, ...], int]] = {
    (3, 1): (("C=AB",), 3),
    (4, 1): (("D=ABC",), 4),
    (5, 1): (("E=ABCD",), 5),
    (5, 2): (("D=AB", "E=AC"), 3),
    (6, 1): (("F=ABCDE",), 6),
    (6, 2): (("E=ABC", "F=BCD"), 4),
    (6, 3): (("D=AB", "E=AC", "F=BC"), 3),
    (7, 1): (("G=ABCDEF",), 7),
    (7, 2): (("F=ABCD", "G=ABDE"), 4),
    (7, 3): (("E=ABC", "F=BCD", "G=ACD"), 4),
    (7, 4): (("D=AB", "E=AC", "F=BC", "G=ABC"), 3),
    (8, 1): (("H=ABCDEFG",), 8),
    (8, 2): (("G=ABCD", "H=ABEF"), 5),
    (8, 3): (("F=ABC", "G=ABD", "H=BCDE"), 4),
    (8, 4): (("E=BCD", "F=ACD", "G=ABC", "H=ABD"), 4),
    (9, 1): (("J=ABCDEFGH",), 9),
    (9, 2): (("H=ACDFG", "J=BCEFG"), 6),
    (9, 3): (("G=ABCD", "H=ACEF", "J=CDEF"), 4),
    (9, 4): (("F=BCDE", "G=ACDE", "H=ABDE", "J=ABCE"), 4),
    (9, 5): (("E=ABC", "F=BCD", "G=ACD", "H=ABD", "J=ABCD"), 3),
    (10, 3): (("H=ABCG", "J=BCDE", "K=ACDF"), 5),
    (10, 4): (("G=BCDF", "H=ACDF", "J=ABDE", "K=ABCE"), 4),
    (10, 5): (("F=ABCD", "G=ABCE", "H=ABDE", "J=ACDE", "K=BCDE"), 4),
    (10, 6): (("E=ABC", "F=BCD", "G=ACD", "H=ABD", "J=ABCD", "K=AB"), 3),
    (11, 4): (("H=ABCG", "J=BCDE", "K=ACDF", "L=ABCDEFG"), 5),
    (11, 5): (("G=CDE", "H=ABCD", "J=ABF", "K=BDEF", "L=ADEF"), 4),
    (11, 6): (("F=ABC", "G=BCD", "H=CDE", "J=ACD", "K=ADE", "L=BDE"), 4),
    (11, 7): (("E=ABC", "F=BCD", "G=ACD", "H=ABD", "J=ABCD", "K=AB", "L=AC"), 3),
}

_GENERATOR = re.compile(r"^([A-Z])=([+-]?)([A-Z]+)$")
_ROMAN = (
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
)


class DesignInvalid(ValueError):
    """The factors or design parameters cannot make a design; the message says why, in words an
    evaluator filling the study form can act on."""


def _level_key(value: Any) -> str:
    """Canonical JSON of a level, to compare levels (``True`` and ``1`` stay distinct)."""
    return json.dumps(value, sort_keys=True, allow_nan=False)


@dataclass(frozen=True)
class Factor:
    """A pipeline setting and the levels to try.

    ``name``: a non-empty ``PipelineConfig`` field name (not checked against the config here).
    ``levels``: two or more distinct JSON values (``None``, bool, number, string, list, object);
    ``levels[0]`` is the base, coded −1 in a two-level design. A list is stored as a tuple.
    Raises :class:`DesignInvalid` for an empty name, fewer than two levels, a repeated level or
    a value JSON cannot hold (NaN, infinity, objects).
    """

    name: str
    levels: tuple[Any, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise DesignInvalid(f"a factor needs a name, got {self.name!r}")
        if isinstance(self.levels, str | bytes | Mapping) or not isinstance(self.levels, Sequence):
            raise DesignInvalid(f"factor {self.name!r}: levels must be a list of values, got {self.levels!r}")
        levels = tuple(self.levels)
        try:
            keys = [_level_key(level) for level in levels]
        except (TypeError, ValueError) as error:
            raise DesignInvalid(f"factor {self.name!r}: levels must be JSON values ({error})") from error
        if len(set(keys)) < 2:
            raise DesignInvalid(f"factor {self.name!r} needs at least 2 distinct levels, got {list(levels)!r}")
        if len(set(keys)) < len(keys):
            raise DesignInvalid(f"factor {self.name!r} repeats a level: {list(levels)!r}")
        object.__setattr__(self, "levels", levels)


@dataclass(frozen=True)
class DesignPoint:
    """One configuration of a design.

    ``index``: 0-based position in the design. ``levels``: factor name → level value.
    ``coded``: factor name → −1 for ``levels[0]`` and +1 for ``levels[1]`` of a two-level factor;
    for a factor with more levels, the level's index (0, 1, 2, …). ``label``: ``"base"`` when
    every factor is at its base, else the factors off their base as ``name=<JSON value>``
    joined by ``", "`` in factor order (``"crag_enabled=false, filco_enabled=true"``).
    """

    index: int
    levels: dict[str, Any]
    coded: dict[str, int]
    label: str


@dataclass(frozen=True)
class Design:
    """An experimental design: its points and, for a fractional factorial, its aliasing.

    ``kind``: one of :data:`KINDS`. ``letters``: factor name → letter (A, B, … without I) in
    factor order. For ``"fractional"`` only (empty/``None`` otherwise):

    - ``generators``: normalised, e.g. ``("D=AB", "E=AC")``; a leading ``-`` (``"C=-AB"``) means
      the column is minus the product (another fraction of the same family);
    - ``defining_relation``: every word of the defining relation, the products of the generator
      words with letters multiplied mod 2 (2^p − 1 words), shortest first, e.g.
      ``("I=ABD", "I=ACE", "I=BCDE")``; a word carries ``-`` when the product of signs is −1;
    - ``resolution``: the length of the shortest word (Box & Hunter 1961);
    - ``aliases``: for every main effect (``"A"``) and two-factor interaction (``"AB"``, letters
      in order), the effects it is aliased with of at most :data:`ALIAS_MAX_LENGTH` letters
      (longer ones are assumed negligible and left out), shortest first, signed like the word
      that produced them (``"-BC"``); an empty tuple when there is none that short.
    """

    kind: str
    factors: tuple[Factor, ...]
    points: tuple[DesignPoint, ...]
    letters: dict[str, str]
    generators: tuple[str, ...] = ()
    defining_relation: tuple[str, ...] = ()
    resolution: int | None = None
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for the admin and the study report, e.g. ``"2^(5-1) fractional factorial,
        resolution V (I=ABCDE); 16 configurations"``, ``"2^3 full factorial; 8 configurations"``,
        ``"2×3 full factorial; 6 configurations"`` or ``"one factor at a time: the base and 4
        single-factor changes of 3 factors; 5 configurations"``."""
        count = len(self.points)
        k = len(self.factors)
        if self.kind == "fractional":
            p = len(self.generators)
            relation = "I=" + "=".join(word.removeprefix("I=") for word in self.defining_relation)
            return (
                f"2^({k}-{p}) fractional factorial, resolution {_roman(self.resolution or 0)} ({relation}); "
                f"{count} configurations"
            )
        if self.kind == "full":
            sizes = [len(factor.levels) for factor in self.factors]
            shape = f"{sizes[0]}^{k}" if len(set(sizes)) == 1 else "×".join(str(size) for size in sizes)
            return f"{shape} full factorial; {count} configurations"
        return (
            f"one factor at a time: the base and {count - 1} single-factor changes of {k} factors; "
            f"{count} configurations"
        )


def _roman(number: int) -> str:
    digits = []
    for value, numeral in _ROMAN:
        while number >= value:
            digits.append(numeral)
            number -= value
    return "".join(digits)


def factors_parse(raw: Sequence[Mapping[str, Any]]) -> tuple[Factor, ...]:
    """Factors from plain JSON, ``[{"name": "crag_enabled", "levels": [true, false]}, …]`` (the
    study form, ``manage.py ablate``, a stored study). Other keys are ignored.

    Raises :class:`DesignInvalid` for a list that is not one of objects, an object without
    ``name`` or ``levels``, a factor :class:`Factor` rejects, a name given twice, no factor, or
    more than :data:`MAX_FACTORS` factors.
    """
    if isinstance(raw, str | bytes | Mapping) or not isinstance(raw, Sequence):
        raise DesignInvalid(f"factors must be a list of {{name, levels}} objects, got {raw!r}")
    factors = []
    for position, item in enumerate(raw, start=1):
        if not isinstance(item, Mapping):
            raise DesignInvalid(f"factor {position} must be an object with name and levels, got {item!r}")
        missing = [key for key in ("name", "levels") if key not in item]
        if missing:
            raise DesignInvalid(f"factor {position} lacks {' and '.join(missing)}")
        factors.append(Factor(name=item["name"], levels=item["levels"]))
    return _factors_check(factors)


def _factors_check(factors: Sequence[Factor]) -> tuple[Factor, ...]:
    if not factors:
        raise DesignInvalid("a design needs at least one factor")
    if len(factors) > MAX_FACTORS:
        raise DesignInvalid(f"a design takes at most {MAX_FACTORS} factors, got {len(factors)}")
    seen: set[str] = set()
    for factor in factors:
        if not isinstance(factor, Factor):
            raise DesignInvalid(f"expected a Factor, got {factor!r}")
        if factor.name in seen:
            raise DesignInvalid(f"factor {factor.name!r} is given more than once")
        seen.add(factor.name)
    return tuple(factors)


def _points_check(count: int) -> None:
    if count > MAX_POINTS:
        raise DesignInvalid(f"the design has {count} configurations; at most {MAX_POINTS} are allowed")


def _letters(factors: Sequence[Factor]) -> dict[str, str]:
    return {factor.name: LETTERS[position] for position, factor in enumerate(factors)}


def _code(factor: Factor, index: int) -> int:
    if len(factor.levels) == 2:
        return 1 if index else -1
    return index


def _point(position: int, factors: Sequence[Factor], indices: Sequence[int]) -> DesignPoint:
    levels = {factor.name: factor.levels[index] for factor, index in zip(factors, indices, strict=True)}
    coded = {factor.name: _code(factor, index) for factor, index in zip(factors, indices, strict=True)}
    changed = [
        f"{factor.name}={json.dumps(factor.levels[index], sort_keys=True)}"
        for factor, index in zip(factors, indices, strict=True)
        if index
    ]
    return DesignPoint(index=position, levels=levels, coded=coded, label=", ".join(changed) or "base")


def design_one_factor_at_a_time(factors: Sequence[Factor]) -> Design:
    """One factor at a time against the base.

    Point 0 is the base (every factor at ``levels[0]``); then, factor by factor, each non-base
    level in the order given with every other factor at its base: 1 + Σ (levels − 1) points.
    Each comparison with point 0 changes one setting, so it measures that setting's effect at
    the base only (no interactions). Raises :class:`DesignInvalid` as :func:`factors_parse`
    and for more than :data:`MAX_POINTS` points.
    """
    factors = _factors_check(factors)
    _points_check(1 + sum(len(factor.levels) - 1 for factor in factors))
    rows = [[0] * len(factors)]
    for column, factor in enumerate(factors):
        for index in range(1, len(factor.levels)):
            row = [0] * len(factors)
            row[column] = index
            rows.append(row)
    points = tuple(_point(position, factors, row) for position, row in enumerate(rows))
    return Design(kind="ofat", factors=factors, points=points, letters=_letters(factors))


def design_full_factorial(factors: Sequence[Factor]) -> Design:
    """Every combination of levels, Π len(levels) points, in standard (Yates) order: the first
    factor changes fastest (for two levels: (1), a, b, ab, c, …; Montgomery §6.3).

    Point 0 is the base. Raises :class:`DesignInvalid` as :func:`factors_parse` and for more
    than :data:`MAX_POINTS` points.
    """
    factors = _factors_check(factors)
    _points_check(math.prod(len(factor.levels) for factor in factors))
    # itertools.product varies its last argument fastest, so feed the factors reversed.
    combinations = itertools.product(*(range(len(factor.levels)) for factor in reversed(factors)))
    points = tuple(
        _point(position, factors, tuple(reversed(combination))) for position, combination in enumerate(combinations)
    )
    return Design(kind="full", factors=factors, points=points, letters=_letters(factors))


def _word(mask: int) -> str:
    return "".join(letter for bit, letter in enumerate(LETTERS) if mask >> bit & 1)


def _signed(sign: int, mask: int) -> str:
    return ("-" if sign < 0 else "") + _word(mask)


def _generator_parse(text: str, *, base: str, added: str) -> tuple[str, int, int]:
    """``(letter, sign, mask of base letters)`` of a generator like ``"E=ABCD"`` or ``"E=-ABCD"``."""
    compact = re.sub(r"\s+", "", str(text)).upper()
    match = _GENERATOR.match(compact)
    if match is None:
        raise DesignInvalid(
            f"generator {text!r} is not of the form LETTER=PRODUCT of base letters (e.g. 'E=ABCD' or 'E=-ABCD')"
        )
    letter, sign, product = match.groups()
    if letter not in added:
        raise DesignInvalid(
            f"generator {text!r} defines {letter}, which is not one of the generated factors ({', '.join(added)})"
        )
    mask = 0
    for symbol in product:
        if symbol in added:
            raise DesignInvalid(
                f"generator {text!r} uses {symbol}, a generated factor; use only base letters ({', '.join(base)})"
            )
        if symbol not in base:
            raise DesignInvalid(f"generator {text!r} uses {symbol}, which is not a base letter ({', '.join(base)})")
        bit = 1 << LETTERS.index(symbol)
        if mask & bit:
            raise DesignInvalid(f"generator {text!r} repeats {symbol}")
        mask |= bit
    return letter, -1 if sign == "-" else 1, mask


def design_fractional_factorial(
    factors: Sequence[Factor], *, p: int, generators: Sequence[str] | None = None
) -> Design:
    """A regular two-level 2^(k−p) fractional factorial: 2^(k−p) points for k factors.

    The first k − p factors (the base letters) form a full factorial in Yates order; each of the
    last p factors is set by a generator ``"E=ABCD"``: its coded column is the product of the
    named base columns (−1 = ``levels[0]``, +1 = ``levels[1]``). ``"E=-ABCD"`` takes minus the
    product, which selects another fraction with the same aliasing up to signs. Generators may
    come in any order, one per generated letter; spaces and case are ignored.

    ``generators=None`` takes :data:`STANDARD_GENERATORS`, the minimum-aberration designs of
    Montgomery, *Design and Analysis of Experiments*, 8th ed., Table 8.14 (the same as the
    NIST/SEMATECH e-Handbook §5.3.3.4.7 and Minitab), for 3 ≤ k ≤ 11 and every p they list with
    at most :data:`MAX_POINTS` runs (p = 1 up to k = 9).

    The returned :class:`Design` carries the defining relation, resolution and alias chains
    (see there). Every column sums to zero and main-effect columns are pairwise orthogonal.

    Raises :class:`DesignInvalid` for a factor without exactly two levels, p < 1 or p ≥ k, more
    than :data:`MAX_POINTS` points, no standard design for (k, p) when ``generators`` is None,
    a number of generators other than p, a generator that does not parse, defines a base
    letter or the same letter twice, or names a letter that is not a base letter (unknown or
    generated), and for resolution below III (two main effects would be confounded).
    """
    factors = _factors_check(factors)
    k = len(factors)
    several = [factor.name for factor in factors if len(factor.levels) != 2]
    if several:
        raise DesignInvalid(f"a fractional factorial needs two-level factors; {', '.join(several)} have more")
    if not isinstance(p, int) or isinstance(p, bool) or p < 1:
        raise DesignInvalid(f"a fractional factorial needs p ≥ 1, got {p!r}")
    if p >= k:
        raise DesignInvalid(f"p must be less than the number of factors ({k}), got {p}")
    _points_check(2 ** (k - p))
    base, added = LETTERS[: k - p], LETTERS[k - p : k]
    if generators is None:
        if (k, p) not in STANDARD_GENERATORS:
            known = sorted(q for (size, q) in STANDARD_GENERATORS if size == k)
            offer = f"p in {known}" if known else "none"
            raise DesignInvalid(f"no standard 2^({k}-{p}) design (for {k} factors: {offer}); give generators")
        generators = STANDARD_GENERATORS[(k, p)][0]
    if isinstance(generators, str):
        generators = [generators]
    if len(generators) != p:
        raise DesignInvalid(f"a 2^({k}-{p}) design needs {p} generators, got {len(generators)}")
    parsed: dict[str, tuple[int, int]] = {}
    for text in generators:
        letter, sign, mask = _generator_parse(text, base=base, added=added)
        if letter in parsed:
            raise DesignInvalid(f"{letter} has more than one generator")
        parsed[letter] = (sign, mask)

    # A generator E=ABCD is the word I=ABCDE; the defining relation holds every product.
    words: list[tuple[int, int]] = [
        (sign, mask | 1 << LETTERS.index(letter)) for letter, (sign, mask) in parsed.items()
    ]
    relation: list[tuple[int, int]] = []
    for size in range(1, p + 1):
        for subset in itertools.combinations(words, size):
            sign, mask = 1, 0
            for word_sign, word_mask in subset:
                sign, mask = sign * word_sign, mask ^ word_mask
            relation.append((sign, mask))
    relation.sort(key=lambda word: (word[1].bit_count(), _word(word[1])))
    resolution = min(mask.bit_count() for _, mask in relation)
    if resolution < 3:
        sign, mask = next(word for word in relation if word[1].bit_count() == resolution)
        raise DesignInvalid(
            f"the generators give I={_signed(sign, mask)} (resolution {resolution}): main effects "
            f"{' and '.join(_word(mask))} would be confounded"
        )

    effects = [1 << bit for bit in range(k)] + [1 << a | 1 << b for a, b in itertools.combinations(range(k), 2)]
    aliases: dict[str, tuple[str, ...]] = {}
    for effect in effects:
        chain = sorted(
            ((sign, effect ^ mask) for sign, mask in relation if (effect ^ mask).bit_count() <= ALIAS_MAX_LENGTH),
            key=lambda alias: (alias[1].bit_count(), _word(alias[1])),
        )
        aliases[_word(effect)] = tuple(_signed(sign, mask) for sign, mask in chain)

    rows = []
    for run in range(2 ** (k - p)):
        coded = [1 if run >> bit & 1 else -1 for bit in range(k - p)]
        for letter in added:
            sign, mask = parsed[letter]
            coded.append(sign * math.prod(coded[bit] for bit in range(k - p) if mask >> bit & 1))
        rows.append(tuple(0 if value < 0 else 1 for value in coded))
    points = tuple(_point(position, factors, row) for position, row in enumerate(rows))
    return Design(
        kind="fractional",
        factors=factors,
        points=points,
        letters=_letters(factors),
        generators=tuple(f"{letter}={_signed(*parsed[letter])}" for letter in added),
        defining_relation=tuple(f"I={_signed(sign, mask)}" for sign, mask in relation),
        resolution=resolution,
        aliases=aliases,
    )


def design_build(
    kind: str,
    factors: Sequence[Mapping[str, Any]] | Sequence[Factor],
    *,
    p: int = 0,
    generators: Sequence[str] | None = None,
) -> Design:
    """The design of ``kind`` (``"ofat"``, ``"full"`` or ``"fractional"``) over ``factors``,
    given as :class:`Factor` objects or as plain JSON (parsed with :func:`factors_parse`).

    ``p`` and ``generators`` go to :func:`design_fractional_factorial` and must stay at their
    defaults for the other kinds. Raises :class:`DesignInvalid` for an unknown kind, ``p`` or
    ``generators`` with another kind, more than :data:`MAX_POINTS` points, and whatever the
    chosen builder raises.
    """
    if kind not in KINDS:
        raise DesignInvalid(f"unknown design {kind!r}; choose one of {', '.join(KINDS)}")
    if all(isinstance(factor, Factor) for factor in factors):
        parsed = _factors_check([factor for factor in factors if isinstance(factor, Factor)])
    else:
        parsed = factors_parse([factor for factor in factors if not isinstance(factor, Factor)])
        if len(parsed) != len(factors):
            raise DesignInvalid("give factors either all as Factor objects or all as {name, levels} objects")
    if kind == "fractional":
        return design_fractional_factorial(parsed, p=p, generators=generators)
    if p or generators is not None:
        raise DesignInvalid(f"p and generators apply only to fractional designs, not {kind!r}")
    if kind == "full":
        return design_full_factorial(parsed)
    return design_one_factor_at_a_time(parsed)
