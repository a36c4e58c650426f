"""The online pipeline: an ordered list of small stages behind one interface.

Each stage says when it can run (``applies``), reads the shared :class:`SearchState` and adds to
it. The orchestrator times every stage (ms) and turns a stage's named stop exception into a
result (fallback), never a 500. The caller (API, batch command, evaluation) stores the result
as an ``Answer`` through :func:`zolsearch.search.services.search_answer`.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings

from core.language import language_detect
from core.providers.embeddings import EmbeddingModelMismatch, EmbeddingProvider, embedding_provider_get
from core.providers.llm import LLMUnavailable
from ingestion.models import Chunk
from taxonomy.resolver import text_resolve
from taxonomy.selectors import department_names_except, routing_facts
from zolsearch.search import selectors
from zolsearch.search.config import PipelineConfig
from zolsearch.search.fusion import rrf_fuse
from zolsearch.search.gate import GateResult, gate_score
from zolsearch.search.generation import Draft, answer_extractive, answer_llm, answer_plain, draft_pin

logger = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 1000


class SearchError(Exception):
    """Base of errors that end a request without an answer (mapped to HTTP in one place)."""


class InvalidQuestion(SearchError):
    """Empty or over-long question, or one that is not text (HTTP 422)."""


class IndexEmpty(SearchError):
    """No chunk vectors exist for the active embedding model (HTTP 503: ingest first)."""


class StopPipeline(Exception):
    """Raised by a stage to end the run with a fallback; ``outcome`` names why."""

    def __init__(self, outcome: str, reason: str) -> None:
        super().__init__(reason)
        self.outcome = outcome
        self.reason = reason


@dataclass
class SearchRequest:
    """What the caller asked. ``language`` None → detected; filters empty → everything."""

    question: str
    language: str | None = None
    conversation_id: str = ""
    languages: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


@dataclass
class SearchState:
    """Everything the stages read and add, plus the per-stage timings (ms)."""

    request: SearchRequest
    config: PipelineConfig
    provider: EmbeddingProvider
    trace_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    language: str = ""
    query_vector: np.ndarray | None = None
    dense: list[tuple[int, float]] = field(default_factory=list)
    lexical: list[tuple[int, float]] = field(default_factory=list)
    lexical_backend: str = ""
    fused: list[tuple[int, float]] = field(default_factory=list)
    chunks: dict[int, Chunk] = field(default_factory=dict)
    draft: Draft | None = None
    documents_text: str = ""  # the draft before graph facts were pinned (what the gate scores)
    intent: str = "general"
    routing: bool = False  # a "where / which department / which doctor" question the graph answers
    pinned: list = field(default_factory=list)  # taxonomy.selectors.RoutingFact, placed first
    gate: GateResult | None = None
    outcome: str = "answered"
    answer: str = ""
    trace: dict[str, object] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)


class Stage:
    """One pipeline step. ``name`` keys its timing; ``applies`` gates it on the config/state."""

    name: str = "stage"

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        raise NotImplementedError


class UnderstandStage(Stage):
    """Language of the question: given by the caller, else detected."""

    name = "understand"

    def run(self, state: SearchState) -> None:
        given = (state.request.language or "").strip().lower()
        state.language = given or language_detect(state.request.question, default=settings.SEARCH_DEFAULT_LANGUAGE)


# Words that ask where to go or who treats, in the languages of the region. A question with one
# of them, or a doctor lookup / department search, is a routing question: the graph answers it.
_ROUTING_CUES = re.compile(
    r"\b(waar|welke (dienst|afdeling|arts|dokter|campus|specialist)|bij wie|terecht|heen|wie behandelt"
    r"|where|which (department|doctor|clinic|ward|campus|specialist)|who treats|go to"
    r"|où|quel service|quelle clinique|nerede|hangi (bölüm|doktor)|unde|ce secție|la ce)\b",
    re.IGNORECASE,
)


def routing_question(*, question: str, intent: str) -> bool:
    """Whether the graph alone answers ``question``: a doctor lookup or department search, or a
    question with a routing cue ("waar", "welke dienst", "where", "which department", …)."""
    return intent in ("doctor_lookup", "department_search") or bool(_ROUTING_CUES.search(question))


class TaxonomyStage(Stage):
    """Resolve the question against the hospital graph (aliases → SNOMED → IS_A → finding site)
    and keep the routing facts to pin first in the answer (design step 3)."""

    name = "taxonomy"

    def run(self, state: SearchState) -> None:

        resolution = text_resolve(text=state.request.question, language=state.language, with_terms=False)
        state.intent, state.pinned = routing_facts(resolution=resolution, language=state.language)
        state.routing = bool(state.pinned) and routing_question(question=state.request.question, intent=state.intent)
        state.trace["taxonomy"] = {
            "intent": state.intent,
            "routing_question": state.routing,
            "entities": [{"slug": r.entity.slug, "type": r.entity.type, "trail": r.trail} for r in resolution.entities],
            "facts": [f.text for f in state.pinned],
        }


class EmbedQueryStage(Stage):
    name = "embed_query"

    def applies(self, state: SearchState) -> bool:
        return state.config.dense_enabled or state.config.gate_enabled

    def run(self, state: SearchState) -> None:
        state.query_vector = state.provider.embed_query(state.request.question)


class DenseRetrievalStage(Stage):
    name = "dense"

    def applies(self, state: SearchState) -> bool:
        return state.config.dense_enabled

    def run(self, state: SearchState) -> None:
        assert state.query_vector is not None
        state.dense = selectors.chunks_dense_search(
            vector=state.query_vector,
            model_key=state.provider.key,
            limit=state.config.dense_candidates,
            ef_search=state.config.hnsw_ef_search,
            languages=state.request.languages,
            sources=state.request.sources,
        )


class LexicalRetrievalStage(Stage):
    name = "lexical"

    def applies(self, state: SearchState) -> bool:
        return state.config.lexical_enabled

    def run(self, state: SearchState) -> None:
        state.lexical_backend, state.lexical = selectors.chunks_lexical_search(
            query=state.request.question,
            language=state.language,
            limit=state.config.lexical_candidates,
            languages=state.request.languages,
            sources=state.request.sources,
        )
        state.trace["lexical_backend"] = state.lexical_backend


class FusionStage(Stage):
    """Reciprocal Rank Fusion of the dense and lexical lists, then the top-k chunks loaded."""

    name = "fusion"

    def run(self, state: SearchState) -> None:
        rankings = [[i for i, _ in hits] for hits in (state.dense, state.lexical) if hits]
        state.fused = rrf_fuse(rankings, k=state.config.rrf_k)[: state.config.top_k]
        if not state.fused:
            raise StopPipeline("no_results", "no passage matched the question")
        state.chunks = selectors.chunks_by_ids([i for i, _ in state.fused])


class GenerationStage(Stage):
    """Extractive answer, or the LLM when configured (falling back to extractive on failure)."""

    name = "generate"

    def run(self, state: SearchState) -> None:

        top = [state.chunks[i] for i, _ in state.fused[: state.config.answer_chunks] if i in state.chunks]
        if state.config.generator == "llm" and state.config.llm_model:
            try:
                state.draft = answer_llm(
                    question=state.request.question, language=state.language, chunks=top, model=state.config.llm_model
                )
                self._pin(state)
                return
            except LLMUnavailable as exc:
                logger.warning("LLM generation failed, falling back to extractive: %s", exc)
                state.trace["llm_error"] = str(exc)
        state.draft = answer_extractive(
            question=state.request.question,
            language=state.language,
            chunks=top,
            max_sentences=state.config.answer_max_sentences,
            exclude_names=self._other_departments(state),
        )
        if not state.draft.text:
            raise StopPipeline("no_results", "the passages found contain no usable sentence")
        self._pin(state)

    @staticmethod
    def _other_departments(state: SearchState) -> frozenset[str]:
        """Normalised names of departments the graph does not route this question to."""
        if not state.pinned:
            return frozenset()

        routed = {i for fact in state.pinned for i in fact.entity_ids}
        names = department_names_except(entity_ids=routed)
        state.trace["graph_excluded_departments"] = sorted(names)
        return names

    @staticmethod
    def _pin(state: SearchState) -> None:
        assert state.draft is not None
        state.documents_text = state.draft.text
        state.draft = draft_pin(draft=state.draft, facts=state.pinned)


class GateStage(Stage):
    """Fast quality gate: 0.7·cos(answer, context) + 0.3·cos(question, answer) ≥ threshold.

    Context vector: the normalised mean of the stored vectors of the chunks the answer cites
    (computed at ingestion, so the gate embeds only the answer).
    """

    name = "gate"

    def applies(self, state: SearchState) -> bool:
        return state.config.gate_enabled

    def run(self, state: SearchState) -> None:
        assert state.draft is not None and state.query_vector is not None
        answer_vector = state.provider.embed_passages([answer_plain(state.documents_text or state.draft.text)])[0]
        stored = selectors.chunk_vectors(ids=state.draft.cited_chunk_ids, model_key=state.provider.key)
        context_vector = stored.mean(axis=0) if len(stored) else answer_vector * 0
        state.gate = gate_score(
            answer=answer_vector,
            context=context_vector,
            question=state.query_vector,
            threshold=state.config.gate_threshold,
        )
        if not state.gate.passed:
            state.trace["rejected_answer"] = state.draft.text
            raise StopPipeline("gate_rejected", "the answer did not pass the quality gate")


STAGES: tuple[Stage, ...] = (
    UnderstandStage(),
    TaxonomyStage(),
    EmbedQueryStage(),
    DenseRetrievalStage(),
    LexicalRetrievalStage(),
    FusionStage(),
    GenerationStage(),
    GateStage(),
)

FALLBACK = {
    "nl": "Ik kan deze vraag niet betrouwbaar beantwoorden met de informatie van het ziekenhuis. "
    "Voor hulp kan u terecht bij {contact}.",
    "en": "I cannot answer this question reliably from the hospital's information. For help, please contact {contact}.",
    "fr": "Je ne peux pas répondre de manière fiable à cette question avec les informations de "
    "l'hôpital. Pour de l'aide, contactez {contact}.",
}


def fallback_message(language: str) -> str:
    """The honest 'I don't know, here is who can help' message in ``language`` (nl default)."""
    return FALLBACK.get(language, FALLBACK["nl"]).format(contact=settings.SEARCH_FALLBACK_CONTACT)


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
    :class:`StopPipeline` ends the run with the fallback message and its ``outcome``.
    """
    request.question = question_validate(request.question)
    provider = embedding_provider_get(config.embedding_model)
    if not selectors.embedding_model_indexed(model_key=provider.key):
        indexed = selectors.embedding_models_indexed()
        if indexed:
            raise EmbeddingModelMismatch(
                f"the index holds vectors of {', '.join(sorted(indexed))}, not of the query model "
                f"{provider.key}: re-ingest with EMBEDDING_MODEL={provider.key} or switch back"
            )
        raise IndexEmpty("the search index is empty: ingest content first (manage.py ingest medquad PATH)")
    state = SearchState(request=request, config=config, provider=provider)
    started = time.perf_counter()
    try:
        for stage in STAGES:
            if not stage.applies(state):
                continue
            t0 = time.perf_counter()
            try:
                stage.run(state)
            finally:
                state.timings_ms[stage.name] = round((time.perf_counter() - t0) * 1000, 3)
        assert state.draft is not None
        state.answer = state.draft.text
    except StopPipeline as stop:
        state.trace["stop_reason"] = stop.reason
        graph = draft_pin(
            draft=Draft(text="", citations=[], cited_chunk_ids=[], generator="taxonomy"), facts=state.pinned
        )
        if state.routing:
            # The graph is the authority for routing: it answers "where / which department /
            # which doctor" by itself when the retrieved text was rejected or found nothing.
            state.draft, state.answer = graph, graph.text
            state.trace["graph_answer"] = f"{stop.outcome}: the graph answers the routing question alone"
        else:
            state.outcome = stop.outcome
            state.answer = fallback_message(state.language)
            if state.pinned:
                # The graph still knows who can help: its facts lead the fallback, cited.
                state.answer = f"{graph.text} {state.answer}"
                state.trace["fallback_citations"] = [c.public() for c in graph.citations]
    state.timings_ms["total"] = round((time.perf_counter() - started) * 1000, 3)
    return state
