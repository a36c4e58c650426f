"""Corrective retrieval: keyword rescue (seed 003), reranking (design step 5), CRAG (design
step 6, Yan et al., "Corrective Retrieval Augmented Generation", 2024) and FILCO (design step 7)."""

from __future__ import annotations

import logging
import re

import numpy as np

from core.providers.embeddings import EmbeddingProvider
from core.providers.rerank import RerankUnavailable, reranker_get
from core.text import STOPWORDS, text_normalise
from ingestion.chunking import chunk_sentences, sentences_digest
from ingestion.models import Chunk
from zolsearch.search import selectors
from zolsearch.search.contract import Intent, Outcome
from zolsearch.search.filco import filco_keep, kept_vector
from zolsearch.search.focus import focus_equivalent_written
from zolsearch.search.rerank import rerank_candidates
from zolsearch.search.sites import SiteMatcher, index_site_labels, own_page_site
from zolsearch.search.stages.base import SearchState, Stage, StopPipeline
from zolsearch.search.stages.retrieval import (
    authority_share,
    dense_retrieve,
    fuse,
    lexical_retrieve,
    query_stopwords,
    retrieval_depth,
)
from zolsearch.search.understanding import message_words

logger = logging.getLogger(__name__)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def rescue_terms(
    *, question: str, language: str, chunks: list[Chunk], min_chars: int, stopwords: frozenset[str] = frozenset()
) -> list[str]:
    """Question words of ≥ ``min_chars`` letters, not stop words (question language or English,
    and ``stopwords``: the BM25 query's, :data:`core.text.BM25_STOPWORDS`, so that rescue does not
    search on its own a word BM25 left out), that occur in none of ``chunks`` (their embedded
    text, accent- and case-folded; a word counts as present when it is a substring, so inflected
    forms are not rescued needlessly)."""
    stop = STOPWORDS.get(language, set()) | STOPWORDS["en"] | stopwords
    words = []
    for word in _WORD.findall(question.lower()):
        folded = text_normalise(word)
        if len(folded) >= min_chars and word not in stop and folded not in words:
            words.append(folded)
    if not words:
        return []
    haystack = " ".join(text_normalise(c.embedded_text) for c in chunks)
    return [w for w in words if w not in haystack]


def candidates_append(
    fused: list[tuple[int, float]], chunks: dict[int, Chunk], ids: list[int]
) -> list[tuple[int, float]]:
    """``fused`` (``(chunk id, RRF score)`` best first) with the chunks ``ids`` (not yet
    candidates) after it, at half its lowest score (the reranker ranks them; without one they
    stay last and the cut to ``top_k`` drops them); ``chunks`` gains them (read in one query; an
    id no longer in the database is left out). Raises Django's ``DatabaseError``."""
    floor = min((score for _, score in fused), default=1.0)
    chunks.update(selectors.chunks_by_ids(ids))
    return fused + [(i, floor * 0.5) for i in ids if i in chunks]


class KeywordRescueStage(Stage):
    """Rare terms the candidates lack are searched on their own (BM25, one query per term);
    up to ``keyword_rescue_max_chunks`` new chunks join the candidates, after the fused ones."""

    name = "keyword_rescue"
    cached = True
    reads = frozenset({"request", "question", "search_query", "language", "config", "fused", "chunks"})
    adds = frozenset({"fused", "chunks"})

    def applies(self, state: SearchState) -> bool:
        return state.config.keyword_rescue_enabled and state.config.keyword_rescue_max_chunks > 0

    def run(self, state: SearchState) -> None:
        terms = rescue_terms(
            question=state.search_query or state.question,
            language=state.language,
            chunks=list(state.chunks.values()),
            min_chars=state.config.keyword_rescue_min_chars,
            stopwords=query_stopwords(state),
        )
        if not terms:
            return
        terms = terms[: state.config.keyword_rescue_max_chunks]  # one BM25 query per term, bounded
        state.trace.retrieval.rescued_terms = terms
        limit = state.config.keyword_rescue_max_chunks
        added: list[int] = []
        for term in terms:
            _, hits = selectors.chunks_lexical_search(
                query=term,
                language=state.language,
                limit=limit,
                languages=state.request.languages,
                sources=state.request.sources,
            )
            added += [i for i, _ in hits if i not in state.chunks and i not in added]
        added = added[:limit]
        if not added:
            return
        state.fused = candidates_append(state.fused, state.chunks, added)


