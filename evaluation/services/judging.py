"""Background judging of served answers: sampling, daily budget, cache, and the judge call.

Every stored answer is announced by ``zolsearch.search.services.answer_stored`` after commit;
:func:`answer_judging_enqueue` (connected in ``EvaluationConfig.ready``) queues
``answer_judge_task`` for it, and the API response never waits for the judge. Evaluation runs
judge their own answers inline through :func:`answer_judge` (no sampling, no budget).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.fingerprint import source_fingerprint
from core.held import MaxAgeHeld
from core.observability import JUDGE_SHED_TOTAL, judge_observe, queue_depth
from evaluation.judges import Judge, JudgeInput, JudgeUnavailable, judge_get
from evaluation.models import Judgement
from evaluation.selectors import judge_input_for_answer
from zolsearch.search.models import Answer

logger = logging.getLogger(__name__)
# How long a worker's claim on a judgement holds before another may take it over: longer than
# the judge task's hard time limit (360 s), so a live judge call is never duplicated.
CLAIM_LEASE = timedelta(minutes=10)


def judge_cache_key(*, item: JudgeInput, judge_key: str) -> str:
    """SHA-256 hex of (question, context, authoritative lines, answer, judge key, the judges'
    code fingerprint): identical judge requests share one result, and a change to the judges'
    code (prompts, parsing, the local heuristic) never reuses an older judgement."""
    payload = json.dumps(
        [
            judge_key,
            source_fingerprint("evaluation/judges"),
            item.question,
            list(item.context),
            list(item.authoritative),
            item.answer,
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _sample_position(trace_id: str) -> float:
    """A uniform number in [0, 1) derived from the trace id (same answer, same decision)."""
    return int(hashlib.sha256(str(trace_id).encode()).hexdigest()[:8], 16) / 2**32


def answer_judging_wanted(*, answer: Answer, judge_key: str) -> tuple[bool, str]:
    """Whether background judging should judge ``answer`` now, and why.

    Low fast-gate score (rejected, or score < ``JUDGE_ALWAYS_BELOW_GATE``) → always. Otherwise
    the trace id's sample position must be < ``JUDGE_SAMPLE_RATE`` and fewer than
    ``JUDGE_DAILY_BUDGET`` judge calls (cache hits are free) may have been made today for this
    judge (0 = no budget).
    """
    low_gate = answer.outcome == Answer.Outcome.GATE_REJECTED or (
        answer.gate_score is not None and answer.gate_score < settings.JUDGE_ALWAYS_BELOW_GATE
    )
    if low_gate:
        return True, "low fast-gate score: always judged"
    if _sample_position(str(answer.trace_id)) >= settings.JUDGE_SAMPLE_RATE:
        return False, f"not sampled (rate {settings.JUDGE_SAMPLE_RATE})"
    budget = settings.JUDGE_DAILY_BUDGET
    if budget > 0:
        start = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
        used = Judgement.objects.filter(
            judge_key=judge_key,
            cached=False,
            status__in=[Judgement.Status.DONE, Judgement.Status.FAILED],
            created_at__gte=start,
            created_at__lt=start + timedelta(days=1),
        ).count()
        if used >= budget:
            return False, f"daily judge budget of {budget} calls used"
    return True, "sampled"


def _observe(judgement: Judgement) -> None:
    if judgement.answer.channel == Answer.Channel.EVALUATION:
        return  # evaluation runs report their own numbers; Prometheus shows live traffic
    try:
        judge_observe(
            judge_key=judgement.judge_key,
            status="cached" if judgement.cached else judgement.status,
            faithfulness=judgement.faithfulness,
            relevancy=judgement.relevancy,
            latency_ms=judgement.latency_ms,
        )
    except Exception:  # metrics must never break judging
        logger.exception("could not record judge metrics")


def _finish(judgement: Judgement, **fields: object) -> Judgement:
    for name, value in fields.items():
        setattr(judgement, name, value)
    judgement.finished_at = timezone.now()
    judgement.full_clean(validate_unique=False)
    judgement.save()
    _observe(judgement)
    return judgement


def answer_judge(*, answer_id: int, judge: Judge | None = None, background: bool = False) -> Judgement | None:
    """Judge stored answer ``answer_id`` with ``judge`` (default: the configured one).

    Returns ``None`` when the answer is gone; the existing judgement when it is already DONE or
    SKIPPED (status guard) or another worker holds it (RUNNING within :data:`CLAIM_LEASE`);
    otherwise the new judgement: SKIPPED (nothing to judge, or not
    sampled / over budget when ``background``), DONE from the cache (an identical request was
    judged before: ``cached``, latency 0), or DONE from a judge call. Raises
    :class:`JudgeUnavailable` after recording the judgement FAILED with the error, so a task
    can retry.
    """
    answer = Answer.objects.filter(pk=answer_id).first()
    if answer is None:
        return None
    judge = judge or judge_get()
    try:
        with transaction.atomic():
            judgement, _ = Judgement.objects.get_or_create(answer=answer, judge_key=judge.key)
    except IntegrityError:  # a concurrent worker created it first
        judgement = Judgement.objects.get(answer=answer, judge_key=judge.key)
    if judgement.status in (Judgement.Status.DONE, Judgement.Status.SKIPPED):
        return judgement
    # Claim it (a conditional update), so two deliveries of the same task never both call the
    # judge; a claim older than CLAIM_LEASE (a worker that died) may be taken over.
    now = timezone.now()
    claimable = Q(status__in=[Judgement.Status.PENDING, Judgement.Status.FAILED]) | Q(
        status=Judgement.Status.RUNNING, claimed_at__lt=now - CLAIM_LEASE
    )
    if not Judgement.objects.filter(claimable, pk=judgement.pk).update(status=Judgement.Status.RUNNING, claimed_at=now):
        judgement.refresh_from_db()
        return judgement
    judgement.status, judgement.claimed_at = Judgement.Status.RUNNING, now
    item = judge_input_for_answer(answer=answer)
    if item is None:
        return _finish(judgement, status=Judgement.Status.SKIPPED, reasons={"skipped": "no drafted answer to judge"})
    if background:
        wanted, why = answer_judging_wanted(answer=answer, judge_key=judge.key)
        if not wanted:
            return _finish(judgement, status=Judgement.Status.SKIPPED, reasons={"skipped": why})
    cache_key = judge_cache_key(item=item, judge_key=judge.key)
    judgement.cache_key = cache_key
    hit = (
        Judgement.objects.filter(cache_key=cache_key, judge_key=judge.key, status=Judgement.Status.DONE)
        .exclude(pk=judgement.pk)
        .order_by("created_at")
        .first()
    )
    if hit is not None:
        return _finish(
            judgement,
            status=Judgement.Status.DONE,
            faithfulness=hit.faithfulness,
            relevancy=hit.relevancy,
            evidence=hit.evidence,
            reasons={**hit.reasons, "cached_from": hit.pk},
            context_tokens=hit.context_tokens,
            truncated=hit.truncated,
            cached=True,
            latency_ms=0.0,
            error="",
        )
    started = time.perf_counter()
    try:
        verdict = judge.judge(item)
    except JudgeUnavailable as exc:
        _finish(
            judgement,
            status=Judgement.Status.FAILED,
            error=str(exc),
            attempts=judgement.attempts + 1,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        raise
    return _finish(
        judgement,
        status=Judgement.Status.DONE,
        faithfulness=verdict.faithfulness,
        relevancy=verdict.relevancy,
        evidence=verdict.evidence,
        reasons=verdict.reasons,
        context_tokens=verdict.context_tokens,
        truncated=verdict.truncated,
        cached=False,
        attempts=judgement.attempts + verdict.attempts,
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        error="",
    )


# Seconds a process reuses the worker queue's depth it read (one broker read per process per
# interval, not one per request: the filesystem broker's is a scan of its folder).
JUDGE_QUEUE_CHECK_S = 5.0


def _queue_depth_or_zero() -> int:
    """The default queue's depth, 0 (logged) when the broker cannot be read."""
    try:
        return queue_depth()
    except Exception:  # the broker's own errors vary by transport; queueing reports them
        logger.warning("could not read the worker queue's depth", exc_info=True)
        return 0


