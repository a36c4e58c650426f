"""Generation: extractive composition with numbered citations, or an LLM when configured
(design step 8); the graph's facts are pinned first."""

from __future__ import annotations

import logging
from collections.abc import Callable

from core.providers.llm import LLMUnavailable
from core.text import text_normalise
from ingestion.models import Chunk
from taxonomy.selectors import department_names_except
from zolsearch.search.contract import Outcome
from zolsearch.search.focus import document_foci, focus_equivalents
from zolsearch.search.generation import answer_extractive, answer_llm, draft_pin
from zolsearch.search.sites import SiteMatcher, index_site_labels, own_page_site
from zolsearch.search.stages.base import SearchState, Stage, StopPipeline

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


def chunks_same_site(
    chunks: list[Chunk], *, named: Callable[[tuple[str, ...]], bool], priorities: dict[str, int]
) -> list[Chunk]:
    """``chunks`` (in order) without the hospital pages of hospitals the question does not name,
    when one of them is a page of a hospital it names. A hospital's page: a chunk whose source
    has a priority in ``priorities`` (source key → priority; the hospital's own pages), its
    hospital the :func:`~zolsearch.search.sites.site_labels` of its address, as the gate's site
    agreement reads it (:func:`~zolsearch.search.sites.own_page_site`); ``named``: whether the
    question names a site (:meth:`zolsearch.search.sites.SiteMatcher.names`). Unchanged when
    no chunk is a named hospital's page; general medical text (no priority) is always kept, and
    so is a hospital page whose address gives no label (:func:`site_labels` leaves out labels
    too short to be a name, "dz" of dz.nl): it cannot be told from the named one, as in the
    gate's site agreement."""
    sites = [own_page_site(chunk, priorities) or () for chunk in chunks]
    if not any(site and named(site) for site in sites):
        return chunks
    return [chunk for chunk, site in zip(chunks, sites, strict=True) if not site or named(site)]


class GenerationStage(Stage):
    """Extractive answer, or the LLM when configured (falling back to extractive on failure)."""

    name = "generate"
    cached = True
    reads = frozenset({"question", "language", "config", "fused", "chunks", "pinned", "filtered", "focus"})
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
        if state.config.answer_same_site and len(top) > 1:
            matcher = SiteMatcher(state.question, state.language, index_site_labels())
            top = chunks_same_site(top, named=matcher.names, priorities=state.config.source_priorities)
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
            answer_type_weight=state.config.answer_type_weight,
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