def focus_rescue_ids(state: SearchState, chunks: dict[int, Chunk], *, any_length: bool = False) -> list[int]:
    """The ids of the chunks focus rescue adds to the candidates ``chunks``: the first chunk of
    each page of the question's linked MedQuAD focus that answers its question type
    (:func:`zolsearch.search.selectors.focus_qtype_chunk_ids`; with ``foci_equivalents`` also
    of the focus another site names the same condition by, as that site writes it: GHR's
    "Alpers-Huttenlocher syndrome" and NINDS's "Alpers' Disease",
    :func:`zolsearch.search.focus.focus_equivalent_written`), at most ``focus_rescue_max_chunks``,
    those not among ``chunks``. ``[]`` when it does not apply: off (0), no MedQuAD focus, no
    question type, or a long message (one whose story understanding dropped, a reduced query;
    any message without ``focus_rescue_short_any``) whose focus is named in fewer than
    ``focus_rescue_min_words`` words: there a one-word focus is more often a generic word of the
    story, "bloedarmoede" → Anemia beside "5q min syndroom", whose pages then won on the dev
    sets, while a short message names it in its question ("aanhoudende hoest onderzoek" →
    Cough; docs/EVALUATION.md, "What the hospital's pages are about, and the linked focus's
    answers as candidates"). ``any_length``: the focus counts whatever its number of words (the
    rerank stage's second look, :meth:`RerankStage.run`). Raises Django's ``DatabaseError``."""
    config, focus = state.config, state.focus
    if (
        config.focus_rescue_max_chunks < 1
        or focus is None
        or focus.source != "medquad"
        or state.qtype in ("", "none")
        or (
            not any_length
            and len(focus.matched.split()) < config.focus_rescue_min_words
            # a short message (not reduced: no story) names its focus in the question itself
            and not (config.focus_rescue_short_any and not state.trace.understanding.reduced)
        )
    ):
        return []
    foci = [focus.text]
    if config.foci_equivalents and (same := focus_equivalent_written(focus.text)):
        foci.append(same)
    ids = selectors.focus_qtype_chunk_ids(
        foci=foci,
        qtype=state.qtype,
        limit=config.focus_rescue_max_chunks,
        languages=state.request.languages,
        sources=state.request.sources,
    )
    return [i for i in ids if i not in chunks]


class FocusRescueStage(Stage):
    """The pages of the question's linked MedQuAD focus that answer its question type join the
    candidates when neither retriever returned them (:func:`focus_rescue_ids`, after the fused
    ones, as keyword rescue adds its chunks): "wat is ALS precies? mijn oom kreeg net de
    diagnose amyotrofische laterale sclerose" is reduced to the story's words, and 20 chunks of
    each retriever held GHR's and GARD's other ALS answers but no site's "What is (are)
    Amyotrophic Lateral Sclerosis?". The reranker then ranks them with the rest (its focus and
    question-type features); without one serving the language (:func:`reranker_serves`) the
    stage does not run, since the cut to ``top_k`` would drop them. CRAG's refinement adds them
    to its deeper pools too (:meth:`CragStage._refine`). ``trace.retrieval.focus_rescued``: how
    many joined."""

    name = "focus_rescue"
    cached = True
    reads = frozenset({"request", "focus", "qtype", "config", "fused", "chunks", "language"})
    adds = frozenset({"fused", "chunks"})

    def applies(self, state: SearchState) -> bool:
        return state.config.focus_rescue_max_chunks > 0 and reranker_serves(state)

    def run(self, state: SearchState) -> None:
        added = focus_rescue_ids(state, state.chunks)
        state.trace.retrieval.focus_rescued = len(added)
        if added:
            state.fused = candidates_append(state.fused, state.chunks, added)


