"""Tests of the search pipeline; :func:`feature_of_candidates` is shared by the reranker-feature tests."""

from __future__ import annotations

from typing import Any


def feature_of_candidates(state: Any, feature: str, *, question: str, **options: Any) -> list[float]:
    """``feature`` of each fused candidate of a finished pipeline ``state`` (fused order), as
    :func:`zolsearch.search.rerank.rerank_candidates` computes it for ``question`` in the state's
    language; ``options``: its other keyword arguments (``priorities`` defaults to none)."""
    from zolsearch.search.rerank import rerank_candidates

    candidates = rerank_candidates(
        question=question,
        language=state.language,
        fused=state.fused,
        chunks=state.chunks,
        dense=state.dense,
        lexical=state.lexical,
        query_vector=state.query_vector,
        model_key=state.provider.key,
        **{"priorities": {}, **options},
    )
    return [c.features[feature] for c in candidates]
