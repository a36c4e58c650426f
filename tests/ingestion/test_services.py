"""Ingestion services on the real embedded PostgreSQL with the real local embedding model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.providers.embeddings import embedding_provider_get
from core.text import tokens_estimate
from ingestion.chunking import chunks_build
from ingestion.connectors.base import DocumentRecord, Section
from ingestion.models import Chunk, ChunkEmbedding, Document, IngestionRun
from ingestion.services import embedding_index_name, ingestion_run_create, ingestion_run_execute

pytestmark = pytest.mark.django_db


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(text_two: str = "Hartfalen wordt behandeld op de dienst cardiologie.") -> list[dict]:
    return [
        {
            "external_id": "t:1",
            "url": "https://x.test/1",
            "title": "Spoed",
            "text": "De spoeddienst is altijd open. Bel 112 bij levensgevaar.",
        },
        {
            "external_id": "t:2",
            "url": "https://x.test/2",
            "title": "Hart",
            "text": text_two,
            "questions": ["Waar wordt hartfalen behandeld?"],
        },
    ]


def _ingest(path: Path, connector: str = "jsonl", **kwargs: object) -> IngestionRun:
    run = ingestion_run_create(connector=connector, path=str(path), **kwargs)  # type: ignore[arg-type]
    progress: list[tuple[int, int]] = []
    run = ingestion_run_execute(run_id=run.id, progress=lambda done, total: progress.append((done, total)))
    run.progress_seen = progress  # type: ignore[attr-defined]
    return run


def test_reingest_of_unchanged_documents_embeds_nothing(tmp_path: Path) -> None:
    """GIVEN a JSONL source ingested once
    WHEN the same file is ingested again
    THEN nothing is embedded, no row changes, and both documents count as unchanged."""
    path = _write_jsonl(tmp_path / "a.jsonl", _rows())
    first = _ingest(path)
    assert (first.status, first.created_count, first.unchanged_count) == ("succeeded", 2, 0)
    assert first.chunk_count == Chunk.objects.filter(document__external_id__in=["t:1", "t:2"]).count() > 0
    vector_ids = set(
        ChunkEmbedding.objects.filter(chunk__document__external_id__in=["t:1", "t:2"]).values_list("id", flat=True)
    )

    second = _ingest(path)
    assert (second.created_count, second.updated_count, second.unchanged_count, second.chunk_count) == (0, 0, 2, 0)
    assert (
        set(ChunkEmbedding.objects.filter(chunk__document__external_id__in=["t:1", "t:2"]).values_list("id", flat=True))
        == vector_ids
    )
    assert second.progress_seen[-1] == (2, 2)  # type: ignore[attr-defined]


def test_changed_document_is_replaced(tmp_path: Path) -> None:
    """GIVEN an ingested document WHEN its text changes THEN its chunks and vectors are replaced
    and the other document is left alone."""
    _ingest(_write_jsonl(tmp_path / "a.jsonl", _rows()))
    old_chunks = set(Chunk.objects.filter(document__external_id="t:2").values_list("id", flat=True))
    run = _ingest(_write_jsonl(tmp_path / "b.jsonl", _rows("Hartfalen: raadpleging cardiologie op campus Noord.")))
    assert (run.created_count, run.updated_count, run.unchanged_count) == (0, 1, 1)
    document = Document.objects.get(external_id="t:2")
    new_chunks = list(document.chunks.all())
    assert old_chunks.isdisjoint({c.id for c in new_chunks})
    assert "campus Noord" in new_chunks[0].text
    assert all(c.embeddings.count() == 1 for c in new_chunks)
    assert not ChunkEmbedding.objects.filter(chunk_id__in=old_chunks).exists()


def test_contextual_retrieval_text_and_metadata(fixtures_dir: Path) -> None:
    """The embedded text is context + canonical question + chunk text; the summary is not in it."""
    run = _ingest(fixtures_dir / "medquad", connector="medquad")
    assert (run.created_count + run.unchanged_count, run.skipped_count) == (1, 5)
    chunk = Chunk.objects.select_related("document").get(document__external_id="medquad:GARD:0000004:1", position=0)
    lines = chunk.embedded_text.split("\n")
    assert lines[0].startswith("ABCD syndrome (Albinism, Black lock")
    assert lines[1] == "What are the symptoms of ABCD syndrome ?"
    assert chunk.questions == ["What are the symptoms of ABCD syndrome ?"]
    assert chunk.document.metadata["qtype"] == "symptoms"
    assert ChunkEmbedding.objects.get(chunk=chunk).dimensions == embedding_provider_get().dimensions


def test_summary_is_stored_not_embedded(tmp_path: Path) -> None:
    rows = [
        {
            "external_id": "s:1",
            "url": "https://x.test/s",
            "title": "T",
            "text": "Body text here.",
            "summary": "UNIQUE-SUMMARY-TOKEN",
        }
    ]
    _ingest(_write_jsonl(tmp_path / "s.jsonl", rows))
    document = Document.objects.get(external_id="s:1")
    assert document.summary == "UNIQUE-SUMMARY-TOKEN"
    assert "UNIQUE-SUMMARY-TOKEN" not in document.chunks.get().embedded_text


def test_limit_stops_after_n_documents(slice_dir: Path) -> None:
    run = _ingest(slice_dir, connector="medquad", limit=7, subsets=["CancerGov"])
    assert run.created_count + run.unchanged_count + run.updated_count == 7
    assert run.done == run.total


def test_bad_path_marks_the_run_failed(tmp_path: Path) -> None:
    """A connector error after the run started is recorded on the row (FAILED, message) and raised."""
    run = ingestion_run_create(connector="medquad", path=str(tmp_path / "missing"))
    with pytest.raises(Exception, match="not a folder"):
        ingestion_run_execute(run_id=run.id)
    run.refresh_from_db()
    assert run.status == IngestionRun.Status.FAILED and "not a folder" in run.error
    assert ingestion_run_execute(run_id=run.id).status == IngestionRun.Status.FAILED  # status guard


def test_model_switch_adds_vectors_without_rechunking(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN documents embedded by USE WHEN re-ingested with EMBEDDING_MODEL=e5-small-q4
    THEN the same chunks get e5 vectors too (384 dims), nothing is re-chunked, and the HNSW
    index of the new model exists."""
    path = _write_jsonl(tmp_path / "a.jsonl", _rows())
    _ingest(path)
    chunk_ids = set(Chunk.objects.filter(document__external_id__in=["t:1", "t:2"]).values_list("id", flat=True))
    settings.EMBEDDING_MODEL = "e5-small-q4"
    run = _ingest(path)
    assert run.unchanged_count == 2 and run.chunk_count == len(chunk_ids)
    assert set(Chunk.objects.filter(document__external_id__in=["t:1", "t:2"]).values_list("id", flat=True)) == chunk_ids
    assert set(ChunkEmbedding.objects.filter(chunk_id__in=chunk_ids).values_list("model_key", "dimensions")) == {
        ("use-multilingual-v3", 512),
        ("e5-small-q4", 384),
    }
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
            [embedding_index_name(model_key="e5-small-q4", dimensions=384)],
        )
        indexdef = cursor.fetchone()[0]
    assert "hnsw" in indexdef and "vector_cosine_ops" in indexdef and "e5-small-q4" in indexdef


