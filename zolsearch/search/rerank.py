"""Rerank features of fused candidates (design step 5): what the offline feature reranker reads.

Every feature is computed from what retrieval already has (no extra model call): the dense
cosine (for a candidate the dense list missed, its stored vector: read by the rerank stage with
every candidate's, else one query here), BM25 relative to the best BM25 of the query, the fused
rank, stemmed term coverage of the chunk's title/context and of its text (the chunks' stem sets
held per process, :func:`core.text.terms_stem_set_held`), language match and the source's
priority. :data:`core.providers.rerank.FEATURE_NAMES` lists them with their ranges.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.providers.rerank import RerankCandidate
from core.text import terms_stem_set, terms_stem_set_held, text_normalise
from ingestion.models import SOURCE_PRIORITY_MAX, Chunk
from zolsearch.search import selectors
from zolsearch.search.focus import document_foci, focus_equivalents
from zolsearch.search.sites import SiteMatcher, index_site_labels, page_labels


def chunk_head(chunk: Chunk) -> str:
    """The part of a chunk's embedded text before its own text: document context (title,
    publisher), canonical questions, heading; the title and heading when the shape differs."""
    embedded, text = chunk.embedded_text, chunk.text.strip()
    if text and embedded.endswith(text):
        return embedded[: len(embedded) - len(text)]
    return f"{chunk.document.title}\n{chunk.heading}"


def _coverage(query_stems: frozenset[str], text: str, language: str) -> float:
    if not query_stems:
        return 0.0
    return len(query_stems & terms_stem_set_held(text, language)) / len(query_stems)


def _precision(title: str, query_stems: frozenset[str], language: str) -> float:
    """Share of the title's stems that the query has: 1.0 for "Aicardi syndrome" asked about
    Aicardi syndrome, 2/3 for "Aicardi-Goutières syndrome" (a different disease)."""
    title_stems = terms_stem_set_held(title, language)
    return len(title_stems & query_stems) / len(title_stems) if title_stems else 0.0


def _topic_shared(query_stems: frozenset[str], foci: frozenset[str], language: str) -> bool:
    """Whether the question shares a stem with a name of the page's subject (``foci``: its
    MedQuAD focus, UMLS synonyms and, with ``foci_title_variants``, its title's names:
    :func:`zolsearch.search.focus.document_foci`); False for a
    page without one. The names are stemmed together, one held stem set per page (the held sets
    are the coverage features' too: one entry a name would crowd them out)."""
    return bool(foci) and bool(query_stems & terms_stem_set_held(" ".join(sorted(foci)), language))


def rerank_candidates(
    *,
    question: str,
    language: str,
    fused: Sequence[tuple[int, float]],
    chunks: dict[int, Chunk],
    dense: Sequence[tuple[int, float]],
    lexical: Sequence[tuple[int, float]],
    query_vector: np.ndarray | None,
    model_key: str,
    priorities: dict[str, int],
    authority: float = 0.0,
    qtype: str = "",
    focus: str = "",
    sites: tuple[tuple[str, ...], ...] | None = None,
    asked: str = "",
    vectors: dict[int, np.ndarray] | None = None,
    qtype_needs_topic: bool = False,
    foci_title_variants: bool = False,
    foci_equivalents: bool = False,
) -> list[RerankCandidate]:
    """One :class:`RerankCandidate` per fused id present in ``chunks``, in fused order.

    ``dense``/``lexical``: the retrievers' ``(chunk id, score)`` lists; ``query_vector``:
    ``(d,)`` float32 unit vector of ``model_key`` (None: dense features 0). A candidate the dense
    retriever did not return is scored against its stored vector: from ``vectors`` (chunk id →
    ``(d,)`` float32 of ``model_key``, read by the caller) when given, else read here (one query). The question is
    stemmed in each chunk's language, so an English page is matched on English stems.
    ``authority``: how much the question wants the hospital's own pages, in [0, 1]
    (:func:`zolsearch.search.stages.retrieval.authority_share`); ``priority_for_intent`` is the
    source's priority times it.
    ``qtype``: the question type understanding predicted (MedQuAD's types; "" unknown), matched
    against a document's ``metadata["qtype"]``; with ``qtype_needs_topic`` only for a page about
    the question's subject: ``focus`` is among its foci, or the question (stemmed in the page's
    language) shares a stem with one of them (:func:`_topic_shared`; a word such as "syndrome"
    is enough, so this removes only the matches with nothing in common). Without it a practical
    question typed "treatment" ("mag ik een behandeling weigeren") gave every MedQuAD treatment
    page the feature, above the hospital pages that have no type. ``focus``: the question's linked focus
    (:class:`zolsearch.search.focus.Focus` text; "" none), matched after
    :func:`core.text.text_normalise` against a document's ``metadata["focus"]`` and
    ``metadata["synonyms"]`` (MedQuAD's focus and its UMLS synonyms), and with
    ``foci_title_variants`` the names the focus title holds, with ``foci_equivalents`` the focus
    another site names the same condition by (:func:`zolsearch.search.focus.document_foci`).
    ``sites``: every site's labels in the index (:func:`zolsearch.search.sites.index_site_labels`,
    read when None), for ``site_named``: 1 when ``asked`` (the question as the patient wrote it;
    ``question`` when "", which may be a reduced or expanded query without the hospital's name)
    names the hospital whose web address or name the page has (:func:`zolsearch.search.sites.page_labels`,
    :class:`zolsearch.search.sites.SiteMatcher`),
    for pages of a source with a priority (the hospital's own; general medical sites' host names
    are English words: "rarediseases" ends with "diseases", "nihseniorhealth" with "health").
    """
    ids = [i for i, _ in fused if i in chunks]
    dense_scores = dict(dense)
    dense_hits = set(dense_scores)
    missing = [i for i in ids if i not in dense_scores]
    if missing and query_vector is not None:
        if vectors is None:
            vectors = selectors.chunk_vectors_by_id(ids=missing, model_key=model_key)
        for chunk_id in missing:
            if chunk_id in vectors:
                dense_scores[chunk_id] = float(np.dot(vectors[chunk_id], query_vector))
    lexical_scores = dict(lexical)
    best_bm25 = max(lexical_scores.values(), default=0.0) or 1.0
    best_dense = max((dense_scores.get(i, 0.0) for i in ids), default=0.0)
    stems_by_language: dict[str, frozenset[str]] = {}
    focus_key = text_normalise(focus) if focus else ""
    site_matcher = SiteMatcher(asked or question, language, index_site_labels() if sites is None else sites)
    equivalents = focus_equivalents() if foci_equivalents else None
    candidates = []
    for rank, chunk_id in enumerate(ids, start=1):
        chunk = chunks[chunk_id]
        chunk_language = chunk.language or language
        if chunk_language not in stems_by_language:
            stems_by_language[chunk_language] = terms_stem_set(question, language=chunk_language)
        stems = stems_by_language[chunk_language]
        priority = priorities.get(chunk.document.source.key, 0) / SOURCE_PRIORITY_MAX
        foci = document_foci(chunk.document.metadata, title_variants=foci_title_variants, equivalents=equivalents)
        focus_hit = bool(focus_key) and focus_key in foci
        features = {
            "dense": dense_scores.get(chunk_id, 0.0),
            "bm25_rel": lexical_scores.get(chunk_id, 0.0) / best_bm25,
            "rrf_rank_inv": 1.0 / rank,
            "title_coverage": _coverage(stems, chunk_head(chunk), chunk_language),
            "text_coverage": _coverage(stems, chunk.text, chunk_language),
            "title_precision": _precision(chunk.document.title, stems, chunk_language),
            "language_match": 1.0 if chunk_language == language else 0.0,
            "qtype_match": 1.0
            if qtype
            and qtype != "none"
            and chunk.document.metadata.get("qtype") == qtype
            and (not qtype_needs_topic or focus_hit or _topic_shared(stems, foci, chunk_language))
            else 0.0,
            "focus_match": 1.0 if focus_hit else 0.0,
            "priority": priority,
            "priority_for_intent": priority * authority,
            "lexical_hit": 1.0 if chunk_id in lexical_scores else 0.0,
            "dense_hit": 1.0 if chunk_id in dense_hits else 0.0,
            "dense_rel": dense_scores.get(chunk_id, 0.0) / best_dense if best_dense > 0 else 0.0,
            "site_named": 1.0
            if priority > 0 and site_matcher.names(page_labels(chunk.document.url, chunk.document.metadata))
            else 0.0,
        }
        candidates.append(RerankCandidate(text=f"{chunk.document.title}\n{chunk.text}", features=features))
    return candidates
