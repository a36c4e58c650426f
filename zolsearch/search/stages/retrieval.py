"""Retrieval: query embedding, dense (pgvector HNSW, cosine) and lexical (BM25) candidates,
Reciprocal Rank Fusion (design step 4)."""

from __future__ import annotations

from core.text import BM25_STOPWORDS
from ingestion.models import SOURCE_PRIORITY_MAX, Chunk
from zolsearch.search import selectors
from zolsearch.search.config import PipelineConfig
from zolsearch.search.contract import Outcome
from zolsearch.search.fusion import fused_boost, rrf_fuse
from zolsearch.search.stages.base import SearchState, Stage, StopPipeline
from zolsearch.search.stages.cache import cache_key_text
from zolsearch.search.understanding import routing_share


class EmbedQueryStage(Stage):
    """The question's vector (the active embedding model; float32, unit length). With the
    semantic cache on, the cache key's vector too (the normalised question,
    :class:`~zolsearch.search.stages.cache.SemanticCacheStage`), in the same encoder call."""

    name = "embed_query"
    reads = frozenset({"question", "config", "provider"})
    adds = frozenset({"query_vector", "cache_vector"})

    def applies(self, state: SearchState) -> bool:
        return state.config.dense_enabled or state.config.gate_enabled

    def run(self, state: SearchState) -> None:
        if not state.config.semantic_cache_enabled:
            state.query_vector = state.provider.embed_query(state.question)
            return
        key = cache_key_text(state.question)
        texts = [state.question] if key == state.question else [state.question, key]
        vectors = state.provider.embed_queries(texts)
        state.query_vector, state.cache_vector = vectors[0], vectors[-1]


def retrieval_depth(state: SearchState, *, deeper: bool = False) -> tuple[int, int, int, int]:
    """``(dense candidates, lexical candidates, fused kept for reranking, kept after)``.

    Normal: the configured candidates, ``rerank_depth`` fused kept when a reranker runs (else
    ``top_k``), ``top_k`` after (design: 20 → 10). Deeper (``think_harder`` on the request, or
    CRAG's refinement): ``think_harder_candidates`` everywhere, ``think_harder_top_k`` after
    (design: 100 → 20)."""
    config = state.config
    if deeper or state.request.think_harder:
        n = config.think_harder_candidates
        return n, n, n, config.think_harder_top_k
    keep = config.rerank_depth if config.reranker else config.top_k
    return config.dense_candidates, config.lexical_candidates, max(keep, config.top_k), config.top_k


def dense_retrieve(state: SearchState, *, limit: int, relaxed: bool = False) -> list[tuple[int, float]]:
    """Dense hits of the question; ``relaxed`` drops the request's language and source filters."""
    vector = state.search_vector if state.search_vector is not None else state.query_vector
    assert vector is not None
    return selectors.chunks_dense_search(
        vector=vector,
        model_key=state.provider.key,
        limit=limit,
        ef_search=max(state.config.hnsw_ef_search, limit),
        languages=() if relaxed else state.request.languages,
        sources=() if relaxed else state.request.sources,
    )


def lexical_stopwords(language: str, config: PipelineConfig) -> frozenset[str]:
    """The words BM25 leaves out of a question in ``language`` (ISO 639-1) under ``config``:
    :data:`core.text.BM25_STOPWORDS` of the language when it is one of
    ``config.lexical_stopword_languages``, else none."""
    if language not in config.lexical_stopword_languages:
        return frozenset()
    return BM25_STOPWORDS.get(language, frozenset())


def query_stopwords(state: SearchState) -> frozenset[str]:
    """The words BM25 leaves out of ``state``'s question (:func:`lexical_stopwords` of its language
    and configuration; keyword rescue skips the same words)."""
    return lexical_stopwords(state.language, state.config)


def lexical_retrieve(state: SearchState, *, limit: int, relaxed: bool = False) -> tuple[str, list[tuple[int, float]]]:
    """``(backend, BM25 hits)`` of the question in its language, without its
    :func:`query_stopwords`; ``relaxed`` as :func:`dense_retrieve`."""
    return selectors.chunks_lexical_search(
        query=state.search_query or state.question,
        language=state.language,
        limit=limit,
        languages=() if relaxed else state.request.languages,
        sources=() if relaxed else state.request.sources,
        stopwords=query_stopwords(state),
    )