def test_chunks_respect_the_token_budget_and_headings() -> None:
    """GIVEN a long two-section record WHEN chunked with a 60-token budget
    THEN every embedded text fits, no chunk spans two headings, and all words are kept."""
    sentence = "Patients with heart failure should weigh themselves every morning before breakfast."
    record = DocumentRecord(
        external_id="x",
        url="",
        title="T",
        context="Heart failure",
        questions=("How to live with heart failure?",),
        sections=(Section("Daily life", " ".join([sentence] * 12)), Section("Contact", "Call the nurse. " * 3)),
    )
    drafts = chunks_build(record=record, max_tokens=60, count_tokens=tokens_estimate)
    assert len(drafts) > 3
    assert all(d.token_count <= 60 for d in drafts)
    assert {d.heading for d in drafts} == {"Daily life", "Contact"}
    assert [d.position for d in drafts] == list(range(len(drafts)))
    assert sum(d.text.count("breakfast") for d in drafts if d.heading == "Daily life") == 12
    assert all(d.embedded_text.startswith("Heart failure\nHow to live with heart failure?\n") for d in drafts)


def test_an_invalid_document_is_reported_not_fatal(tmp_path: Path) -> None:
    """GIVEN a batch where one record fails model validation (language longer than 8 chars)
    THEN the run succeeds, the other document is stored and the bad one is listed by id."""
    rows = _rows()
    rows[0]["language"] = "nederlands-belgie"
    run = _ingest(_write_jsonl(tmp_path / "v.jsonl", rows))
    assert (run.status, run.created_count, run.error_count) == ("succeeded", 1, 1)
    assert run.errors[0]["location"] == "t:1" and "language" in run.errors[0]["message"]
    assert (
        Document.objects.filter(external_id="t:2").exists() and not Document.objects.filter(external_id="t:1").exists()
    )


