"""Tests of the search pipeline; :func:`feature_of_candidates` is shared by the reranker-feature
tests, :func:`hospital_page_records` by the tests over shared/data/hospital-nl's real pages,
:func:`medquad_focus_add` by the tests of focus linking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

HOSPITAL_NL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hospital-nl"


def hospital_page_records() -> list[Any]:
    """The :class:`ingestion.connectors.base.DocumentRecord` of each of shared/data/hospital-nl's
    100 pages, as the jsonl connector reads them (read in place, never copied)."""
    from ingestion.connectors.base import DocumentRecord
    from ingestion.connectors.jsonl import JSONLConnector

    connector = JSONLConnector()
    return [
        record
        for unit in connector.units(HOSPITAL_NL / "pages.jsonl")
        for record in connector.records(unit)
        if isinstance(record, DocumentRecord)
    ]


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


def medquad_focus_add(
    focus: str, *, cui: str, subset: str = "MPlus_Health_Topics", synonyms: tuple[str, ...] = ()
) -> None:
    """A MedQuAD document of ``subset`` with ``focus`` (not in the bundled slice) and its UMLS
    ``synonyms``, stored as the MedQuAD connector stores it, and the focus lexicon read again."""
    from ingestion.models import Document, Source
    from zolsearch.search.focus import medquad_lexicon_clear

    source = Source.objects.create(key=f"medquad-{cui}", name=f"MedQuAD {focus}")
    Document.objects.create(
        source=source,
        external_id=f"medquad:test-{cui}",
        title=focus,
        language="en",
        content_hash="x",
        metadata={"focus": focus, "umls_cuis": [cui], "subset": subset, "synonyms": list(synonyms)},
    )
    medquad_lexicon_clear()
