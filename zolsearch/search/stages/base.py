"""The stage contract: what a stage reads and adds, the state they share, and how one stops.

A stage declares ``reads`` and ``adds`` (names of :class:`SearchState` fields); the
orchestrator checks in tests that a stage changes only what it declares
(``tests/search/test_stage_contract.py``). A stage that ends the run early raises
:class:`StopPipeline` with an :class:`~zolsearch.search.contract.Outcome`; the remaining stages
are skipped except those marked ``always`` (composition), which turn the stop into the reply.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import numpy as np

from core.providers.embeddings import EmbeddingProvider
from ingestion.models import Chunk
from taxonomy.resolver import Resolution
from taxonomy.selectors import RoutingFact
from zolsearch.search.config import PipelineConfig
from zolsearch.search.contract import AnswerTrace, Generator, Intent, Outcome, RefusalReason
from zolsearch.search.focus import Focus
from zolsearch.search.gate import GateResult
from zolsearch.search.generation import Citation, Draft
from zolsearch.search.safety.redflags import RedFlagHit


class StopPipeline(Exception):
    """Raised by a stage to end the run early with ``outcome``; ``reason`` is for the trace."""

    def __init__(self, outcome: Outcome, reason: str) -> None:
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
    think_harder: bool = False  # deeper candidate pools (design: 100 → 20)


@dataclass
class Stop:
    """Which stage stopped the run, with which outcome, and why."""

    outcome: Outcome
    reason: str
    stage: str


@dataclass
class SearchState:
    """Everything the stages read and add, plus the per-stage timings (ms).

    Groups (the stage that adds each): language (understand); ``red_flag``, ``emergency_notice``
    (red flags); ``question`` (follow-up: the question taxonomy, retrieval, understanding, the
    cache key and generation search with; the request's question unless it follows up the
    previous turn of its conversation; the safety stages read the request's question as typed);
    ``intent``, ``routing``, ``pinned``, ``resolution`` (taxonomy); ``refusal`` (guards);
    ``qtype``, ``focus``, ``search_query``, ``search_vector`` (understanding);
    ``query_vector`` (embed_query); ``dense``, ``lexical``, ``lexical_backend`` (retrievers:
    ``[(chunk id, score)]`` best first; dense cosine similarity in [-1, 1], BM25 ≥ 0);
    ``filtered``, ``filtered_vectors`` (FILCO);
    ``fused``, ``chunks`` (fusion: RRF scores; keyword rescue and focus rescue add to both; the reranker
    reorders ``fused`` and adds ``rerank``, its scores, and ``chunk_vectors``, the stored vectors
    of the candidates it kept; CRAG may replace all of them);
    ``draft``, ``documents_text`` (generate);
    ``gate`` (gate); ``stop`` (any stage that ends the run); the reply fields ``outcome``,
    ``answer``, ``citations``, ``generator``, ``generator_model`` (compose).
    """

    request: SearchRequest
    config: PipelineConfig
    provider: EmbeddingProvider
    trace_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    question: str = ""  # what the stages search: the request's question, or its follow-up resolution
    language: str = ""
    red_flag: RedFlagHit | None = None
    emergency_notice: bool = False
    intent: Intent = Intent.GENERAL
    # intent → probability from the understanding classifier when its intent was taken ({}: the graph's or none)
    intent_probabilities: dict[str, float] = field(default_factory=dict)
    routing: bool = False  # a "where / which department / which doctor" question the graph answers
    pinned: list[RoutingFact] = field(default_factory=list)
    resolution: Resolution | None = None  # the taxonomy's resolution of the question
    focus: Focus | None = None  # what the question is about, linked (understanding)
    refusal: RefusalReason | None = None
    query_vector: np.ndarray | None = None
    qtype: str = ""  # MedQuAD question type from understanding ("" unknown, "none" not medical)
    search_query: str = ""  # what retrieval searches: the reduced query of a long message, else ""
    search_vector: np.ndarray | None = None  # its vector (None: the query vector)
    dense: list[tuple[int, float]] = field(default_factory=list)
    lexical: list[tuple[int, float]] = field(default_factory=list)
    lexical_backend: str = ""
    fused: list[tuple[int, float]] = field(default_factory=list)
    chunks: dict[int, Chunk] = field(default_factory=dict)
    rerank: dict[int, float] = field(default_factory=dict)  # chunk id → reranker score
    # chunk id → (d,) float32 stored vector of the query model, read by the reranker (the gate's context)
    chunk_vectors: dict[int, np.ndarray] = field(default_factory=dict)
    filtered: dict[int, str] = field(default_factory=dict)  # chunk id → its text after FILCO
    # chunk id → (d,) float32 unit vector: the mean of the vectors of the sentences FILCO kept
    filtered_vectors: dict[int, np.ndarray] = field(default_factory=dict)
    cache_hit: int | None = None  # the semantic cache entry the draft and gate came from
    cache_vector: np.ndarray | None = None  # vector of the normalised question (the cache key)
    cache_index_version: str = ""  # the index version the lookup used (the store reuses it)
    draft: Draft | None = None
    documents_text: str = ""  # the draft before graph facts were pinned (what the gate scores)
    gate: GateResult | None = None
    stop: Stop | None = None
    outcome: Outcome = Outcome.ANSWERED
    answer: str = ""
    citations: list[Citation] = field(default_factory=list)
    generator: Generator = Generator.FALLBACK
    generator_model: str = ""
    trace: AnswerTrace = field(default_factory=AnswerTrace)
    timings_ms: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.question:
            self.question = self.request.question


class Stage:
    """One pipeline step. ``name`` keys its timing; ``applies`` gates it on the config/state;
    ``reads``/``adds``: the :class:`SearchState` fields it reads and writes (``trace`` is
    written by many and not declared); ``always``: runs even after a :class:`StopPipeline`;
    ``cached``: skipped when the semantic cache served the draft (retrieval, generation and
    their checks)."""

    name: str = "stage"
    reads: frozenset[str] = frozenset()
    adds: frozenset[str] = frozenset()
    always: bool = False
    cached: bool = False

    def applies(self, state: SearchState) -> bool:
        return True

    def run(self, state: SearchState) -> None:
        raise NotImplementedError
