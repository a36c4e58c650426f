"""The search API router (mounted under ``/api/v1`` by ``zolsearch.api``)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Status

from zolsearch.search.contract import RED_FLAG_NUMBERS, Generator, Outcome, RedFlagCategory, RefusalReason
from zolsearch.search.messages import disclosure_line
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.schemas import ErrorOut, FeedbackIn, FeedbackOut, GateOut, RedFlagOut, SearchIn, SearchOut
from zolsearch.search.services import client_fingerprint, feedback_record, search_answer

router = Router(tags=["search"])


@router.post(
    "/search",
    response={200: SearchOut, 400: ErrorOut, 413: ErrorOut, 422: ErrorOut, 429: ErrorOut, 503: ErrorOut},
    summary="Answer a question",
)
def search(request: HttpRequest, payload: SearchIn) -> SearchOut:
    """Answer ``question`` from the hospital's content with numbered citations, or a fallback.

    Emergencies, poisoning, suicidal thoughts and urgent out-of-hours questions get a route to a
    phone number (outcome ``red_flag``); individual medical advice, harmful and out-of-purpose
    requests are refused (outcome ``refused`` with ``refusal_reason``). 400: the body is not JSON.
    413: the body is over ``API_MAX_BODY_BYTES``. 422: empty or over-long question, or a field of
    the wrong type. 429 with ``Retry-After``: too many searches from this client
    (``SEARCH_RATE_LIMIT``, ``zolsearch.access.middleware``). 503 (with ``Retry-After``
    when it will pass): nothing ingested yet, an embedding model mismatch, the embedding service
    or the database unavailable.
    """
    state, answer = search_answer(
        request=SearchRequest(
            question=payload.question,
            language=payload.language,
            conversation_id=payload.conversation_id or "",
            languages=tuple(payload.document_languages),
            sources=tuple(payload.sources),
            think_harder=payload.think_harder,
        )
    )
    gate = answer.gate or {"score": None, "context_alignment": None, "semantic_similarity": None, "threshold": None}
    red_flag = None
    if answer.red_flag_category:
        red_flag = RedFlagOut(
            category=RedFlagCategory(answer.red_flag_category),
            number=RED_FLAG_NUMBERS[answer.red_flag_category],
            message=answer.answer,
        )
    return SearchOut(
        answer=answer.answer,
        citations=answer.citations,
        gate=GateOut(**{**gate, "passed": answer.gate_passed}),
        generator=Generator(answer.generator),
        generator_model=answer.generator_model,
        ai_generated=True,
        disclosure=disclosure_line(answer.language),
        outcome=Outcome(answer.outcome),
        refusal_reason=RefusalReason(answer.refusal_reason) if answer.refusal_reason else None,
        red_flag=red_flag,
        language=answer.language,
        trace_id=str(answer.trace_id),
        timings_ms=state.timings_ms,
    )


@router.post(
    "/feedback",
    response={
        201: FeedbackOut,
        400: ErrorOut,
        404: ErrorOut,
        413: ErrorOut,
        422: ErrorOut,
        429: ErrorOut,
        503: ErrorOut,
    },
    summary="Say whether an answer helped",
)
def feedback(request: HttpRequest, payload: FeedbackIn) -> Status:
    """Record whether the answer ``trace_id`` was helpful, with an optional comment stored without
    personal identifiers. A second post from the same client about the same answer replaces the
    first. 400: the body is not JSON. 404: unknown trace id. 413: the body is too large. 429 with
    ``Retry-After`` (seconds): too many from this client (``FEEDBACK_RATE_LIMIT``). 503 with
    ``Retry-After``: the database is unavailable."""
    stored = feedback_record(
        trace_id=payload.trace_id,
        helpful=payload.helpful,
        comment=payload.comment,
        client=client_fingerprint(address=request.META.get("REMOTE_ADDR", "")),
    )
    return Status(
        201,
        FeedbackOut(
            trace_id=payload.trace_id,
            helpful=stored.helpful,
            comment_stored=stored.comment,
            identifiers_removed=stored.identifiers,
        ),
    )
