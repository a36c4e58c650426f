"""The online pipeline: an ordered list of small stages behind one interface.

Each stage (``zolsearch/search/stages/``) says when it can run (``applies``), what it reads and
what it adds to the shared :class:`SearchState`. The orchestrator times every stage (ms) and
turns a stage's :class:`StopPipeline` into a stop on the state; the remaining stages are skipped
except composition, which writes the reply (answer, graph-only routing answer, fallback,
refusal or red-flag route). The caller (API, batch command, evaluation) stores the result as an
``Answer`` through :func:`zolsearch.search.services.search_answer`.
"""

from __future__ import annotations

import time

from core.providers.embeddings import EmbeddingModelMismatch, embedding_provider_get
from zolsearch.search import selectors
from zolsearch.search.config import PipelineConfig, embedding_model_indexed_live
from zolsearch.search.stages.base import SearchRequest, SearchState, Stage, Stop, StopPipeline
from zolsearch.search.stages.cache import SemanticCacheStage
from zolsearch.search.stages.compose import ComposeStage
from zolsearch.search.stages.followup import FollowUpStage
from zolsearch.search.stages.generate import GenerationStage
from zolsearch.search.stages.quality_gate import GateStage
from zolsearch.search.stages.rerank import (
    CragStage,
    FilcoStage,
    FocusRescueStage,
    KeywordRescueStage,
    RerankCutStage,
    RerankStage,
)
from zolsearch.search.stages.retrieval import DenseRetrievalStage, EmbedQueryStage, FusionStage, LexicalRetrievalStage
from zolsearch.search.stages.safety import InputGuardStage, OutputGuardStage, RedFlagModelStage, RedFlagStage
from zolsearch.search.stages.taxonomy import TaxonomyStage
from zolsearch.search.stages.understand import QueryUnderstandingStage, UnderstandStage

__all__ = ["STAGES", "IndexEmpty", "InvalidQuestion", "SearchError", "SearchRequest", "SearchState", "pipeline_run"]

MAX_QUESTION_CHARS = 1000


class SearchError(Exception):
    """Base of errors that end a request without an answer (mapped to HTTP in one place)."""


class InvalidQuestion(SearchError):
    """Empty or over-long question, or one that is not text (HTTP 422)."""


class IndexEmpty(SearchError):
    """No chunk vectors exist for the active embedding model (HTTP 503: ingest first)."""


STAGES: tuple[Stage, ...] = (
    UnderstandStage(),
    RedFlagStage(),
    FollowUpStage(),  # after the rules saw the message as typed, before anything searches
    TaxonomyStage(),
    EmbedQueryStage(),
    QueryUnderstandingStage(),
    RedFlagModelStage(),
    InputGuardStage(),
    SemanticCacheStage(),
    DenseRetrievalStage(),
    LexicalRetrievalStage(),
    FusionStage(),
    KeywordRescueStage(),
    FocusRescueStage(),
    RerankStage(),
    RerankCutStage(),
    CragStage(),
    FilcoStage(),
    GenerationStage(),
    OutputGuardStage(),
    GateStage(),
    ComposeStage(),
)


def question_validate(question: object) -> str:
    """The stripped question; raises :class:`InvalidQuestion` when empty or > 1,000 characters."""
    if not isinstance(question, str):
        raise InvalidQuestion("question must be a string")
    text = question.strip()
    if not text:
        raise InvalidQuestion("question is empty: type a question")
    if len(text) > MAX_QUESTION_CHARS:
        raise InvalidQuestion(f"question is too long: {len(text)} characters, the maximum is {MAX_QUESTION_CHARS}")
    return text


def pipeline_run(*, request: SearchRequest, config: PipelineConfig) -> SearchState:
    """Run every applicable stage on ``request`` with the frozen ``config``.

    Raises :class:`InvalidQuestion` and :class:`IndexEmpty` before any work;
    ``EmbeddingModelMismatch`` when the index holds vectors of other models only. A stage's
    :class:`StopPipeline` skips the remaining stages but composition (``ComposeStage``).
    """
    request.question = question_validate(request.question)
    provider = embedding_provider_get(config.embedding_model)
    if not embedding_model_indexed_live(model_key=provider.key):
        indexed = selectors.embedding_models_indexed()
        if indexed:
            raise EmbeddingModelMismatch(
                f"the index holds vectors of {', '.join(sorted(indexed))}, not of the query model "
                f"{provider.key}: re-ingest with EMBEDDING_MODEL={provider.key} or switch back"
            )
        raise IndexEmpty("the search index is empty: ingest content first (manage.py ingest medquad PATH)")
    state = SearchState(request=request, config=config, provider=provider)
    started = time.perf_counter()
    for stage in STAGES:
        if (state.stop is not None and not stage.always) or (state.cache_hit is not None and stage.cached):
            continue
        if not stage.applies(state):
            continue
        t0 = time.perf_counter()
        try:
            stage.run(state)
        except StopPipeline as stop:
            state.stop = Stop(outcome=stop.outcome, reason=stop.reason, stage=stage.name)
            state.trace.stop_stage, state.trace.stop_reason = stage.name, stop.reason
        finally:
            state.timings_ms[stage.name] = round((time.perf_counter() - t0) * 1000, 3)
    state.timings_ms["total"] = round((time.perf_counter() - started) * 1000, 3)
    return state