def rerank_apply(
    state: SearchState,
    *,
    fused: list[tuple[int, float]],
    chunks: dict[int, Chunk],
    dense: list[tuple[int, float]],
    lexical: list[tuple[int, float]],
    keep: int,
) -> tuple[list[tuple[int, float]], dict[int, float], dict[int, np.ndarray]]:
    """``(fused reordered by the reranker and cut to keep, {chunk id: rerank score}, {chunk id:
    (d,) float32 stored vector of the query model})`` for the kept candidates.

    The candidates' stored vectors are read in one query: the dense feature of those the dense
    retriever did not return, and the gate's context (``SearchState.chunk_vectors``), which
    would otherwise read the cited ones again (one round trip fewer per answer).
    Raises :class:`RerankUnavailable` (the caller keeps the fused order)."""
    reranker = reranker_get(state.config.reranker)
    state.trace.retrieval.reranker = reranker.key
    query = state.search_query or state.question
    ids = [i for i, _ in fused if i in chunks]
    vectors = selectors.chunk_vectors_by_id(ids=ids, model_key=state.provider.key) if ids else {}
    candidates = rerank_candidates(
        question=query,
        language=state.language,
        fused=fused,
        chunks=chunks,
        dense=dense,
        lexical=lexical,
        query_vector=state.search_vector if state.search_vector is not None else state.query_vector,
        model_key=state.provider.key,
        priorities=state.config.source_priorities if state.config.source_authority_enabled else {},
        authority=authority_share(state),
        qtype=state.qtype,
        focus=state.focus.text if state.focus is not None else "",
        asked=state.question,
        vectors=vectors,
        qtype_needs_topic=state.config.qtype_match_needs_topic,
        foci_title_variants=state.config.foci_title_variants,
        foci_equivalents=state.config.foci_equivalents,
    )
    scores = reranker.rerank(query, candidates)
    by_id = {i: float(s) for i, s in zip(ids, scores, strict=True)}
    fused_score = dict(fused)
    order = sorted(ids, key=lambda i: -by_id[i])  # stable: ties keep the fused order
    kept = order[:keep]
    return [(i, fused_score[i]) for i in kept], by_id, {i: vectors[i] for i in kept if i in vectors}


def reranker_serves(state: SearchState) -> bool:
    """A reranker is configured and serves the question's language (``rerank_languages``)."""
    config = state.config
    return bool(config.reranker) and (not config.rerank_languages or state.language in config.rerank_languages)


