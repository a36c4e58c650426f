"""Rows for the monitoring tests: real ``Answer``, ``Judgement`` and ``Feedback`` rows in the
test database, with ``created_at`` set in the past (an ``auto_now_add`` field is overwritten
with an UPDATE after the insert, as time passing would)."""

from __future__ import annotations

from datetime import datetime

from evaluation.models import Judgement
from zolsearch.search.contract import Generator, Outcome
from zolsearch.search.models import Answer, Feedback

GENERATORS = {
    Outcome.ANSWERED: Generator.EXTRACTIVE,
    Outcome.GATE_REJECTED: Generator.FALLBACK,
    Outcome.NO_RESULTS: Generator.FALLBACK,
    Outcome.REFUSED: Generator.REFUSAL,
    Outcome.RED_FLAG: Generator.RED_FLAG,
}


def answer_make(
    *,
    created_at: datetime,
    gate_score: float | None = 0.8,
    outcome: str = Outcome.ANSWERED,
    channel: str = Answer.Channel.API,
    question: str = "Wat zijn de symptomen van hartfalen?",
) -> Answer:
    answer = Answer.objects.create(
        channel=channel,
        question=question,
        language="nl",
        answer="Kortademigheid en vermoeidheid [1].",
        generator=GENERATORS[Outcome(outcome)],
        outcome=outcome,
        gate={} if gate_score is None else {"score": gate_score, "passed": gate_score >= 0.72},
        gate_passed=gate_score is not None and gate_score >= 0.72,
        gate_score=gate_score,
        embedding_model="use-multilingual-v3",
        config_hash="0" * 64,
    )
    Answer.objects.filter(pk=answer.pk).update(created_at=created_at)
    answer.created_at = created_at
    return answer


def judgement_make(
    *, answer: Answer, faithfulness: float, relevancy: float, created_at: datetime, judge_key: str = "local/1"
) -> Judgement:
    judgement = Judgement.objects.create(
        answer=answer,
        judge_key=judge_key,
        status=Judgement.Status.DONE,
        faithfulness=faithfulness,
        relevancy=relevancy,
    )
    Judgement.objects.filter(pk=judgement.pk).update(created_at=created_at)
    return judgement


def feedback_make(*, answer: Answer, created_at: datetime, client: str = "c1", helpful: bool = False) -> Feedback:
    feedback = Feedback.objects.create(answer=answer, helpful=helpful, comment="", client=client)
    Feedback.objects.filter(pk=feedback.pk).update(created_at=created_at)
    return feedback
