"""The extractive answer's sentences chosen by meaning as well as shared words
(``answer_sentence_similarity``), on shared/data/hospital-nl's real pages and the real encoder."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.providers.embeddings import embedding_provider_get
from ingestion.chunking import chunk_sentences
from ingestion.connectors.base import DocumentRecord
from ingestion.connectors.jsonl import JSONLConnector
from ingestion.models import Chunk, Source
from ingestion.services import documents_upsert
from zolsearch.search.config import MEASUREMENT_OVERRIDES, pipeline_config_default
from zolsearch.search.generation import answer_plain
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.stages.generate import sentences_similarity

pytestmark = pytest.mark.django_db

HOSPITAL_NL = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "hospital-nl"
WAITING = "Wij streven naar een wachttijd van maximaal vijftien minuten."


@pytest.fixture
def hospital_pages() -> None:
    """shared/data/hospital-nl's 100 pages in the index, as the jsonl connector reads them,
    embedded by the real default encoder."""
    connector = JSONLConnector()
    records = [
        record
        for unit in connector.units(HOSPITAL_NL / "pages.jsonl")
        for record in connector.records(unit)
        if isinstance(record, DocumentRecord)
    ]
    source = Source.objects.create(key="hospital-nl", name="hospital-nl", connector="jsonl", priority=10)
    documents_upsert(source=source, records=records, provider=embedding_provider_get())


def _answer(question: str, weight: float) -> tuple[str, list[str]]:
    config = pipeline_config_default().with_overrides(**{**MEASUREMENT_OVERRIDES, "answer_sentence_similarity": weight})
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    assert state.draft is not None
    cited = [state.chunks[i].document.url for i in state.draft.cited_chunk_ids]
    return answer_plain(state.draft.text), cited


def test_the_waiting_time_sentence_is_chosen_by_its_meaning(hospital_pages: None) -> None:
    """GIVEN the hospital pages (Zuyderland's outpatient page says "Wij streven naar een wachttijd
    van maximaal vijftien minuten", a sentence sharing no word with the question but "wachttijd")
    WHEN a patient asks how long the wait at Zuyderland's outpatient clinic is
    THEN by shared words alone the answer leaves that sentence out, and with the sentences'
    cosines weighted 5 it is in the answer, from Zuyderland's page."""
    question = "hoelang moet ik wachten op de poli in zuyderland"
    lexical, cited = _answer(question, 0.0)
    assert cited[0].startswith("https://www.zuyderland.nl/"), cited
    assert WAITING not in lexical, lexical
    meaning, cited = _answer(question, 5.0)
    assert cited[0].startswith("https://www.zuyderland.nl/"), cited
    assert WAITING in meaning, meaning


def test_sentences_similarity_scores_every_sentence_as_filco_splits_it(hospital_pages: None) -> None:
    """The cosines come for each sentence of each chunk (FILCO's split), in [-1, 1], and the
    waiting-time sentence scores above the page's median for the waiting question."""
    config = pipeline_config_default().with_overrides(**MEASUREMENT_OVERRIDES)
    state = pipeline_run(
        request=SearchRequest(question="hoelang moet ik wachten op de poli in zuyderland", language="nl"),
        config=config,
    )
    chunks = [state.chunks[i] for i, _ in state.fused[:3]]
    scores = sentences_similarity(state, chunks)
    for chunk in chunks:
        expected = chunk_sentences(summary=chunk.document.summary, position=chunk.position, text=chunk.text)
        assert list(scores[chunk.id]) == expected
        assert all(-1.0 <= c <= 1.0 for c in scores[chunk.id].values())
    page = Chunk.objects.filter(document__url__startswith="https://www.zuyderland.nl/", text__contains=WAITING).first()
    assert page is not None and page.id in scores, "Zuyderland's outpatient page is among the top three"
    values = sorted(scores[page.id].values())
    waiting = next(c for s, c in scores[page.id].items() if WAITING in s)
    assert waiting > values[len(values) // 2]
