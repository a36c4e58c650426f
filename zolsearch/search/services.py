"""Writes of the search app: run the pipeline and record the served ``Answer``.

Every stored answer is announced through the ``answer_stored`` signal after commit, so that
evaluation can subscribe (background judging) without the pipeline importing evaluation. The
question is stored without personal identifiers (:mod:`zolsearch.search.privacy`), and every
staff view of answers is announced through ``answers_viewed_signal`` (:func:`answers_viewed`),
which the access app records as an audit entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import logging
import math
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.dispatch import Signal
from django.utils import timezone

from core.observability import FEEDBACK_RATE_LIMITED_TOTAL, FEEDBACK_TOTAL
from zolsearch.search.config import ConfigInvalid, PipelineConfig, pipeline_config_live, pipeline_config_settings
from zolsearch.search.contract import Generator, Outcome
from zolsearch.search.flags import FLAGS
from zolsearch.search.metrics import search_observe
from zolsearch.search.models import Answer, Feedback, PipelineFlag, PipelineFlagChange, SemanticCacheEntry
from zolsearch.search.pipeline import SearchRequest, SearchState, pipeline_run
from zolsearch.search.privacy import question_deidentify, values_scrub

logger = logging.getLogger(__name__)

answer_stored = Signal()  # sender=Answer, answer=<Answer>; sent on commit
# sender=Answer, user=<User>, answer_ids=[int], where=str; sent by answers_viewed
answers_viewed_signal = Signal()


def _chunk_scores(state: SearchState) -> list[dict[str, object]]:
    dense, lexical = dict(state.dense), dict(state.lexical)
    rows: list[dict[str, object]] = []
    for rank, (chunk_id, rrf) in enumerate(state.fused, start=1):
        chunk = state.chunks.get(chunk_id)
        rows.append(
            {
                "chunk_id": chunk_id,
                "external_id": chunk.document.external_id if chunk else None,
                "url": chunk.document.url if chunk else None,
                "rank": rank,
                "rrf": round(rrf, 6),
                "dense": round(dense[chunk_id], 6) if chunk_id in dense else None,
                "bm25": round(lexical[chunk_id], 6) if chunk_id in lexical else None,
                "rerank": round(state.rerank[chunk_id], 6) if chunk_id in state.rerank else None,
            }
        )
    return rows


def answer_record(*, state: SearchState, channel: str = Answer.Channel.API) -> Answer:
    """Store the served answer of ``state`` and announce it after commit (``answer_stored``).

    The question is stored de-identified (:func:`~zolsearch.search.privacy.question_deidentify`:
    names, INSZ, phone numbers, e-mail and postal addresses, birth dates and IBANs replaced by
    ``[KIND]``, the hospital's doctors kept), and every copy of a replaced value in the trace
    (the follow-up's resolved question, the reduced query) is replaced the same way. The time
    this takes is ``timings_ms["deidentify"]`` (ms), not part of ``total`` (the pipeline's).
    """
    gate = state.gate.as_dict() if state.gate else {}
    answered = state.outcome == Outcome.ANSWERED
    t0 = time.perf_counter()
    private = question_deidentify(state.request.question, language=state.language)
    values, kinds = private.values, private.kinds
    if state.question != state.request.question:  # a follow-up, searched with its resolution
        resolved = question_deidentify(state.question, language=state.language)
        values, kinds = values + resolved.values, kinds + resolved.kinds
    trace = values_scrub(state.trace.model_dump(mode="json"), values=values, kinds=kinds)
    state.timings_ms["deidentify"] = round((time.perf_counter() - t0) * 1000, 3)
    answer = Answer(
        trace_id=state.trace_id,
        channel=channel,
        conversation_id=state.request.conversation_id[:64],
        question=private.text,
        language=state.language,
        answer=state.answer,
        generator=state.generator,
        generator_model=state.generator_model,
        outcome=state.outcome,
        refusal_reason=state.refusal or "" if state.outcome == Outcome.REFUSED else "",
        red_flag_category=state.red_flag.category if state.red_flag and state.outcome == Outcome.RED_FLAG else "",
        citations=[c.public() for c in state.citations],
        chunk_scores=_chunk_scores(state),
        gate=gate,
        gate_passed=bool(gate.get("passed", not state.config.gate_enabled)) and answered,
        gate_score=gate.get("score"),
        timings_ms=state.timings_ms,
        trace=trace,
        embedding_model=state.provider.key,
        config=state.config.as_dict(),
        config_hash=state.config.hash,
    )
    answer.full_clean(validate_unique=False)  # trace_id is a fresh uuid4; the constraint still guards
    # One INSERT (no BEGIN and COMMIT around it in autocommit); the announcement follows its
    # commit, or the commit of a caller's transaction.
    answer.save()
    transaction.on_commit(lambda: answer_stored.send(sender=Answer, answer=answer))
    search_observe(answer=answer)
    return answer


def search_answer(
    *, request: SearchRequest, config: PipelineConfig | None = None, channel: str = Answer.Channel.API
) -> tuple[SearchState, Answer]:
    """Answer ``request`` with ``config`` (default: the live configuration,
    :func:`~zolsearch.search.config.pipeline_config_live`) and store the ``Answer``.

    ``channel``: who asked (``Answer.Channel``); evaluation runs judge their answers themselves.

    Raises ``InvalidQuestion``, ``IndexEmpty``, ``EmbeddingModelMismatch`` or
    ``EmbeddingUnavailable`` (nothing stored).
    """
    config = config or pipeline_config_live()
    if channel != Answer.Channel.API and config.semantic_cache_enabled:
        # Evaluation runs, studies and batch runs measure the pipeline itself (and batch runs
        # need its ranking): they never read or write the cache.
        config = config.with_overrides(semantic_cache_enabled=False)
    state = pipeline_run(request=request, config=config)
    answer = answer_record(state=state, channel=channel)
    if state.cache_hit is not None:
        SemanticCacheEntry.objects.filter(pk=state.cache_hit).update(hits=F("hits") + 1)
    elif config.semantic_cache_enabled and channel == Answer.Channel.API:
        cache_entry_store(state=state, question=answer.question)
    return state, answer


def cache_entry_store(*, state: SearchState, question: str) -> SemanticCacheEntry | None:
    """Keep an answered, gate-passed draft of ``state`` in the semantic cache (None when the
    state is not cacheable: another outcome, no draft or vector, or the gate did not pass).
    ``question``: the question as stored, without personal identifiers (``Answer.question``:
    :func:`answer_record` stripped it already)."""
    if (
        state.outcome != Outcome.ANSWERED
        or state.draft is None
        or state.cache_vector is None
        or state.generator not in (Generator.EXTRACTIVE, Generator.LLM)
        or (state.gate is not None and not state.gate.passed)
    ):
        return None
    draft = state.draft
    payload = {
        "draft": {
            "text": draft.text,
            "citations": [dataclasses.asdict(c) for c in draft.citations],
            "cited_chunk_ids": list(draft.cited_chunk_ids),
            "generator": str(draft.generator),
            "model": draft.model,
        },
        "documents_text": state.documents_text,
        "gate": state.gate.as_dict() if state.gate else None,
    }
    entry = SemanticCacheEntry(
        model_key=state.provider.key,
        config_hash=state.config.hash,
        index_version=state.cache_index_version,
        language=state.language,
        question=question,
        vector=state.cache_vector.tolist(),
        payload=payload,
    )
    entry.full_clean()
    entry.save()
    return entry


class FlagInvalid(ValueError):
    """A flag change that cannot be made: unknown flag, a model given for a flag that is not per
    model, no reason, or a value the pipeline's configuration rejects (the message says why)."""


def pipeline_flags_ensure() -> int:
    """Create the missing row (empty: the default, every model) of each catalogued flag, so the
    admin lists them all. Returns how many were created. Idempotent."""
    existing = set(PipelineFlag.objects.filter(model_key="").values_list("name", flat=True))
    missing = [PipelineFlag(name=name) for name in FLAGS if name not in existing]
    PipelineFlag.objects.bulk_create(missing, ignore_conflicts=True)
    return len(missing)


@transaction.atomic
def pipeline_flag_set(*, name: str, value: Any, changed_by: str, reason: str, model_key: str = "") -> PipelineFlag:
    """Set flag ``name`` (for ``model_key``; blank: every model) to ``value`` (``None``: back to
    the default) and record who, when, old → new and why (:class:`PipelineFlagChange`).

    ``value`` is validated by building the live configuration with it and stored as the
    configuration holds it (``"true"`` → ``true``, ``"nl, en"`` text is the caller's to parse
    with :func:`~zolsearch.search.config.config_value_parse`). Unchanged values write nothing.
    The row is locked while it changes (two evaluators saving at once are serialised). Raises
    :class:`FlagInvalid`.
    """
    spec = FLAGS.get(name)
    if spec is None:
        raise FlagInvalid(f"{name!r} is not a pipeline flag")
    if model_key and not spec.per_model:
        raise FlagInvalid(f"{name} is the same for every embedding model")
    if not reason.strip():
        raise FlagInvalid("say why the flag changes (the reason is kept in its history)")
    stored: Any = None
    if value is not None:
        try:
            stored = pipeline_config_settings().with_overrides(**{name: value}).as_dict()[name]
        except ConfigInvalid as exc:
            raise FlagInvalid(str(exc)) from exc
    flag, _ = PipelineFlag.objects.select_for_update().get_or_create(name=name, model_key=model_key)
    if flag.value == stored:
        return flag
    change = PipelineFlagChange(
        flag=flag, old_value=flag.value, new_value=stored, changed_by=changed_by[:150], reason=reason.strip()
    )
    flag.value, flag.updated_by = stored, changed_by[:150]
    flag.full_clean()
    flag.save()
    change.full_clean()
    change.save()
    return flag


class AnswerNotFound(LookupError):
    """No stored answer has this trace id (mistyped, or purged by retention)."""


class FeedbackRateLimited(Exception):
    """The client sent more feedback than ``FEEDBACK_RATE_LIMIT`` allows; ``retry_after_s``
    (seconds, ≥ 1) says when the next one is accepted."""

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"too many feedback requests; try again in {retry_after_s} s")
        self.retry_after_s = retry_after_s


def client_fingerprint(*, address: str, now: datetime | None = None) -> str:
    """HMAC-SHA-256 hex (64 characters) of the client ``address`` under a key that rotates: it
    is derived from ``CLIENT_HASH_SECRET`` (default ``SECRET_KEY``) and the number of the
    current period of ``CLIENT_HASH_ROTATION_S`` seconds since the epoch (default 86,400: the
    UTC day). The same client maps to the same value within one period and to an unrelated one
    the next; the address itself is never stored or logged. Used for the feedback and search
    rate limits and, written as an IPv6 address, for django-axes' login lockouts. Whoever holds
    the secret can recompute a past period's key: changing ``CLIENT_HASH_SECRET`` cuts that link
    for every stored fingerprint."""
    rotation_s = max(1, int(getattr(settings, "CLIENT_HASH_ROTATION_S", 86400)))
    period = int((now or timezone.now()).astimezone(UTC).timestamp() // rotation_s)
    secret = str(getattr(settings, "CLIENT_HASH_SECRET", "") or settings.SECRET_KEY)
    key = hmac.new(secret.encode(), f"client-key:{rotation_s}:{period}".encode(), hashlib.sha256).digest()
    return hmac.new(key, address.encode(), hashlib.sha256).hexdigest()


def answers_viewed(user: Any, answer_ids: list[int] | tuple[int, ...], where: str) -> None:
    """Announce that staff ``user`` saw the answers ``answer_ids`` (primary keys of
    :class:`Answer`) on screen ``where`` (e.g. ``"admin:search_answer_changelist"``,
    ``"review:queue"``; at most 100 characters). The access app records one audit entry per call
    (``zolsearch.access``, connected at start-up); this layer cannot import it, hence the
    signal. Call it from every screen that shows patients' questions or answers, after the rows
    were read. Nothing is recorded for an empty list. Positional arguments are accepted (the
    screens of other apps call it as ``answers_viewed(user, ids, where)``)."""
    ids = [int(i) for i in answer_ids]
    if not ids:
        return
    receivers = answers_viewed_signal.send(sender=Answer, user=user, answer_ids=ids, where=where)
    if not receivers:
        logger.error("answers viewed in %s by %s were not audited: no receiver is connected", where, user)


@transaction.atomic
def feedback_record(*, trace_id: uuid.UUID, helpful: bool, comment: str, client: str) -> Feedback:
    """Store (or update) ``client``'s feedback on the answer ``trace_id``.

    ``comment`` (≤ 1,000 characters, validated by the API) is stored with personal identifiers
    replaced (:func:`core.privacy.identifiers_strip`). Rate limit: at most
    ``FEEDBACK_RATE_LIMIT`` = (count, seconds) new or changed rows per client in the window,
    counted in the database so every server process shares it. Raises :class:`AnswerNotFound`
    and :class:`FeedbackRateLimited`. Counted in ``zolsearch_feedback_total``.
    """
    limit, window_s = settings.FEEDBACK_RATE_LIMIT
    since = timezone.now() - timedelta(seconds=window_s)
    recent = list(
        Feedback.objects.filter(client=client, updated_at__gte=since)
        .order_by("updated_at")
        .values_list("updated_at", flat=True)[:limit]
    )
    if len(recent) >= limit:
        wait = (recent[0] + timedelta(seconds=window_s) - timezone.now()).total_seconds()
        FEEDBACK_RATE_LIMITED_TOTAL.inc()
        raise FeedbackRateLimited(max(1, math.ceil(wait)))
    from core.privacy import identifiers_strip  # the recognisers load on first feedback, not at start-up

    answer = Answer.objects.filter(trace_id=trace_id).only("id").first()
    if answer is None:
        raise AnswerNotFound(f"no answer with trace id {trace_id}")
    stripped, kinds = identifiers_strip(comment.strip()) if comment.strip() else ("", [])
    feedback, _ = Feedback.objects.update_or_create(
        answer=answer, client=client, defaults={"helpful": helpful, "comment": stripped, "identifiers": kinds}
    )
    FEEDBACK_TOTAL.labels(helpful="yes" if helpful else "no", comment="yes" if stripped else "no").inc()
    return feedback
