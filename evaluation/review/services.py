"""Writes of the review queue: filling it from stored answers, assignment, verdicts, and turning
a verdict into a golden question, a pending alias or a calibration label.

The queue is filled outside the search request: after a live answer's background judgement
finishes (the Celery worker) and after a patient's feedback (both queue
``review_queue_sync_task`` for that one answer after commit), by ``manage.py review_sync``, by
the admin's "Refresh queue" button, and by any schedule that runs the task.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from core.privacy import identifiers_strip
from core.text import text_normalise
from evaluation.models import GoldenQuestion, GoldenSet, Judgement
from evaluation.review.models import Review, Verdict
from evaluation.review.rules import LOW_JUDGE_SCORE, AnswerSignals, review_risk, review_signals
from evaluation.review.selectors import QUEUE_CHANNELS, golden_set_names_committed, review_candidates
from evaluation.services.golden import golden_question_save, golden_set_new_version
from taxonomy.models import Alias, AliasOrigin, Entity, ReviewState
from zolsearch.search.contract import Outcome
from zolsearch.search.models import Feedback

logger = logging.getLogger(__name__)

REVIEW_GOLDEN_SET = "review"  # the set reviewed questions go to unless the evaluator picks another
_FINISHED = (Judgement.Status.DONE, Judgement.Status.SKIPPED, Judgement.Status.FAILED)


class ReviewInvalid(Exception):
    """The action does not fit the review (no verdict yet, already done, a bad value); the
    message says why, in words an evaluator understands."""


# --- filling the queue ---------------------------------------------------------------------


@dataclass(frozen=True)
class SyncResult:
    """Rows the sync ``created``, ``updated`` (kind, signals or risk of an open review changed)
    and ``removed`` (an open, untouched review whose answer no longer qualifies, e.g. a thumbs
    down changed to helpful)."""

    created: int = 0
    updated: int = 0
    removed: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"created": self.created, "updated": self.updated, "removed": self.removed}


def _row_values(signals: AnswerSignals) -> tuple[str, list[str], int]:
    kinds = review_signals(signals)
    return kinds[0], [str(k) for k in kinds], review_risk(signals)


def review_queue_sync(
    *,
    answer_ids: Sequence[int] | None = None,
    since: datetime | None = None,
    channels: Sequence[str] = QUEUE_CHANNELS,
) -> SyncResult:
    """Create a review for every qualifying answer that has none (rules:
    :mod:`evaluation.review.rules`), and refresh the kind, signals and risk of open reviews.

    ``answer_ids``: only these answers (then an open review nobody touched whose answer no
    longer qualifies is removed); ``since``: only answers created at or after it; ``channels``:
    the answers' channels (default: live API and batch runs). Idempotent: a second call with the
    same data changes nothing. A reviewed review is never changed. Safe to run concurrently
    (the one-to-one answer column and ``ignore_conflicts``; ``created`` then also counts rows a
    concurrent sync inserted first).
    """
    created = updated = removed = 0
    seen: set[int] = set()
    batch: list[tuple[int, AnswerSignals]] = []

    def flush() -> None:
        nonlocal created, updated
        ids = [pk for pk, _ in batch]
        existing = {r.answer_id: r for r in Review.objects.filter(answer_id__in=ids)}
        new, changed = [], []
        for answer_id, signals in batch:
            kind, kinds, risk = _row_values(signals)
            row = existing.get(answer_id)
            if row is None:
                row = Review(answer_id=answer_id, kind=kind, signals=kinds, risk=risk)
                row.clean_fields(exclude=["answer"])
                new.append(row)
            elif not row.verdict and (row.kind, row.signals, row.risk) != (kind, kinds, risk):
                row.kind, row.signals, row.risk = kind, kinds, risk
                changed.append(row)
        with transaction.atomic():
            created += len(Review.objects.bulk_create(new, ignore_conflicts=True))
            Review.objects.bulk_update(changed, ["kind", "signals", "risk"])
        updated += len(changed)
        batch.clear()

    for answer_id, signals in review_candidates(answer_ids=answer_ids, since=since, channels=channels):
        seen.add(answer_id)
        batch.append((answer_id, signals))
        if len(batch) >= 500:
            flush()
    if batch:
        flush()
    if answer_ids is not None:
        gone = Review.objects.filter(
            answer_id__in=[i for i in answer_ids if i not in seen],
            verdict="",
            assigned_to__isnull=True,
            golden_question__isnull=True,
            alias__isnull=True,
        )
        removed, _ = gone.delete()
    return SyncResult(created=created, updated=updated, removed=removed)


def _sync_enqueue(answer_id: int) -> None:
    from evaluation.review.tasks import review_queue_sync_task

    try:
        review_queue_sync_task.delay(answer_ids=[answer_id])
    except Exception:  # a broker failure must not break judging or the feedback call
        logger.exception("could not queue the review sync of answer %s", answer_id)


def review_sync_enqueue_on_judgement(sender: object, instance: Judgement, **kwargs: Any) -> None:
    """``post_save`` receiver of :class:`Judgement` (background judging, in the worker): when a
    live answer's judgement finished and the answer may belong in the queue (not answered, or a
    low score), queue its sync after commit."""
    if instance.status not in _FINISHED:
        return
    answer = instance.answer
    if answer.channel not in QUEUE_CHANNELS:
        return
    low = instance.status == Judgement.Status.DONE and any(
        score is not None and score < LOW_JUDGE_SCORE for score in (instance.faithfulness, instance.relevancy)
    )
    if answer.outcome != Outcome.ANSWERED or low:
        transaction.on_commit(lambda: _sync_enqueue(instance.answer_id))


def review_sync_enqueue_on_feedback(sender: object, instance: Feedback, **kwargs: Any) -> None:
    """``post_save`` receiver of :class:`Feedback`: queue the sync of its answer after commit (a
    thumbs down adds or raises a review; one changed to helpful may remove it)."""
    transaction.on_commit(lambda: _sync_enqueue(instance.answer_id))


# --- assignment and verdicts ---------------------------------------------------------------


def reviews_assign(*, review_ids: Sequence[int], user: User | None) -> int:
    """Assign the reviews to ``user`` (None: nobody). Returns how many rows changed."""
    return Review.objects.filter(pk__in=list(review_ids)).update(assigned_to=user)


def _verdict_check(verdict: str, reason: str) -> str:
    if verdict not in Verdict.values:
        raise ReviewInvalid(f"unknown verdict {verdict!r}; choose one of {', '.join(Verdict.values)}")
    reason = reason.strip()
    if not reason:
        raise ReviewInvalid("a verdict needs a reason")
    return reason


@transaction.atomic
def review_verdict_set(*, review_id: int, verdict: str, reason: str, user: User) -> Review:
    """Record ``verdict`` (a :class:`Verdict` value) with ``reason`` by ``user`` now; a new
    verdict replaces an earlier one (a calibration label then follows the new verdict). An
    unassigned review is assigned to ``user``. Raises :class:`ReviewInvalid` for an unknown
    verdict or an empty reason, ``Review.DoesNotExist`` when it is gone."""
    reason = _verdict_check(verdict, reason)
    review = Review.objects.select_for_update().get(pk=review_id)
    review.verdict, review.reason = verdict, reason
    review.reviewed_by, review.reviewed_at = user, timezone.now()
    if review.assigned_to_id is None:
        review.assigned_to = user
    review.full_clean(exclude=["answer"])
    review.save()
    return review


@transaction.atomic
def reviews_verdict_set(*, review_ids: Sequence[int], verdict: str, reason: str, user: User) -> int:
    """:func:`review_verdict_set` for several reviews with one verdict and reason. Returns how
    many were set. Raises :class:`ReviewInvalid` before changing anything."""
    _verdict_check(verdict, reason)
    ids = list(Review.objects.filter(pk__in=list(review_ids)).values_list("pk", flat=True))
    for review_id in ids:
        review_verdict_set(review_id=review_id, verdict=verdict, reason=reason, user=user)
    return len(ids)


def reviews_calibration_label(*, review_ids: Sequence[int], label: bool = True) -> tuple[int, int]:
    """Use the reviews' verdicts as calibration labels (``label`` False: stop using them).
    Reviews without a verdict are skipped. Returns ``(changed, skipped)``."""
    rows = Review.objects.filter(pk__in=list(review_ids))
    skipped = rows.filter(verdict="").count() if label else 0
    changed = rows.exclude(verdict="").exclude(calibration_label=label).update(calibration_label=label)
    return changed, skipped


# --- turning a verdict into a golden question or an alias ----------------------------------


def _reviewed(review_id: int) -> Review:
    review = Review.objects.select_for_update().select_related("answer").get(pk=review_id)
    if not review.verdict:
        raise ReviewInvalid("give a verdict first: the action turns the verdict into something")
    return review


MUST_REFUSE_VERDICTS = frozenset({Verdict.RIGHTLY_REFUSED, Verdict.UNSAFE})


@dataclass(frozen=True)
class GoldenDraft:
    """What the golden-question form proposes for a review: the question with personal
    identifiers replaced (``removed``: their kinds), the cited urls of a good or wrongly
    refused draft, the category and ``must_refuse`` read from the verdict."""

    question: str
    removed: list[str]
    expected_urls: list[str]
    category: str
    must_refuse: bool


def review_golden_draft(*, review: Review, citations: Sequence[dict[str, Any]], category: str) -> GoldenDraft:
    """The proposal for :func:`review_golden_question_create` (no write). ``citations``: the
    draft's ``{n, title, url, …}`` (see ``ReviewDetail.citations``)."""
    answer = review.answer
    text, removed = identifiers_strip(answer.question, language=answer.language)
    urls: list[str] = []
    if review.verdict in (Verdict.GOOD_ANSWER, Verdict.WRONGLY_REFUSED):
        urls = list(dict.fromkeys(str(c["url"]) for c in citations if c.get("url")))
    return GoldenDraft(
        question=text,
        removed=removed,
        expected_urls=urls,
        category=category or "general",
        must_refuse=review.verdict in MUST_REFUSE_VERDICTS,
    )


