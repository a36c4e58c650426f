"""The frozen per-request pipeline configuration.

Built once per request from settings (later: stored rows), or passed explicitly by an evaluation
or ablation run. Nothing in the pipeline reads a mutable global during a request; the hash of
this object is stored on every ``Answer`` so runs can be grouped by exact configuration.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from django.conf import settings

from core.providers.embeddings import embedding_provider_get


@dataclass(frozen=True)
class PipelineConfig:
    """Feature flags, thresholds, model keys and top-k values of one pipeline run.

    - ``dense_candidates``/``lexical_candidates``: hits taken from each retriever (design: 20).
    - ``rrf_k``: Reciprocal Rank Fusion constant, 60 (Cormack, Clarke & Büttcher, SIGIR 2009).
    - ``top_k``: fused candidates kept (design: 10); ``answer_chunks`` of them feed the answer.
    - ``gate_threshold``: pass when the gate score ≥ it (cosine scale, [-1, 1]).
    - ``hnsw_ef_search``: pgvector ``hnsw.ef_search`` (≥ the candidate count).
    """

    embedding_model: str
    gate_threshold: float
    dense_enabled: bool = True
    lexical_enabled: bool = True
    dense_candidates: int = 20
    lexical_candidates: int = 20
    rrf_k: int = 60
    top_k: int = 10
    answer_chunks: int = 3
    answer_max_sentences: int = 4
    gate_enabled: bool = True
    generator: str = "extractive"
    llm_model: str = ""
    hnsw_ef_search: int = 200

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of every field."""
        return asdict(self)

    @property
    def hash(self) -> str:
        """SHA-256 hex of the canonical JSON of :meth:`as_dict` (64 characters)."""
        canonical = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def with_overrides(self, **changes: Any) -> PipelineConfig:
        """A copy with ``changes`` applied (raises ``TypeError`` for an unknown field)."""
        return replace(self, **changes)


def gate_threshold_for(model_key: str) -> float:
    """The configured gate threshold of ``model_key`` (``GATE_THRESHOLDS``, else the default)."""
    return float(settings.GATE_THRESHOLDS.get(model_key, settings.GATE_THRESHOLD_DEFAULT))


def pipeline_config_default() -> PipelineConfig:
    """The configuration a live request runs with, from the current settings."""

    model_key = embedding_provider_get().key
    use_llm = bool(settings.LLM_MODEL and settings.LLM_BASE_URL)
    return PipelineConfig(
        embedding_model=model_key,
        gate_threshold=gate_threshold_for(model_key),
        dense_candidates=settings.SEARCH_CANDIDATES,
        lexical_candidates=settings.SEARCH_CANDIDATES,
        rrf_k=settings.SEARCH_RRF_K,
        top_k=settings.SEARCH_TOP_K,
        generator="llm" if use_llm else "extractive",
        llm_model=settings.LLM_MODEL if use_llm else "",
        hnsw_ef_search=max(settings.SEARCH_HNSW_EF_SEARCH, settings.SEARCH_CANDIDATES),
    )
