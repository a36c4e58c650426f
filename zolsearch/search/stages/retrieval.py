"""Retrieval: query embedding, dense (pgvector HNSW, cosine) and lexical (BM25) candidates,
Reciprocal Rank Fusion (design step 4)."""

from __future__ import annotations

from ingestion.models import SOURCE_PRIORITY_MAX, Chunk
from zolsearch.search import selectors
from zolsearch.search.contract import Outcome
from zolsearch.search.fusion import fused_boost, rrf_fuse
from zolsearch.search.stages.base import SearchState, Stage, StopPipeline


class EmbedQueryStage(Stage):
    """The question's vector (the active embedding model; float32, unit length)."""

    name = "embed_query"
    reads = frozenset({"request", "config", "provider"})
    adds = frozenset({"query_vector"})

    def applies(self, state: SearchState) -> bool:
        return state.config.dense_enabled or state.config.gate_enabled

    def run(self, state: SearchState) -> None:
        state.query_vector = state.provider.embed_query(state.request.question)


class DenseRetrievalStage(Stage):
    """Nearest chunks by cosine over the HNSW index of the query model's vectors."""

    name = "dense"
    reads = frozenset({"query_vector", "config", "provider", "request"})
    adds = frozenset({"dense"})

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
    """BM25 (ParadeDB) with the question language's stemmer, else PostgreSQL full text."""

    name = "lexical"
    reads = frozenset({"request", "language"})
    adds = frozenset({"lexical", "lexical_backend"})

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
        state.trace.lexical_backend = state.lexical_backend


class FusionStage(Stage):
    """Reciprocal Rank Fusion of the dense and lexical lists, boosted by source authority and
    the question's language (all fused candidates are loaded then: ≤ 2 × candidates, one
    query), then the top-k kept."""

    name = "fusion"
    reads = frozenset({"dense", "lexical", "config", "language"})
    adds = frozenset({"fused", "chunks"})

    def run(self, state: SearchState) -> None:
        rankings = [[i for i, _ in hits] for hits in (state.dense, state.lexical) if hits]
        fused = rrf_fuse(rankings, k=state.config.rrf_k)
        if not fused:
            raise StopPipeline(Outcome.NO_RESULTS, "no passage matched the question")
        config = state.config
        boosting = (config.source_authority_enabled and config.source_priorities) or config.language_boost > 0
        chunks = selectors.chunks_by_ids([i for i, _ in (fused if boosting else fused[: config.top_k])])
        if boosting:
            fused = fused_boost(fused, {i: self._multiplier(state, chunk) for i, chunk in chunks.items()})
        state.fused = fused[: config.top_k]
        state.chunks = {i: chunks[i] for i, _ in state.fused if i in chunks}

    @staticmethod
    def _multiplier(state: SearchState, chunk: Chunk) -> float:
        """Source authority × question language (see :class:`PipelineConfig`)."""
        config, multiplier = state.config, 1.0
        if config.source_authority_enabled:
            priority = config.source_priorities.get(chunk.document.source.key, 0)
            multiplier *= 1.0 + config.source_authority_weight * priority / SOURCE_PRIORITY_MAX
        if config.language_boost and chunk.language == state.language:
            multiplier *= 1.0 + config.language_boost
        return multiplier