@transaction.atomic
def review_golden_question_create(
    *,
    review_id: int,
    golden_set_name: str = REVIEW_GOLDEN_SET,
    question: str = "",
    expected_urls: Sequence[str] = (),
    expected_entities: Sequence[str] = (),
    category: str = "general",
    must_refuse: bool = False,
) -> tuple[GoldenQuestion, list[str]]:
    """Add the reviewed question to the latest version of golden set ``golden_set_name``
    (created as version 1 when there is none; a frozen latest version is first copied to a new
    version, so a version a run used never changes: ``evaluation.services.golden``).

    ``question`` (default: the asked question) is de-identified with
    ``core.privacy.identifiers_strip`` before it is stored, as is the reason kept in the notes.
    qid ``review:<review id>``; tags ``review``, the verdict and the kind. Returns the question
    and the kinds of identifiers removed. Raises :class:`ReviewInvalid` (no verdict, already a
    golden question, a committed set, a bad value).
    """
    review = _reviewed(review_id)
    if review.golden_question_id is not None:
        raise ReviewInvalid("this review is already a golden question")
    name = golden_set_name.strip() or REVIEW_GOLDEN_SET
    if name in golden_set_names_committed():
        raise ReviewInvalid(
            f"golden set {name!r} is kept in data/golden/{name}.jsonl and re-imported from it: add the question "
            "to that file, or pick another set"
        )
    answer = review.answer
    text, removed = identifiers_strip(question.strip() or answer.question, language=answer.language)
    reason, _kinds = identifiers_strip(review.reason, language=answer.language)
    golden_set = GoldenSet.objects.select_for_update().filter(name=name).order_by("-version").first()
    if golden_set is None:
        golden_set = GoldenSet(
            name=name, description="Questions turned into golden questions in the review queue.", source="review queue"
        )
        try:
            golden_set.full_clean(validate_unique=False)
        except ValidationError as exc:
            raise ReviewInvalid(f"golden set name {name!r}: {'; '.join(exc.messages)}") from exc
        golden_set.save()
    elif golden_set.frozen:
        golden_set = golden_set_new_version(golden_set=golden_set)
    qid = f"review:{review.pk}"
    if golden_set.questions.filter(qid=qid).exists():
        raise ReviewInvalid(f"{golden_set} already has question {qid}")
    position = (golden_set.questions.aggregate(p=Max("position"))["p"] or 0) + 1
    row = GoldenQuestion(
        golden_set=golden_set,
        qid=qid,
        position=position,
        question=text,
        language=answer.language,
        category=category.strip() or "general",
        expected_urls=[u.strip() for u in expected_urls if u.strip()],
        expected_entities=[e.strip() for e in expected_entities if e.strip()],
        must_refuse=must_refuse,
        tags=["review", f"verdict:{review.verdict}", f"kind:{review.kind}"],
        notes=f"From review {review.pk} of answer {answer.trace_id} ({review.get_verdict_display()}): {reason}",
    )
    try:
        golden_question_save(question=row)
    except ValidationError as exc:
        raise ReviewInvalid("; ".join(exc.messages)) from exc
    review.golden_question = row
    review.save(update_fields=["golden_question"])
    return row, removed


