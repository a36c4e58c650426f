"""Reads of the review queue: the queue itself, what the review page shows of one answer, the
answers that qualify for the queue, and the calibration labels evaluators chose."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import Exists, F, FloatField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Least

from evaluation.models import GoldenSet, Judgement
from evaluation.review.models import NEGATIVE_VERDICTS, POSITIVE_VERDICTS, Review
from evaluation.review.rules import LOW_JUDGE_SCORE, AnswerSignals
from zolsearch.search.contract import AnswerTrace, Outcome
from zolsearch.search.models import Answer, Feedback
from zolsearch.search.selectors import answer_trace, chunks_by_ids

# Live traffic and batch runs. Evaluation-run answers are scored against their golden question
# by the run itself; `manage.py review_sync --channel evaluation` queues them on request.
QUEUE_CHANNELS: tuple[str, ...] = (Answer.Channel.API, Answer.Channel.BATCH)
_NOT_ANSWERED = (Outcome.GATE_REJECTED, Outcome.NO_RESULTS, Outcome.REFUSED, Outcome.RED_FLAG)
CRAG_STAGE = "crag"  # the CRAG stage's name (zolsearch.search.stages.rerank.CragStage)


# --- calibration labels --------------------------------------------------------------------


@dataclass(frozen=True)
class CalibrationLabel:
    """One reviewed answer an evaluator chose as a calibration label.

    ``positive``: the draft should pass the gate (verdict good answer or wrongly refused);
    False: it should be refused (rightly refused, wrong answer, unsafe). ``gate_score``: the
    fast gate's score of the answer, in [−1, 1] (None: the gate did not run). ``embedding_model``:
    the model key the score was computed with; ``language``: the question's language.
    """

    answer_id: int
    language: str
    gate_score: float | None
    embedding_model: str
    positive: bool


def calibration_labels(*, model_key: str | None = None) -> list[CalibrationLabel]:
    """Every review marked as a calibration label with a verdict, oldest review first;
    ``model_key``: only answers scored by that embedding model. One query."""
    rows = Review.objects.filter(calibration_label=True, verdict__in=[*POSITIVE_VERDICTS, *NEGATIVE_VERDICTS])
    if model_key is not None:
        rows = rows.filter(answer__embedding_model=model_key)
    values = rows.order_by("reviewed_at", "pk").values_list(
        "answer_id", "answer__language", "answer__gate_score", "answer__embedding_model", "verdict"
    )
    return [
        CalibrationLabel(
            answer_id=answer_id,
            language=language,
            gate_score=gate_score,
            embedding_model=embedding_model,
            positive=verdict in POSITIVE_VERDICTS,
        )
        for answer_id, language, gate_score, embedding_model, verdict in values
    ]


# --- the queue -----------------------------------------------------------------------------


def _worst_judge_score(answer_ref: str) -> Subquery:
    """The lowest faithfulness or relevancy of the finished judgements of the outer row's answer
    (``answer_ref``: the outer field holding the answer id); None when none finished."""
    scores = (
        Judgement.objects.filter(answer=OuterRef(answer_ref), status=Judgement.Status.DONE)
        .annotate(
            worst=Least(
                Coalesce("faithfulness", Value(1.0), output_field=FloatField()),
                Coalesce("relevancy", Value(1.0), output_field=FloatField()),
            )
        )
        .order_by("worst")
        .values("worst")[:1]
    )
    return Subquery(scores, output_field=FloatField())


def review_queue() -> QuerySet[Review]:
    """The queue as the admin lists it: open reviews first, then by risk (highest first), then
    newest answer first; with the answer, the assignee and ``judge_score`` (the lowest finished
    judge score of the answer, [0, 1] or None) in the same query."""
    return (
        Review.objects.select_related("answer", "assigned_to", "reviewed_by")
        .defer("answer__trace", "answer__config", "answer__chunk_scores", "answer__timings_ms")
        .annotate(judge_score=_worst_judge_score("answer_id"))
        .order_by(F("reviewed_at").desc(nulls_first=True), "-risk", "-answer__created_at", "-pk")
    )


def review_languages() -> list[str]:
    """The languages of the queued answers, sorted. One query."""
    return list(Review.objects.values_list("answer__language", flat=True).distinct().order_by("answer__language"))


def review_candidates(
    *,
    answer_ids: Sequence[int] | None = None,
    since: datetime | None = None,
    channels: Sequence[str] = QUEUE_CHANNELS,
    batch_size: int = 500,
) -> Iterator[tuple[int, AnswerSignals]]:
    """``(answer id, signals)`` of every answer of ``channels`` that qualifies for the queue
    (see :mod:`evaluation.review.rules`): not answered, answered with a low judge score, or
    with a thumbs down; restricted to ``answer_ids`` and to answers created at or after
    ``since`` when given. Reads ``batch_size`` answers per query (the trace only of the
    ``no_results`` ones, to tell CRAG's refusals apart)."""
    low = Exists(
        Judgement.objects.filter(answer=OuterRef("pk"), status=Judgement.Status.DONE).filter(
            Q(faithfulness__lt=LOW_JUDGE_SCORE) | Q(relevancy__lt=LOW_JUDGE_SCORE)
        )
    )
    down = Exists(Feedback.objects.filter(answer=OuterRef("pk"), helpful=False))
    answers = Answer.objects.filter(channel__in=list(channels))
    if answer_ids is not None:
        answers = answers.filter(pk__in=list(answer_ids))
    if since is not None:
        answers = answers.filter(created_at__gte=since)
    answers = (
        answers.annotate(thumbs_down=down, worst_judge_score=_worst_judge_score("pk"))
        .filter(Q(outcome__in=_NOT_ANSWERED) | (Q(outcome=Outcome.ANSWERED) & low) | Q(thumbs_down=True))
        .order_by("pk")
    )
    rows = answers.values_list("pk", "outcome", "refusal_reason", "worst_judge_score", "thumbs_down")
    last = 0
    while True:
        batch = list(rows.filter(pk__gt=last)[:batch_size])
        if not batch:
            return
        last = batch[-1][0]
        no_results = [pk for pk, outcome, *_ in batch if outcome == Outcome.NO_RESULTS]
        crag = {a.pk for a in Answer.objects.filter(pk__in=no_results).only("pk", "trace") if _crag_stopped(a)}
        for pk, outcome, refusal_reason, worst, thumbs_down in batch:
            yield (
                pk,
                AnswerSignals(
                    outcome=outcome,
                    refusal_reason=refusal_reason,
                    crag_refused=pk in crag,
                    worst_judge_score=worst,
                    thumbs_down=bool(thumbs_down),
                ),
            )


def _crag_stopped(answer: Answer) -> bool:
    return answer_trace(answer=answer).stop_stage == CRAG_STAGE


# --- the review page -----------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkRow:
    """One retrieved chunk of the answer, in final rank order. Scores: ``rrf`` (fused), ``dense``
    (cosine, [−1, 1]), ``bm25`` (lexical, ≥ 0, comparable within one answer only), ``rerank``;
    None where that retriever did not find it. ``cited``: the (served or refused) draft quotes it."""

    rank: int
    chunk_id: int
    title: str
    url: str
    source: str
    language: str
    text: str
    rrf: float | None
    dense: float | None
    bm25: float | None
    rerank: float | None
    cited: bool


@dataclass(frozen=True)
class ReviewDetail:
    """What the review page shows of one queued answer, side by side.

    ``draft``: the text judged (the served answer, or the draft the gate or output guard
    refused, read from the trace; "" when nothing was drafted); ``draft_label`` says which.
    ``served``: what the patient got. ``citations``: the draft's ``{n, title, url, snippet,
    source}``. ``config``: the frozen pipeline configuration as indented JSON.
    """

    review: Review
    answer: Answer
    trace: AnswerTrace
    draft: str
    draft_label: str
    served: str
    citations: list[dict[str, Any]]
    chunks: list[ChunkRow]
    judgements: list[Judgement]
    feedback: list[Feedback]
    config: str
    signals: list[str] = field(default_factory=list)


def review_detail(*, review_id: int) -> ReviewDetail | None:
    """The review page's material of review ``review_id`` (None when it is gone). Four queries:
    the review with its answer and people, the chunks, the judgements, the feedback."""
    review = (
        Review.objects.select_related("answer", "assigned_to", "reviewed_by", "golden_question__golden_set", "alias")
        .filter(pk=review_id)
        .first()
    )
    if review is None:
        return None
    answer = review.answer
    trace = answer_trace(answer=answer)
    if answer.outcome == Outcome.ANSWERED:
        draft, label, citations = answer.answer, "served answer", list(answer.citations)
    elif trace.rejected_answer:
        who = "quality gate" if answer.outcome == Outcome.GATE_REJECTED else "output guard"
        draft, label, citations = trace.rejected_answer, f"draft refused by the {who}", list(trace.draft_citations)
    else:
        draft, label, citations = "", "nothing was drafted", list(trace.fallback_citations)
    cited = set(trace.cited_chunk_ids)
    scores = [row for row in answer.chunk_scores or [] if isinstance(row, dict) and row.get("chunk_id") is not None]
    chunks = chunks_by_ids([int(row["chunk_id"]) for row in scores]) if scores else {}
    rows = []
    for position, row in enumerate(scores, start=1):
        chunk = chunks.get(int(row["chunk_id"]))
        rows.append(
            ChunkRow(
                rank=int(row.get("rank") or position),
                chunk_id=int(row["chunk_id"]),
                title=chunk.document.title if chunk else str(row.get("external_id") or "(deleted chunk)"),
                url=(chunk.document.url if chunk else "") or str(row.get("url") or ""),
                source=chunk.document.source.name if chunk else "",
                language=chunk.language if chunk else "",
                text=chunk.text if chunk else "",
                rrf=_number(row.get("rrf")),
                dense=_number(row.get("dense")),
                bm25=_number(row.get("bm25")),
                rerank=_number(row.get("rerank")),
                cited=int(row["chunk_id"]) in cited,
            )
        )
    return ReviewDetail(
        review=review,
        answer=answer,
        trace=trace,
        draft=draft,
        draft_label=label,
        served=answer.answer,
        citations=citations,
        chunks=rows,
        judgements=list(answer.judgements.order_by("-created_at")),
        feedback=list(answer.feedback.order_by("-created_at")),
        config=json.dumps(answer.config, indent=2, sort_keys=True, ensure_ascii=False),
        signals=list(review.signals),
    )


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# --- golden sets a review may add to -------------------------------------------------------


def golden_set_names_committed() -> frozenset[str]:
    """Names of the golden sets kept as committed files (``GOLDEN_SETS_DIR/<name>.jsonl``): they
    are re-imported from the file, so a question added in the admin would be lost."""
    folder = Path(settings.GOLDEN_SETS_DIR)
    return frozenset(p.stem for p in folder.glob("*.jsonl")) if folder.is_dir() else frozenset()


def golden_set_names_for_review() -> list[str]:
    """Names of the stored golden sets a reviewed question may be added to (every set but the
    committed ones), sorted. One query."""
    committed = golden_set_names_committed()
    names: Iterable[str] = GoldenSet.objects.values_list("name", flat=True).distinct().order_by("name")
    return [name for name in names if name not in committed]
