"""The semantic cache (design: serve a stored answer to the same question asked again).

Runs after the safety stages (a cached answer never skips red flags or the input guard) and
before retrieval. On a hit the stored draft and gate result are put on the state and the stages
marked ``cached`` (retrieval, reranking, CRAG, FILCO, generation, output guard, gate) are
skipped; composition writes the reply as usual. Entries are written by
:func:`zolsearch.search.services.search_answer` for live API answers only.
"""

from __future__ import annotations

from core.observability import SEMANTIC_CACHE_TOTAL
from core.text import text_normalise
from zolsearch.search import selectors
from zolsearch.search.contract import Generator
from zolsearch.search.gate import GateResult
from zolsearch.search.generation import Citation, Draft
from zolsearch.search.stages.base import SearchState, Stage


def cache_key_text(question: str) -> str:
    """The text whose vector keys the cache: ``question`` normalised (case, accents and
    punctuation folded): the sentence encoder moves "…syndrome?" and "…syndrome" apart by 0.06
    cosine, as far as a question of another type about the same disease."""
    return text_normalise(question)


class SemanticCacheStage(Stage):
    """Look the question up in the semantic cache (nearest question vector under the same
    configuration hash, index version and language, cosine ≥ ``semantic_cache_min_cosine``)."""

    name = "semantic_cache"
    reads = frozenset({"question", "language", "config", "provider", "query_vector", "cache_vector"})
    adds = frozenset({"draft", "documents_text", "gate", "cache_hit", "cache_vector", "cache_index_version"})

    def applies(self, state: SearchState) -> bool:
        return state.config.semantic_cache_enabled and state.query_vector is not None

    def run(self, state: SearchState) -> None:
        if state.cache_vector is None:  # the query-embedding stage computes it beside the question's
            state.cache_vector = state.provider.embed_query(cache_key_text(state.question))
        state.cache_index_version, entry = selectors.cache_lookup(
            vector=state.cache_vector,
            model_key=state.provider.key,
            config_hash=state.config.hash,
            language=state.language,
            min_cosine=state.config.semantic_cache_min_cosine,
        )
        SEMANTIC_CACHE_TOTAL.labels(result="hit" if entry else "miss").inc()
        if entry is None:
            return
        payload = entry.payload
        draft = payload["draft"]
        state.draft = Draft(
            text=draft["text"],
            citations=[Citation(**c) for c in draft["citations"]],
            cited_chunk_ids=list(draft["cited_chunk_ids"]),
            generator=Generator(draft["generator"]),
            model=draft["model"],
        )
        state.documents_text = payload.get("documents_text", "")
        state.gate = GateResult(**payload["gate"]) if payload.get("gate") else None
        state.cache_hit = state.trace.retrieval.cache_hit_id = entry.pk