def fuse(
    state: SearchState, *, dense: list[tuple[int, float]], lexical: list[tuple[int, float]], keep: int
) -> tuple[list[tuple[int, float]], dict[int, Chunk]]:
    """RRF of the two lists, boosted by source authority and the question's language, the best
    ``keep`` with their chunks (one query). Empty lists give ``([], {})``."""
    rankings = [[i for i, _ in hits] for hits in (dense, lexical) if hits]
    fused = rrf_fuse(rankings, k=state.config.rrf_k)
    if not fused:
        return [], {}
    config = state.config
    authority = authority_share(state, soft=False)
    boosting = authority > 0 or config.language_boost > 0
    chunks = selectors.chunks_by_ids([i for i, _ in (fused if boosting else fused[:keep])])
    if boosting:
        fused = fused_boost(fused, {i: _multiplier(state, chunk, authority=authority) for i, chunk in chunks.items()})
    fused = [(i, score) for i, score in fused[:keep] if i in chunks]
    return fused, {i: chunks[i] for i, _ in fused}


def authority_share(state: SearchState, *, soft: bool = True) -> float:
    """How much the question wants the hospital's own pages, in [0, 1].

    0 when source authority is off or no source has a priority. When the intent came from the
    understanding classifier (``state.intent_probabilities`` set), its probability mass on
    ``source_authority_intents``: a visiting question the classifier calls 40 % practical and 45 %
    advice still gets 0.4 + the other authority intents, not 0 (before 2026-11-25 the argmax
    decided, and one in four hospital-nl questions lost the hospital's priority; docs/EVALUATION.md,
    "Soft source authority"). Otherwise (the graph's intent, or no classifier) 1.0 or 0.0 by
    whether the intent is one of them.
    """
    config = state.config
    if not (config.source_authority_enabled and config.source_priorities):
        return 0.0
    probabilities = state.intent_probabilities if soft else None
    return routing_share(state.intent.value, probabilities, config.source_authority_intents)


def _multiplier(state: SearchState, chunk: Chunk, *, authority: float) -> float:
    """Source authority (``authority``: :func:`authority_share`, in [0, 1]) × question language
    (see :class:`PipelineConfig`): ``(1 + w · a · priority / 10) · (1 + language boost)``."""
    config, multiplier = state.config, 1.0
    if authority > 0:
        priority = config.source_priorities.get(chunk.document.source.key, 0)
        multiplier *= 1.0 + config.source_authority_weight * authority * priority / SOURCE_PRIORITY_MAX
    if config.language_boost and chunk.language == state.language:
        multiplier *= 1.0 + config.language_boost
    return multiplier


class DenseRetrievalStage(Stage):
    """Nearest chunks by cosine over the HNSW index of the query model's vectors."""

    name = "dense"
    cached = True
    reads = frozenset({"query_vector", "search_vector", "config", "provider", "request"})
    adds = frozenset({"dense"})

    def applies(self, state: SearchState) -> bool:
        return state.config.dense_enabled

    def run(self, state: SearchState) -> None:
        state.dense = dense_retrieve(state, limit=retrieval_depth(state)[0])
        state.trace.retrieval.think_harder = state.request.think_harder


class LexicalRetrievalStage(Stage):
    """BM25 (ParadeDB) with the question language's stemmer, else PostgreSQL full text."""

    name = "lexical"
    cached = True
    reads = frozenset({"request", "question", "language", "config", "search_query"})
    adds = frozenset({"lexical", "lexical_backend"})

    def applies(self, state: SearchState) -> bool:
        return state.config.lexical_enabled

    def run(self, state: SearchState) -> None:
        state.lexical_backend, state.lexical = lexical_retrieve(state, limit=retrieval_depth(state)[1])
        state.trace.lexical_backend = state.lexical_backend


class FusionStage(Stage):
    """Reciprocal Rank Fusion of the dense and lexical lists, boosted by source authority and
    the question's language (all fused candidates are loaded then: ≤ 2 × candidates, one
    query); keeps what the reranker reads (or ``top_k`` without one)."""

    name = "fusion"
    cached = True
    reads = frozenset({"dense", "lexical", "config", "language", "request", "intent", "intent_probabilities"})
    adds = frozenset({"fused", "chunks"})

    def run(self, state: SearchState) -> None:
        state.fused, state.chunks = fuse(
            state, dense=state.dense, lexical=state.lexical, keep=retrieval_depth(state)[2]
        )
        if not state.fused:
            raise StopPipeline(Outcome.NO_RESULTS, "no passage matched the question")
