"""Pass criteria of one evaluated question: pure functions returning ``(passed, reason)``.

Two criteria are computed for every question and stored side by side:

- **ER-only** (:func:`pass_er_only`): entity recall alone, needs no judge.
- **Composite** (:func:`pass_composite`): the judge's faithfulness, with entity recall and
  relevancy as a second path for answers the judge finds hard to ground (name-heavy answers).

Both start with the same checks, in order: an error fails; an empty answer fails; a question
that must be refused passes exactly when it was refused explicitly (a guard's refusal or a
red-flag route; nothing else is scored); a question that must be answered fails when it was
refused, and fails when it got a fallback (gate rejection, no results) instead of an answer. ``reason`` names the path taken, with the numbers
(two decimals), and fits ``EvaluationResult.pass_reason`` (≤ 200 characters).

The thresholds are the project's definition of a pass (chosen, not calibrated).
"""

from __future__ import annotations

FAITHFULNESS_PASS = 0.5
ER_PASS = 0.75
RELEVANCY_PASS = 0.5
RELEVANCY_FLOOR = 0.25
ER_ONLY_PASS = 0.5

_ERROR_IN_REASON = 150  # characters of the error's first line kept in the reason


def _score(value: float) -> str:
    return f"{value:.2f}"


def _common_checks(
    *, error: str, answer: str, must_refuse: bool, refused: bool, fallback: bool
) -> tuple[bool, str] | None:
    """The checks both criteria start with; ``None`` when the answer goes on to be scored."""
    if error and error.strip():
        first_line = error.strip().splitlines()[0]
        return False, f"error: {first_line[:_ERROR_IN_REASON]}"
    if not answer or not answer.strip():
        return False, "empty answer"
    if must_refuse:
        if refused:
            return True, "refused as required"
        if fallback:
            return False, "fallback instead of the explicit refusal required"
        return False, "answered a question that must be refused"
    if refused:
        return False, "refused a question that must be answered"
    if fallback:
        return False, "fallback instead of an answer"
    return None


def pass_er_only(
    *,
    error: str,
    answer: str,
    must_refuse: bool,
    refused: bool,
    entity_recall: float | None,
    fallback: bool = False,
    threshold: float = ER_ONLY_PASS,
) -> tuple[bool, str]:
    """ER-only criterion: after the common checks (module docstring), passes when entity recall
    (in [0, 1]) ≥ ``threshold``; a question without expected entities (``entity_recall`` None)
    passes, the clause not being applicable."""
    common = _common_checks(error=error, answer=answer, must_refuse=must_refuse, refused=refused, fallback=fallback)
    if common is not None:
        return common
    if entity_recall is None:
        return True, "entity recall not applicable (no expected entities)"
    if entity_recall >= threshold:
        return True, f"entity recall {_score(entity_recall)} ≥ {threshold:g}"
    return False, f"entity recall {_score(entity_recall)} < {threshold:g}"


def pass_composite(
    *,
    error: str,
    answer: str,
    must_refuse: bool,
    refused: bool,
    faithfulness: float | None,
    relevancy: float | None,
    entity_recall: float | None,
    fallback: bool = False,
) -> tuple[bool, str]:
    """Composite criterion; scores in [0, 1], ``None`` where not scored. After the common checks
    (module docstring), in order:

    1. relevancy < :data:`RELEVANCY_FLOOR` fails, whatever the other scores (an off-topic answer
       is not rescued by being faithful);
    2. faithfulness ≥ :data:`FAITHFULNESS_PASS` passes;
    3. entity recall ≥ :data:`ER_PASS` and relevancy ≥ :data:`RELEVANCY_PASS` passes (an
       unscored entity recall or relevancy does not meet this path);
    4. anything else fails, the reason saying what fell short.
    """
    common = _common_checks(error=error, answer=answer, must_refuse=must_refuse, refused=refused, fallback=fallback)
    if common is not None:
        return common
    if relevancy is not None and relevancy < RELEVANCY_FLOOR:
        return False, f"relevancy {_score(relevancy)} < floor {RELEVANCY_FLOOR:g}"
    if faithfulness is not None and faithfulness >= FAITHFULNESS_PASS:
        return True, f"faithfulness {_score(faithfulness)} ≥ {FAITHFULNESS_PASS:g}"
    faithfulness_part = (
        "faithfulness not scored"
        if faithfulness is None
        else f"faithfulness {_score(faithfulness)} < {FAITHFULNESS_PASS:g}"
    )
    er_met = entity_recall is not None and entity_recall >= ER_PASS
    relevancy_met = relevancy is not None and relevancy >= RELEVANCY_PASS
    er_part = (
        "entity recall not applicable"
        if entity_recall is None
        else f"entity recall {_score(entity_recall)} {'≥' if er_met else '<'} {ER_PASS:g}"
    )
    relevancy_part = (
        "relevancy not scored"
        if relevancy is None
        else f"relevancy {_score(relevancy)} {'≥' if relevancy_met else '<'} {RELEVANCY_PASS:g}"
    )
    return er_met and relevancy_met, f"{faithfulness_part}; {er_part}, {relevancy_part}"
