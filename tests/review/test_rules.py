"""The queue's rules: which answers qualify, their kind, and the risk order (red flags and
unsafe refusals first)."""

from __future__ import annotations

import pytest

from evaluation.review.models import Kind
from evaluation.review.rules import AnswerSignals, review_risk, review_signals


@pytest.mark.parametrize(
    ("signals", "kinds", "risk"),
    [
        (AnswerSignals(outcome="answered"), [], 0),
        (AnswerSignals(outcome="answered", worst_judge_score=0.5), [], 0),  # 0.5 is supported
        (AnswerSignals(outcome="red_flag"), [Kind.RED_FLAG], 90),
        (AnswerSignals(outcome="refused", refusal_reason="harmful"), [Kind.GUARD_REFUSED], 85),
        (AnswerSignals(outcome="refused", refusal_reason="unsafe_output"), [Kind.GUARD_REFUSED], 85),
        (AnswerSignals(outcome="refused", refusal_reason="medical_advice"), [Kind.GUARD_REFUSED], 55),
        (AnswerSignals(outcome="gate_rejected"), [Kind.GATE_REJECTED], 40),
        (AnswerSignals(outcome="no_results", crag_refused=True), [Kind.CRAG_REFUSED], 35),
        (AnswerSignals(outcome="no_results"), [Kind.NO_RESULTS], 30),
        (AnswerSignals(outcome="answered", worst_judge_score=0.0), [Kind.LOW_JUDGE_SCORE], 80),
        (AnswerSignals(outcome="answered", worst_judge_score=0.25), [Kind.LOW_JUDGE_SCORE], 70),
        (AnswerSignals(outcome="answered", worst_judge_score=0.49), [Kind.LOW_JUDGE_SCORE], 60),
        (AnswerSignals(outcome="answered", thumbs_down=True), [Kind.THUMBS_DOWN], 70),
        # a thumbs down on a fallback ranks below one on an answer a patient read, but it is
        # the stronger of the two signals of a gate rejection; each further signal adds 5
        (AnswerSignals(outcome="gate_rejected", thumbs_down=True), [Kind.THUMBS_DOWN, Kind.GATE_REJECTED], 50),
        (
            AnswerSignals(outcome="answered", worst_judge_score=0.1, thumbs_down=True),
            [Kind.LOW_JUDGE_SCORE, Kind.THUMBS_DOWN],
            81,
        ),
        (AnswerSignals(outcome="red_flag", thumbs_down=True), [Kind.RED_FLAG, Kind.THUMBS_DOWN], 95),
        # a judge score of a refused draft is not a served wrong answer: no low_judge_score signal
        (AnswerSignals(outcome="gate_rejected", worst_judge_score=0.1), [Kind.GATE_REJECTED], 40),
    ],
)
def test_signals_kind_and_risk(signals: AnswerSignals, kinds: list[str], risk: int) -> None:
    assert review_signals(signals) == kinds
    assert review_risk(signals) == risk


def test_red_flags_and_unsafe_refusals_outrank_everything_else() -> None:
    """GIVEN one answer of every kind WHEN ordered by risk THEN red flag, unsafe refusal, then
    served answers that may be wrong, then fallbacks."""
    cases = {
        "red_flag": AnswerSignals(outcome="red_flag"),
        "unsafe": AnswerSignals(outcome="refused", refusal_reason="unsafe_output"),
        "low_judge": AnswerSignals(outcome="answered", worst_judge_score=0.0),
        "thumbs_down": AnswerSignals(outcome="answered", thumbs_down=True),
        "advice": AnswerSignals(outcome="refused", refusal_reason="medical_advice"),
        "gate": AnswerSignals(outcome="gate_rejected"),
        "crag": AnswerSignals(outcome="no_results", crag_refused=True),
        "none": AnswerSignals(outcome="no_results"),
    }
    order = sorted(cases, key=lambda name: -review_risk(cases[name]))
    assert order == ["red_flag", "unsafe", "low_judge", "thumbs_down", "advice", "gate", "crag", "none"]
    assert all(0 <= review_risk(s) <= 100 for s in cases.values())