def test_another_source_cannot_overwrite_a_document(tmp_path: Path) -> None:
    """GIVEN t:1 ingested under source 'a' WHEN source 'b' brings the same external id
    THEN b's record is refused and reported, and a's document is unchanged."""
    _ingest(_write_jsonl(tmp_path / "a.jsonl", _rows()), source_key="a")
    rows = _rows()
    rows[0]["text"] = "Iets heel anders."
    run = _ingest(_write_jsonl(tmp_path / "b.jsonl", rows[:1]), source_key="b")
    assert (run.status, run.created_count, run.updated_count, run.error_count) == ("succeeded", 0, 0, 1)
    assert "already belongs to source 'a'" in run.errors[0]["message"]
    document = Document.objects.get(external_id="t:1")
    assert document.source.key == "a" and "spoeddienst" in document.chunks.get().text


def test_unsafe_url_schemes_are_refused(tmp_path: Path) -> None:
    rows = _rows()
    rows[0]["url"] = "javascript:alert(1)"
    run = _ingest(_write_jsonl(tmp_path / "u.jsonl", rows))
    assert run.error_count == 1 and "url scheme not allowed" in run.errors[0]["message"]
    assert not Document.objects.filter(external_id="t:1").exists()


def test_a_run_is_claimed_once_and_a_dead_workers_run_can_be_abandoned(tmp_path: Path) -> None:
    """GIVEN a run another worker already claimed (RUNNING) WHEN executed again THEN nothing
    happens; WHEN its worker is reported lost THEN it is FAILED with the reason."""
    from ingestion.services import ingestion_run_abandon

    run = ingestion_run_create(connector="jsonl", path=str(_write_jsonl(tmp_path / "a.jsonl", _rows())))
    IngestionRun.objects.filter(pk=run.id).update(status=IngestionRun.Status.RUNNING)
    assert ingestion_run_execute(run_id=run.id).created_count == 0
    assert ingestion_run_abandon(run_id=run.id, reason="worker lost")
    run.refresh_from_db()
    assert (run.status, run.error) == ("failed", "worker lost")
    assert not ingestion_run_abandon(run_id=run.id, reason="again")  # only RUNNING runs


def test_sentence_vectors_are_stored_with_the_chunks_and_backfilled(tmp_path: Path) -> None:
    """GIVEN a JSONL source with a page summary
    WHEN it is ingested THEN every chunk has its FILCO sentence vectors (one row per sentence of
    its source text, summary first on the first chunk, float16 within 1e-3 of the encoder's
    float32 vectors, the digest of those sentences); WHEN the rows are lost and the unchanged
    file is ingested again THEN only the sentence vectors are embedded again."""
    import numpy as np

    from ingestion.chunking import chunk_sentences, sentences_digest
    from ingestion.models import ChunkSentenceVectors
    from zolsearch.search.selectors import chunk_sentence_vectors

    rows = _rows()
    rows[0]["summary"] = "Wat te doen bij spoed."
    path = _write_jsonl(tmp_path / "a.jsonl", rows)
    _ingest(path)
    provider = embedding_provider_get()
    chunks = list(Chunk.objects.filter(document__external_id__in=["t:1", "t:2"]).select_related("document"))
    stored = chunk_sentence_vectors(ids=[c.id for c in chunks], model_key=provider.key)
    assert set(stored) == {c.id for c in chunks}
    first = next(c for c in chunks if c.document.external_id == "t:1" and c.position == 0)
    assert chunk_sentences(summary=first.document.summary, position=0, text=first.text)[0] == "Wat te doen bij spoed."
    for chunk in chunks:
        sentences = chunk_sentences(summary=chunk.document.summary, position=chunk.position, text=chunk.text)
        digest, matrix = stored[chunk.id]
        assert digest == sentences_digest(sentences) and matrix.shape == (len(sentences), provider.dimensions)
        assert np.abs(matrix - provider.embed_passages(sentences)).max() < 1e-3

    ChunkSentenceVectors.objects.filter(chunk__in=chunks).delete()
    again = _ingest(path)
    assert (again.unchanged_count, again.chunk_count) == (2, 0)  # no chunk re-embedded
    assert set(chunk_sentence_vectors(ids=[c.id for c in chunks], model_key=provider.key)) == {c.id for c in chunks}
