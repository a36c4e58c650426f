"""The fast quality gate stage (design step 9)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.text import text_normalise
from ingestion.chunking import chunk_sentences, sentences_digest
from zolsearch.search import selectors
from zolsearch.search.contract import Outcome
from zolsearch.search.filco import kept_vector
from zolsearch.search.focus import focus_equivalents
from zolsearch.search.gate import (
    Subject,
    gate_score,
    gate_setting_for,
    site_disagrees,
    subject_disagrees,
    terms_disagree,
)
from zolsearch.search.generation import CITATION_MARK, answer_plain
from zolsearch.search.sites import SiteMatcher, index_site_labels, own_page_site
from zolsearch.search.stages.base import SearchState, Stage, StopPipeline


def draft_gate_vectors(state: SearchState) -> tuple[np.ndarray, np.ndarray]:
    """``(answer, context)`` vectors (``(d,)`` float32) the gate compares for ``state``'s draft:
    its retrieved part (before graph facts were pinned) embedded as a passage, and the mean of
    the context it was written from: for a chunk FILCO filtered, the normalised mean of the
    vectors of the sentences it kept (``filtered_vectors``: stored at ingestion or embedded by
    FILCO, never embedded again here); else the chunk's stored vector (computed at ingestion;
    as the reranker read it, ``state.chunk_vectors``, else read here in one query).
    The only encoder call is the answer's. Before 2026-11-25 the filtered text was embedded
    again: 12 ms p50 / 25 ms p95 more per request (docs/BENCHMARKS.md)."""
    assert state.draft is not None
    cited = state.draft.cited_chunk_ids
    answer_vector = state.provider.embed_passages([draft_gated_text(state)])[0]
    known = {**state.chunk_vectors, **state.filtered_vectors}  # FILCO's vector for a chunk it filtered
    missing = [i for i in cited if i not in known]
    if missing:
        known.update(selectors.chunk_vectors_by_id(ids=missing, model_key=state.provider.key))
    rows = [known[i] for i in cited if i in known]
    return answer_vector, (np.mean(rows, axis=0) if rows else answer_vector * 0)


def answer_sentences_vector(state: SearchState) -> np.ndarray | None:
    """The draft's vector as the normalised mean of the stored vectors of its sentences
    (``(d,)`` float32), or None when a sentence of its retrieved part is not a stored sentence of
    a cited chunk (an LLM's wording, a chunk ingested before sentence vectors, a changed
    splitter). The extractive composer copies sentences verbatim and marks each with ``[n]``, so
    the draft splits back into them at the marks. One query; no encoder call."""
    assert state.draft is not None
    text = state.documents_text or state.draft.text
    wanted = [s.strip() for s in CITATION_MARK.split(text) if s.strip()]
    if not wanted:
        return None
    stored = selectors.chunk_sentence_vectors(ids=state.draft.cited_chunk_ids, model_key=state.provider.key)
    by_text: dict[str, np.ndarray] = {}
    for chunk_id, (digest, matrix) in stored.items():
        chunk = state.chunks.get(chunk_id)
        if chunk is None:
            continue
        sentences = chunk_sentences(summary=chunk.document.summary, position=chunk.position, text=chunk.text)
        if len(sentences) == len(matrix) and digest == sentences_digest(sentences):
            for sentence, row in zip(sentences, matrix, strict=True):
                by_text.setdefault(sentence, row)
    if any(s not in by_text for s in wanted):
        return None
    return kept_vector(np.vstack([by_text[s] for s in wanted]), [True] * len(wanted))


def draft_subject_disagrees(state: SearchState) -> bool:
    """:func:`zolsearch.search.gate.subject_disagrees` of ``state``'s linked focus and question
    type, its candidates (``state.chunks``: the reranked top k) and the chunks its draft cites;
    False without a focus or a draft."""
    if state.focus is None or state.draft is None:
        return False
    variants = state.config.foci_title_variants
    equivalents = focus_equivalents() if state.config.foci_equivalents else None
    subjects = {
        i: Subject.of(chunk.document.metadata, title_variants=variants, equivalents=equivalents)
        for i, chunk in state.chunks.items()
    }
    return subject_disagrees(
        text_normalise(state.focus.text),
        state.qtype,
        candidates=list(subjects.values()),
        cited=[subjects[i] for i in state.draft.cited_chunk_ids if i in subjects],
    )


def draft_site_disagrees(state: SearchState) -> bool:
    """:func:`zolsearch.search.gate.site_disagrees` of the question as asked (``state.question``,
    which names the hospital; the search query may not), its candidates (``state.chunks``) and
    the chunks its draft cites; a page is a hospital's own when its source has a priority in
    ``state.config.source_priorities``. False without a draft."""
    if state.draft is None:
        return False
    priorities = state.config.source_priorities
    subjects = {
        i: Subject(foci=frozenset(), site=own_page_site(chunk, priorities) or ()) for i, chunk in state.chunks.items()
    }
    if not any(s.site for s in subjects.values()):
        return False
    matcher = SiteMatcher(state.question, state.language, index_site_labels())
    return site_disagrees(
        matcher.names,
        candidates=list(subjects.values()),
        cited=[subjects[i] for i in state.draft.cited_chunk_ids if i in subjects],
    )


def draft_gated_text(state: SearchState) -> str:
    """The part of the draft the gate scores: its retrieved part (before graph facts were
    pinned), without citation marks. The draft must be set."""
    assert state.draft is not None
    return answer_plain(state.documents_text or state.draft.text)


def draft_terms_disagree(state: SearchState) -> bool:
    """:func:`zolsearch.search.gate.terms_disagree` of the question (after follow-up
    resolution) and the draft's retrieved part (what the gate scores), in the question's
    language, given the languages of the chunks the draft cites ("" for a chunk not among the
    candidates or without a language: unknown, so never refused by this rule); with
    ``gate_term_check_across`` also for a draft from pages in other languages, matched against
    the question's words and the words understanding added to its search
    (``trace.understanding.expanded``, stored with the answer, so calibration reads the same);
    the words its spelling was corrected to count as the question's
    (``trace.understanding.corrected``, stored likewise).
    False without a draft."""
    if state.draft is None:
        return False
    languages = [(state.chunks[i].language or "") if i in state.chunks else "" for i in state.draft.cited_chunk_ids]
    return terms_disagree(
        state.question,
        draft_gated_text(state),
        language=state.language,
        draft_languages=languages,
        searched=state.trace.understanding.expanded,
        across=state.config.gate_term_check_across,
        corrected=state.trace.understanding.corrected,
    )


class GateStage(Stage):
    """Fast quality gate: w·cos(answer, context) + (1 − w)·cos(question, answer) ≥ threshold.

    Threshold and w: the calibrated ones of the question's language, else the model's threshold
    and the seed's w = 0.7.
    Context vector: the mean over the chunks the answer cites of FILCO's vector of the sentences
    it kept, else the chunk's stored vector (:func:`draft_gate_vectors`; the gate embeds only
    the answer). Scores the retrieved part of the draft (the
    text before graph facts were pinned). With ``gate_focus_check``, a draft about another
    condition than the one the question names is refused whatever its score
    (:func:`draft_subject_disagrees`); with ``gate_site_check``, a draft from other hospitals'
    pages than the one the question names (:func:`draft_site_disagrees`); with
    ``gate_term_check``, a draft in the question's language that shares no content word with it
    (:func:`draft_terms_disagree`), and with ``gate_term_check_across`` one from pages in other
    languages that shares none with the question or its translation.
    """

    name = "gate"
    cached = True
    reads = frozenset(
        {"draft", "documents_text", "query_vector", "provider", "config", "language", "filtered_vectors"}
        | {"focus", "qtype", "chunks", "chunk_vectors", "question"}
    )
    adds = frozenset({"gate"})

    def applies(self, state: SearchState) -> bool:
        return state.config.gate_enabled

    def run(self, state: SearchState) -> None:
        assert state.draft is not None and state.query_vector is not None
        answer, context = draft_gate_vectors(state)
        threshold, context_weight = gate_setting_for(
            state.language,
            thresholds=state.config.gate_thresholds_by_language,
            context_weights=state.config.gate_context_weights_by_language,
            default_threshold=state.config.gate_threshold,
        )
        state.gate = gate_score(
            answer=answer,
            context=context,
            question=state.query_vector,
            threshold=threshold,
            context_weight=context_weight,
        )
        if state.config.gate_focus_check and draft_subject_disagrees(state):
            state.gate = replace(state.gate, passed=False, focus_mismatch=True)
        if state.config.gate_site_check and draft_site_disagrees(state):
            state.gate = replace(state.gate, passed=False, site_mismatch=True)
        if state.config.gate_term_check and draft_terms_disagree(state):
            state.gate = replace(state.gate, passed=False, term_mismatch=True)
        if not state.gate.passed:
            state.trace.rejected_answer = state.draft.text
            if state.gate.focus_mismatch:
                reason = "the answer is about another condition or question than the one asked"
            elif state.gate.site_mismatch:
                reason = "the answer is from another hospital's pages than the one asked about"
            elif state.gate.term_mismatch:
                reason = "the answer shares no word with the question"
            else:
                reason = "the answer did not pass the quality gate"
            raise StopPipeline(Outcome.GATE_REJECTED, reason)
