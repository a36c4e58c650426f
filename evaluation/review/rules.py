"""Which answers go to the review queue, why (kind and signals), and in what order (risk).

Pure functions over plain values (:class:`AnswerSignals`), so the rules are tested without rows.

Signals of one answer:

========================  ===================================================================
``red_flag``              outcome ``red_flag``: routed to 112, 1733, 070 245 245 or 1813
``guard_refused``         outcome ``refused`` (input or output guard)
``gate_rejected``         outcome ``gate_rejected`` (the draft is kept in the trace)
``crag_refused``          outcome ``no_results`` and CRAG stopped the run (retrieval too weak)
``no_results``            outcome ``no_results`` otherwise (nothing usable found)
``low_judge_score``       outcome ``answered`` and a finished judgement with faithfulness or
                          relevancy below :data:`LOW_JUDGE_SCORE` (the patient read it)
``thumbs_down``           at least one "not helpful" feedback
========================  ===================================================================

Risk (0–100, reviewed highest first): the highest base of its signals, plus
:data:`EXTRA_SIGNAL_RISK` for every further signal, at most 100. Bases, by the harm a wrong
decision can do to a patient (a wrong safety route or an unsafe draft first, then a wrong answer
a patient read, then a patient sent away without an answer):

========================  ====  ===============================================================
red_flag                    90  a missed or false emergency route
guard_refused (unsafe)      85  refusal reason ``unsafe_output`` or ``harmful``
low_judge_score          60–80  60 + 20 · (0.5 − worst score) / 0.5: lower support, higher risk
thumbs_down (answered)      70  a served answer a patient found unhelpful
guard_refused (other)       55  medical advice, out of scope, prompt injection, guard down
thumbs_down (fallback)      45  a fallback a patient found unhelpful
gate_rejected               40  a fallback instead of a drafted answer
crag_refused                35  a fallback before drafting
no_results                  30  nothing found
========================  ====  ===============================================================

The kind is the signal with the highest base. The numbers are an ordering chosen for this
project (issue 12: "red flags and unsafe first"), not a measured probability.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.review.models import Kind
from zolsearch.search.contract import Outcome, RefusalReason

# The cut the composite pass criterion and the calibration cohorts use for a supported answer:
# faithfulness ≥ 0.5 passes (evaluation.metrics.criteria), and calibration's "related" cohort is
# faithfulness and relevancy ≥ 0.5 (evaluation.calibration_cohorts).
LOW_JUDGE_SCORE = 0.5
EXTRA_SIGNAL_RISK = 5
UNSAFE_REFUSALS = frozenset({RefusalReason.UNSAFE_OUTPUT, RefusalReason.HARMFUL})

_BASE: dict[str, int] = {
    Kind.RED_FLAG: 90,
    Kind.GUARD_REFUSED: 55,
    Kind.THUMBS_DOWN: 70,
    Kind.GATE_REJECTED: 40,
    Kind.CRAG_REFUSED: 35,
    Kind.NO_RESULTS: 30,
}
_UNSAFE_REFUSAL_BASE = 85
_FALLBACK_THUMBS_DOWN_BASE = 45
_LOW_JUDGE_MIN, _LOW_JUDGE_SPAN = 60, 20


@dataclass(frozen=True)
class AnswerSignals:
    """What the rules read of one stored answer.

    ``worst_judge_score``: the lowest faithfulness or relevancy of its finished judgements, in
    [0, 1] (None: not judged). ``crag_refused``: CRAG ended the run. ``thumbs_down``: a "not
    helpful" feedback exists.
    """

    outcome: str
    refusal_reason: str = ""
    crag_refused: bool = False
    worst_judge_score: float | None = None
    thumbs_down: bool = False


def review_signals(signals: AnswerSignals) -> list[str]:
    """The kinds that apply to the answer, strongest first ([] when it does not belong in the
    queue)."""
    found: list[str] = []
    outcome = signals.outcome
    if outcome == Outcome.RED_FLAG:
        found.append(Kind.RED_FLAG)
    elif outcome == Outcome.REFUSED:
        found.append(Kind.GUARD_REFUSED)
    elif outcome == Outcome.GATE_REJECTED:
        found.append(Kind.GATE_REJECTED)
    elif outcome == Outcome.NO_RESULTS:
        found.append(Kind.CRAG_REFUSED if signals.crag_refused else Kind.NO_RESULTS)
    elif (
        outcome == Outcome.ANSWERED
        and signals.worst_judge_score is not None
        and signals.worst_judge_score < LOW_JUDGE_SCORE
    ):
        found.append(Kind.LOW_JUDGE_SCORE)
    if signals.thumbs_down:
        found.append(Kind.THUMBS_DOWN)
    return sorted(found, key=lambda kind: -_base(kind, signals))


def _base(kind: str, signals: AnswerSignals) -> int:
    if kind == Kind.GUARD_REFUSED and signals.refusal_reason in UNSAFE_REFUSALS:
        return _UNSAFE_REFUSAL_BASE
    if kind == Kind.THUMBS_DOWN and signals.outcome != Outcome.ANSWERED:
        return _FALLBACK_THUMBS_DOWN_BASE
    if kind == Kind.LOW_JUDGE_SCORE:
        worst = min(max(signals.worst_judge_score or 0.0, 0.0), LOW_JUDGE_SCORE)
        return _LOW_JUDGE_MIN + round(_LOW_JUDGE_SPAN * (LOW_JUDGE_SCORE - worst) / LOW_JUDGE_SCORE)
    return _BASE[kind]


def review_risk(signals: AnswerSignals) -> int:
    """The answer's risk in [0, 100] by the table of this module; 0 when it has no signal."""
    kinds = review_signals(signals)
    if not kinds:
        return 0
    return min(100, _base(kinds[0], signals) + EXTRA_SIGNAL_RISK * (len(kinds) - 1))