@transaction.atomic
def review_alias_propose(
    *, review_id: int, entity_id: int, text: str, language: str = "", user: User | None = None
) -> tuple[Alias, bool]:
    """Propose ``text`` as another name of taxonomy entity ``entity_id`` in ``language``
    (default: the question's), as a PENDING alias an editor approves or rejects (it is not used
    by the resolver until then), and link it to the review. An alias with the same normalised
    text for that entity and language is linked instead of a new one. Returns ``(alias,
    created)``. Raises :class:`ReviewInvalid` (no verdict, empty text, unknown entity)."""
    review = _reviewed(review_id)
    text = " ".join(text.split())
    if not text_normalise(text):
        raise ReviewInvalid("type the alias: the words patients use for the entity")
    entity = Entity.objects.filter(pk=entity_id).first()
    if entity is None:
        raise ReviewInvalid("pick the entity the alias names")
    language = (language or review.answer.language).strip()
    alias = Alias.objects.filter(entity=entity, normalised=text_normalise(text), language=language).first()
    created = alias is None
    if alias is None:
        alias = Alias(
            entity=entity,
            text=text,
            language=language,
            origin=AliasOrigin.EDITOR,
            review_state=ReviewState.PENDING,
            created_by=user,
        )
        alias.normalised = text_normalise(text)
        try:
            alias.full_clean()
        except ValidationError as exc:
            raise ReviewInvalid("; ".join(exc.messages)) from exc
        alias.save()
    review.alias = alias
    review.save(update_fields=["alias"])
    return alias, created