def named_hospital_first(state: SearchState, fused: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """``fused`` (``(chunk id, score)`` best first) with the pages of the hospital the question
    names moved ahead of other hospitals' own pages, each group in its order; general pages
    (MedQuAD, a source without a priority) keep their places. A hospital is named by its web
    address (:func:`zolsearch.search.sites.own_page_site`, as the gate's site agreement reads it,
    not its name: "antwerpen" in a question is not UZA's "Universitair Ziekenhuis Antwerpen"); a
    page is a hospital's own when its source has a priority in ``config.source_priorities``.
    ``fused`` unchanged when the question names none of the candidates' hospitals. Why: the
    reranker's ``site_named`` is one feature among many, so "mag mijn vriend blijven na de
    bevalling in st jansdal" had two other hospitals' maternity pages above St Jansdal's, and the
    gate then refused the draft from them (another hospital's pages than the one asked about)."""
    priorities = state.config.source_priorities
    sites = {i: own_page_site(chunk, priorities) for i, _ in fused if (chunk := state.chunks.get(i)) is not None}
    own = {i: labels for i, labels in sites.items() if labels is not None}
    if not any(own.values()):
        return fused
    matcher = SiteMatcher(state.question, state.language, index_site_labels())
    named = {i for i, labels in own.items() if labels and matcher.names(labels)}
    if not named or named == set(own):
        return fused
    slots = [n for n, (i, _) in enumerate(fused) if i in own]
    ordered = [fused[n] for n in slots if fused[n][0] in named] + [fused[n] for n in slots if fused[n][0] not in named]
    out = list(fused)
    for slot, pair in zip(slots, ordered, strict=True):
        out[slot] = pair
    return out


def ranking_adopt(state: SearchState, fused: list[tuple[int, float]], chunks: dict[int, Chunk]) -> None:
    """Make ``fused`` (``(chunk id, score)``, best first, every id in ``chunks``) the question's
    ranking: ``state.chunks`` cut to its candidates and, with ``named_hospital_first``, the pages
    of the hospital the question names first (:func:`named_hospital_first`). The one way the
    rerank stage, the cut without a reranker and CRAG's adopted refinement set the ranking."""
    state.chunks = {i: chunks[i] for i, _ in fused}
    state.fused = named_hospital_first(state, fused) if state.config.named_hospital_first else fused


class RerankStage(Stage):
    """Reorder the fused candidates by the configured reranker and keep ``top_k`` (or
    ``think_harder_top_k``). When the best score is under ``focus_rescue_below_score``, the
    linked focus's pages that focus rescue held back for a short name join the candidates
    and all are reranked once more (:meth:`_second_look`). A failing
    reranker keeps the fused order (recorded in the trace); so do questions in a language the
    reranker does not serve (cut to ``top_k`` by :class:`RerankCutStage`)."""

    name = "rerank"
    cached = True
    reads = frozenset(
        {"request", "search_query", "search_vector", "language", "config", "provider", "query_vector", "dense"}
        | {"lexical", "fused", "chunks", "intent", "intent_probabilities", "qtype", "focus", "question"}
    )
    adds = frozenset({"fused", "chunks", "rerank", "chunk_vectors"})

    def applies(self, state: SearchState) -> bool:
        return reranker_serves(state)

    def run(self, state: SearchState) -> None:
        keep = retrieval_depth(state)[3]
        try:
            ranked = rerank_apply(
                state, fused=state.fused, chunks=state.chunks, dense=state.dense, lexical=state.lexical, keep=keep
            )
        except RerankUnavailable as exc:
            logger.warning("reranker failed, keeping the fused order: %s", exc)
            state.trace.retrieval.rerank_error = str(exc)
            ranking_adopt(state, state.fused[:keep], state.chunks)
            return
        state.fused, state.rerank, state.chunk_vectors = self._second_look(state, ranked, keep=keep)
        ranking_adopt(state, state.fused, state.chunks)

    @staticmethod
    def _second_look(
        state: SearchState,
        ranked: tuple[list[tuple[int, float]], dict[int, float], dict[int, np.ndarray]],
        *,
        keep: int,
    ) -> tuple[list[tuple[int, float]], dict[int, float], dict[int, np.ndarray]]:
        """``ranked`` (:func:`rerank_apply`'s result), or, when its best score is under
        ``focus_rescue_below_score`` and the linked focus has pages focus rescue held back for
        a short name (:func:`focus_rescue_ids` with ``any_length``), the candidates with them
        reranked once more (``trace.retrieval.focus_rescued`` counts them). A reranker that
        fails the second time leaves ``ranked`` (the error is on the trace)."""
        threshold = state.config.focus_rescue_below_score
        if threshold <= 0 or max(ranked[1].values(), default=0.0) >= threshold:
            return ranked
        added = focus_rescue_ids(state, state.chunks, any_length=True)
        if not added:
            return ranked
        # No candidate looks like an answer, and the linked focus's own pages were held back for
        # its short name: "… de neuroloog heeft het over ataxie. … Wat betekent dat?" had the
        # story's words find other pages only (noisy dev nl6).
        fused = candidates_append(state.fused, state.chunks, added)
        try:
            again = rerank_apply(
                state, fused=fused, chunks=state.chunks, dense=state.dense, lexical=state.lexical, keep=keep
            )
        except RerankUnavailable as exc:
            logger.warning("reranker failed on the second look, the first ranking kept: %s", exc)
            state.trace.retrieval.rerank_error = str(exc)
            return ranked
        state.trace.retrieval.focus_rescued = len(added)
        return again


def crag_confidence(scores: list[float]) -> float:
    """CRAG retrieval confidence of rerank scores (best first, each in [0, 1]):
    ``0.5·top + 0.3·mean(top 3) + 0.2·(top − second)`` (seed 004). In [0, 1]; 0 for no scores."""
    if not scores:
        return 0.0
    ranked = sorted(scores, reverse=True)
    top3 = ranked[:3]
    gap = ranked[0] - ranked[1] if len(ranked) > 1 else ranked[0]
    return 0.5 * ranked[0] + 0.3 * sum(top3) / len(top3) + 0.2 * gap


class RerankCutStage(Stage):
    """Without a reranker for the question, keep the fused ``top_k`` (or ``think_harder_top_k``;
    the fusion kept the reranker's deeper pool)."""

    name = "rerank_cut"
    cached = True
    reads = frozenset({"request", "language", "config", "fused", "chunks", "question"})
    adds = frozenset({"fused", "chunks"})

    def applies(self, state: SearchState) -> bool:
        return not reranker_serves(state)

    def run(self, state: SearchState) -> None:
        ranking_adopt(state, state.fused[: retrieval_depth(state)[3]], state.chunks)


def _best_page_is_own(state: SearchState) -> bool:
    """The best-ranked candidate is one of the hospital's own pages: its source has a priority
    > 0 in ``config.source_priorities`` (the frozen configuration, as fusion and the reranker
    read it)."""
    if not state.fused or state.fused[0][0] not in state.chunks:
        return False
    return state.config.source_priorities.get(state.chunks[state.fused[0][0]].document.source.key, 0) > 0


class CragStage(Stage):
    """Correct → answer; ambiguous → retrieve again deeper (100 → 20), rerank, stop when the
    refined confidence is below the lower threshold, else keep the more confident of the two
    rankings; incorrect → stop with the fallback that routes to a human (``no_results``).

    Bypassed for graph-routed doctor lookups, for languages in ``crag_bypass_languages``, with
    ``crag_bypass_own_pages`` when the best-ranked page is the hospital's own, for messages of
    ``crag_bypass_min_words`` words or more, with ``crag_bypass_graph_facts`` when the graph
    pinned facts, when the reranker failed, and when the scorer has no calibrated thresholds."""

    name = "crag"
    cached = True
    reads = frozenset(
        {"request", "search_query", "search_vector", "language", "config", "provider", "query_vector", "intent"}
        | {"pinned", "rerank", "fused", "chunks", "qtype", "focus", "question"}
    )
    adds = frozenset({"fused", "chunks", "rerank", "chunk_vectors", "dense", "lexical"})

    def applies(self, state: SearchState) -> bool:
        return state.config.crag_enabled and reranker_serves(state)

    def run(self, state: SearchState) -> None:
        config, trace = state.config, state.trace.retrieval
        if config.crag_upper is None or config.crag_lower is None or not state.rerank:
            trace.crag_action = "off"
            return
        confidence = crag_confidence([state.rerank[i] for i, _ in state.fused])
        trace.crag_confidence = round(confidence, 4)
        if (
            (state.pinned and (state.intent == Intent.DOCTOR_LOOKUP or config.crag_bypass_graph_facts))
            or state.language in config.crag_bypass_languages
            or (config.crag_bypass_own_pages and _best_page_is_own(state))
            or (config.crag_bypass_min_words and message_words(state.question) >= config.crag_bypass_min_words)
        ):
            trace.crag_action = "bypass"
            return
        if confidence >= config.crag_upper:
            trace.crag_action = "correct"
            return
        if confidence < config.crag_lower:
            trace.crag_action = "incorrect"
            raise StopPipeline(
                Outcome.NO_RESULTS, f"CRAG: retrieval confidence {confidence:.3f} below {config.crag_lower}"
            )
        trace.crag_action = "ambiguous"
        self._refine(state)

    @staticmethod
    def _refine(state: SearchState) -> None:
        """Deeper pools (the caller's source and language filters still apply: they are the
        asker's constraints); stop (``no_results``) when the refined confidence is below the
        lower threshold, else go on with whichever ranking is more confident (the refined one
        adopted as the rerank stage adopts its own, :func:`ranking_adopt`)."""
        config = state.config
        n_dense, n_lexical, keep_fused, keep = retrieval_depth(state, deeper=True)
        dense = dense_retrieve(state, limit=n_dense) if config.dense_enabled and state.query_vector is not None else []
        lexical = lexical_retrieve(state, limit=n_lexical)[1] if config.lexical_enabled else []
        fused, chunks = fuse(state, dense=dense, lexical=lexical, keep=keep_fused)
        # as FocusRescueStage did for the first pools, and the rerank stage's second look
        if added := focus_rescue_ids(state, chunks, any_length=state.trace.retrieval.focus_rescued > 0):
            fused = candidates_append(fused, chunks, added)
        state.trace.retrieval.crag_refined = True
        try:
            refined, scores, vectors = rerank_apply(
                state, fused=fused, chunks=chunks, dense=dense, lexical=lexical, keep=keep
            )
        except RerankUnavailable as exc:
            state.trace.retrieval.rerank_error = str(exc)
            return  # keep the first ranking: an unavailable reranker is not evidence against it
        confidence = crag_confidence([scores[i] for i, _ in refined])
        state.trace.retrieval.crag_refined_confidence = round(confidence, 4)
        assert config.crag_lower is not None
        if confidence < config.crag_lower:
            raise StopPipeline(
                Outcome.NO_RESULTS, f"CRAG: refined retrieval confidence {confidence:.3f} below {config.crag_lower}"
            )
        if confidence > crag_confidence([state.rerank[i] for i, _ in state.fused]):
            state.dense, state.lexical, state.rerank, state.chunk_vectors = dense, lexical, scores, vectors
            ranking_adopt(state, refined, chunks)


def sentence_vectors(provider: EmbeddingProvider, per_chunk: list[tuple[Chunk, list[str]]]) -> np.ndarray:
    """Vectors of every sentence of ``per_chunk`` (``(Σ sentences, d)`` float32, in order): the
    ones stored at ingestion (:class:`ingestion.models.ChunkSentenceVectors`, float16, one
    query) where their digest matches the sentences, the others embedded now in one encoder
    call."""
    stored = selectors.chunk_sentence_vectors(ids=[chunk.id for chunk, _ in per_chunk], model_key=provider.key)
    usable = {}
    for chunk, sentences in per_chunk:
        digest, matrix = stored.get(chunk.id, ("", None))
        if matrix is not None and len(matrix) == len(sentences) and digest == sentences_digest(sentences):
            usable[chunk.id] = matrix
    fresh = provider.embed_passages([s for chunk, sentences in per_chunk if chunk.id not in usable for s in sentences])
    parts, offset = [], 0
    for chunk, sentences in per_chunk:
        if chunk.id in usable:
            parts.append(usable[chunk.id])
        else:
            parts.append(fresh[offset : offset + len(sentences)])
            offset += len(sentences)
    return np.vstack(parts) if parts else np.zeros((0, provider.dimensions), dtype=np.float32)


class FilcoStage(Stage):
    """FILCO (:mod:`zolsearch.search.filco`) on the chunks the answer is written from: the
    filtered text of each (``filtered``: chunk id → text) feeds generation, and the normalised mean
    of its kept sentences' vectors (``filtered_vectors``: chunk id → ``(d,)`` float32) is the
    gate's context for that chunk, so the gate does not embed the text again. Bypassed
    for questions of fewer than ``filco_min_words`` words, for languages in
    ``filco_bypass_languages``, and per chunk when the chunk's language differs from the
    question's (cross-lingual). Sentence vectors come from ingestion where stored
    (:func:`sentence_vectors`)."""

    name = "filco"
    cached = True
    reads = frozenset(
        {"question", "language", "config", "provider", "query_vector", "search_vector", "fused", "chunks"}
    )
    adds = frozenset({"filtered", "filtered_vectors"})

    def applies(self, state: SearchState) -> bool:
        config = state.config
        return (
            config.filco_enabled
            and state.query_vector is not None
            and len(_WORD.findall(state.question)) >= config.filco_min_words
            and state.language not in config.filco_bypass_languages
        )

    def run(self, state: SearchState) -> None:
        config = state.config
        chunks = [state.chunks[i] for i, _ in state.fused[: config.answer_chunks] if i in state.chunks]
        per_chunk = [
            (chunk, chunk_sentences(summary=chunk.document.summary, position=chunk.position, text=chunk.text))
            for chunk in chunks
            if (chunk.language or state.language) == state.language
        ]
        per_chunk = [(chunk, sentences) for chunk, sentences in per_chunk if len(sentences) > config.filco_min_kept]
        if not per_chunk:
            return
        vectors = sentence_vectors(state.provider, per_chunk)
        question = state.search_vector if state.search_vector is not None else state.query_vector
        assert question is not None
        scores = vectors @ question.astype(np.float32)
        offset, removed = 0, 0
        for chunk, sentences in per_chunk:
            mask = filco_keep(
                [float(s) for s in scores[offset : offset + len(sentences)]],
                threshold=config.filco_threshold,
                max_removed=config.filco_max_removed,
                min_kept=config.filco_min_kept,
            )
            state.filtered_vectors[chunk.id] = kept_vector(vectors[offset : offset + len(sentences)], mask)
            offset += len(sentences)
            removed += mask.count(False)
            state.filtered[chunk.id] = " ".join(s for s, keep in zip(sentences, mask, strict=True) if keep)

        state.trace.retrieval.filco_removed = removed
