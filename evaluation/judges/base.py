"""The judge interface: one call scores an answer's faithfulness and relevancy.

Two implementations, chosen by settings (:func:`evaluation.judges.judge_get`): DeepEval's
FaithfulnessMetric and AnswerRelevancyMetric through an OpenAI-compatible endpoint
(``evaluation.judges.deepeval_judge``), and the offline local judge
(``evaluation.judges.local``). Scores are in [0, 1]; ``None`` means the judge could not score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.text import tokens_estimate, tokens_truncate

AUTHORITATIVE_TAG = "[Hospital data, authoritative]"


class JudgeUnavailable(Exception):
    """The judge could not score after its retries (network, timeouts, invalid JSON)."""


@dataclass(frozen=True)
class JudgeInput:
    """What the judge sees.

    ``answer``: the answer text without citation markers. ``context``: the retrieved passages the
    answer was composed from (plain text, best first). ``authoritative``: taxonomy lines (the
    hospital's curated graph: departments, doctors, phone numbers) that the answer may state;
    they are given to the judge tagged with :data:`AUTHORITATIVE_TAG` so name-heavy answers are
    not scored as unfaithful.
    """

    question: str
    answer: str
    context: tuple[str, ...] = ()
    authoritative: tuple[str, ...] = ()

    def context_with_tags(self) -> list[str]:
        """Authoritative lines first (tagged), then the retrieved passages."""
        return [f"{AUTHORITATIVE_TAG} {line}" for line in self.authoritative] + list(self.context)


@dataclass
class JudgeVerdict:
    """A judge's scores. ``faithfulness``/``relevancy`` in [0, 1] or ``None``.

    ``evidence``: per answer sentence (local judge: ``{"sentence", "supported", "support",
    "score"}``) or the judge model's verdicts. ``truncated``: the context was cut to the token
    budget; ``context_tokens``: tokens of the context actually sent (estimated by
    :func:`core.text.tokens_estimate`: words and punctuation marks). ``attempts``: calls made
    (retries included).
    """

    faithfulness: float | None
    relevancy: float | None
    evidence: list[dict[str, Any]] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    truncated: bool = False
    context_tokens: int = 0
    attempts: int = 1


class Judge(Protocol):
    """Anything with a stable ``key`` (stored on every judgement) and :meth:`judge`."""

    key: str

    def judge(self, item: JudgeInput) -> JudgeVerdict:
        """Score ``item``. Raises :class:`JudgeUnavailable` when it cannot."""
        ...


def context_truncate(passages: list[str], *, budget_tokens: int) -> tuple[list[str], bool, int]:
    """Keep passages in order until ``budget_tokens`` (estimated by
    :func:`core.text.tokens_estimate`) is reached; the passage that crosses the budget is cut
    after a whole word (:func:`core.text.tokens_truncate`). Returns ``(kept, truncated, tokens_kept)``.
    Raises ``ValueError`` for a budget < 1."""
    if budget_tokens < 1:
        raise ValueError("budget_tokens must be at least 1")
    kept: list[str] = []
    used = 0
    for passage in passages:
        cost = tokens_estimate(passage)
        if used + cost <= budget_tokens:
            kept.append(passage)
            used += cost
            continue
        cut = tokens_truncate(passage, tokens=budget_tokens - used)
        if cut:
            kept.append(cut)
            used += tokens_estimate(cut)
        return kept, True, used
    return kept, False, used
