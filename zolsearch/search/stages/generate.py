"""Generation: extractive composition with numbered citations, or an LLM when configured
(design step 8); the graph's facts are pinned first."""

from __future__ import annotations

import logging

import numpy as np

from core.providers.llm import LLMUnavailable
from core.text import text_normalise
from ingestion.chunking import chunk_sentences
from ingestion.models import Chunk
from taxonomy.selectors import department_names_except
from zolsearch.search.contract import Outcome
from zolsearch.search.focus import document_foci, focus_equivalents
from zolsearch.search.generation import answer_extractive, answer_llm, draft_pin
from zolsearch.search.stages.base import SearchState, Stage, StopPipeline
from zolsearch.search.stages.rerank import sentence_vectors

logger = logging.getLogger(__name__)


def chunks_same_focus(
    chunks: list[Chunk], *, focus: str, title_variants: bool = True, equivalents: bool = False
) -> list[Chunk]:
    """``chunks`` (in order) without those about another MedQuAD focus than ``focus``, when at
    least one is about ``focus`` itself (:func:`~zolsearch.search.focus.document_foci`: its focus
    or a UMLS synonym; with ``title_variants`` the names its focus title holds; with
    ``equivalents`` the focus another site names the same condition by). Unchanged
    when ``focus`` is "" or no chunk is about it; chunks of documents without foci (hospital
    pages, RIVM) are always kept."""
    key = text_normalise(focus) if focus else ""
    if not key:
        return chunks
    pairs = focus_equivalents() if equivalents else None
    foci = [
        document_foci(chunk.document.metadata, title_variants=title_variants, equivalents=pairs) for chunk in chunks
    ]
    if not any(key in names for names in foci):
        return chunks
    return [chunk for chunk, names in zip(chunks, foci, strict=True) if not names or key in names]


def sentences_similarity(state: SearchState, chunks: list[Chunk]) -> dict[int, dict[str, float]]:
    """Chunk id → sentence → the cosine in [-1, 1] of the sentence's embedding with the
    question's, for every sentence of ``chunks`` as FILCO splits them
    (:func:`ingestion.chunking.chunk_sentences`; vectors stored at ingestion where they match,
    :func:`~zolsearch.search.stages.rerank.sentence_vectors`). The question's vector is the
    reduced query's when understanding reduced a long message (``search_vector``), as FILCO
    scores it, else the question's; ``{}`` without either or without sentences. Provider vectors
    are unit length, so the dot product is the cosine."""
    question = state.search_vector if state.search_vector is not None else state.query_vector
    per_chunk = [
        (chunk, chunk_sentences(summary=chunk.document.summary, position=chunk.position, text=chunk.text))
        for chunk in chunks
    ]
    per_chunk = [(chunk, sentences) for chunk, sentences in per_chunk if sentences]
    if question is None or not per_chunk:
        return {}
    scores = sentence_vectors(state.provider, per_chunk) @ np.asarray(question, dtype=np.float32)
    result: dict[int, dict[str, float]] = {}
    offset = 0
    for chunk, sentences in per_chunk:
        result[chunk.id] = {
            s: float(c) for s, c in zip(sentences, scores[offset : offset + len(sentences)], strict=True)
        }
        offset += len(sentences)
    return result


class GenerationStage(Stage):
    """Extractive answer, or the LLM when configured (falling back to extractive on failure)."""

    name = "generate"
    cached = True
    reads = frozenset(
        {"question", "language", "config", "fused", "chunks", "pinned", "filtered", "focus"}
        | {"provider", "query_vector", "search_vector"}
    )
    adds = frozenset({"draft", "documents_text"})

    def run(self, state: SearchState) -> None:
        top = [state.chunks[i] for i, _ in state.fused[: state.config.answer_chunks] if i in state.chunks]
        if state.config.answer_same_focus:
            top = chunks_same_focus(
                top,
                focus=state.focus.text if state.focus is not None else "",
                title_variants=state.config.foci_title_variants,
                equivalents=state.config.foci_equivalents,
            )
        if state.config.generator == "llm" and state.config.llm_model:
            try:
                state.draft = answer_llm(
                    question=state.question,
                    language=state.language,
                    chunks=top,
                    model=state.config.llm_model,
                    texts=state.filtered,
                )
                self._pin(state)
                return
            except LLMUnavailable as exc:
                logger.warning("LLM generation failed, falling back to extractive: %s", exc)
                state.trace.llm_error = str(exc)
        state.draft = answer_extractive(
            question=state.question,
            language=state.language,
            chunks=top,
            max_sentences=state.config.answer_max_sentences,
            exclude_names=self._other_departments(state),
            texts=state.filtered,
            similarity=sentences_similarity(state, top) if state.config.answer_sentence_similarity else None,
            similarity_weight=state.config.answer_sentence_similarity,
        )
        if not state.draft.text:
            raise StopPipeline(Outcome.NO_RESULTS, "the passages found contain no usable sentence")
        self._pin(state)

    @staticmethod
    def _other_departments(state: SearchState) -> frozenset[str]:
        """Normalised names of departments the graph does not route this question to."""
        if not state.pinned:
            return frozenset()
        routed = {i for fact in state.pinned for i in fact.entity_ids}
        names = department_names_except(entity_ids=routed)
        state.trace.graph_excluded_departments = sorted(names)
        return names

    @staticmethod
    def _pin(state: SearchState) -> None:
        assert state.draft is not None
        state.documents_text = state.draft.text
        state.draft = draft_pin(draft=state.draft, facts=state.pinned, language=state.language)
