"""The search API router (mounted under ``/api/v1`` by ``zolsearch.api``)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router

from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.schemas import ErrorOut, SearchIn, SearchOut
from zolsearch.search.services import search_answer

router = Router(tags=["search"])


@router.post("/search", response={200: SearchOut, 422: ErrorOut, 503: ErrorOut}, summary="Answer a question")
def search(request: HttpRequest, payload: SearchIn) -> SearchOut:
    """Answer ``question`` from the hospital's content with numbered citations, or a fallback.

    422: empty or over-long question. 503: nothing ingested yet, or an embedding model mismatch.
    """
    state, answer = search_answer(
        request=SearchRequest(
            question=payload.question,
            language=payload.language,
            conversation_id=payload.conversation_id or "",
            languages=tuple(payload.document_languages),
            sources=tuple(payload.sources),
        )
    )
    gate = answer.gate or {"score": None, "context_alignment": None, "semantic_similarity": None, "threshold": None}
    return SearchOut(
        answer=answer.answer,
        citations=answer.citations,
        gate={**gate, "passed": answer.gate_passed},
        generator=answer.generator,
        outcome=answer.outcome,
        language=answer.language,
        trace_id=str(answer.trace_id),
        timings_ms=state.timings_ms,
    )