_QUEUE_DEPTH: MaxAgeHeld[int] = MaxAgeHeld(_queue_depth_or_zero)


def judge_queue_full() -> bool:
    """Whether the worker's queue holds ``JUDGE_QUEUE_MAX`` messages or more (False when the
    setting is 0), from :func:`core.observability.queue_depth` of the default queue read at most
    every :data:`JUDGE_QUEUE_CHECK_S` seconds per process (:class:`core.held.MaxAgeHeld`). A
    broker that cannot be read counts as not full (queueing then fails or succeeds as before,
    and is logged). Thread-safe."""
    limit = settings.JUDGE_QUEUE_MAX
    if limit <= 0:
        return False
    return _QUEUE_DEPTH.get(JUDGE_QUEUE_CHECK_S) >= limit


def judge_queue_read_clear() -> None:
    """Forget the depth :func:`judge_queue_full` read (the next call reads the broker)."""
    _QUEUE_DEPTH.clear()


def answer_judging_enqueue(*, answer: Answer) -> bool:
    """Queue background judging of ``answer`` (called after commit). Evaluation-run answers are
    judged by their run, and ``JUDGE_ON_ANSWER=false`` turns it off. While the worker's queue is
    full (:func:`judge_queue_full`) the answer is not queued (load shedding of a background
    sample: counted in ``zolsearch_judge_shed_total``; the answer itself is stored and served).
    A broker failure is logged, never raised into the request that served the answer. Returns
    whether a task was queued."""
    if not settings.JUDGE_ON_ANSWER or answer.channel == Answer.Channel.EVALUATION:
        return False
    if judge_queue_full():
        JUDGE_SHED_TOTAL.inc()
        return False
    from evaluation.tasks import answer_judge_task

    try:
        answer_judge_task.delay(answer.pk)
    except Exception:
        logger.exception("could not queue judging of answer %s", answer.pk)
        return False
    return True
