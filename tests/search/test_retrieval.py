"""Hybrid retrieval on the ingested MedQuAD corpus (real pgvector HNSW, real pg_search BM25)."""

from __future__ import annotations

import pytest
from django.db import connection

from core.providers.embeddings import embedding_provider_get
from ingestion.models import Chunk, Document
from zolsearch.search import selectors
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import SearchRequest, pipeline_run

pytestmark = pytest.mark.django_db


def _sample_documents(n: int) -> list[Document]:
    documents = list(Document.objects.filter(source__key="medquad").order_by("external_id"))
    step = max(1, len(documents) // n)
    return documents[::step][:n]


def test_medquad_questions_find_their_own_pair_in_top_3() -> None:
    """GIVEN 40 MedQuAD questions spread over the ingested corpus
    WHEN each runs through the pipeline
    THEN at least 90 % find their own QA pair among the top 3 documents (measured: see
    docs/BENCHMARKS.md), and a named example does."""
    documents = _sample_documents(40)
    config = pipeline_config_default()
    hits = 0
    for document in documents:
        question = document.chunks.first().questions[0]
        state = pipeline_run(request=SearchRequest(question=question, language="en"), config=config)
        top3 = []
        for chunk_id, _ in state.fused:
            external_id = state.chunks[chunk_id].document.external_id
            if external_id not in top3:
                top3.append(external_id)
        hits += document.external_id in top3[:3]
    assert hits / len(documents) >= 0.9, f"only {hits}/{len(documents)} questions found their own pair in the top 3"

    state = pipeline_run(request=SearchRequest(question="What are the symptoms of ABCD syndrome?"), config=config)
    top = [state.chunks[i].document.external_id for i, _ in state.fused[:3]]
    assert "medquad:GARD:0000004:1" in top


def test_dense_and_lexical_each_find_a_paraphrase() -> None:
    """A paraphrase without the page's wording: dense finds it; BM25 finds the exact wording."""
    provider = embedding_provider_get()
    vector = provider.embed_query("Which signs and complaints do people with ABCD syndrome have?")
    dense = selectors.chunks_dense_search(vector=vector, model_key=provider.key, limit=10)
    dense_docs = [Chunk.objects.get(id=i).document.external_id for i, _ in dense]
    assert "medquad:GARD:0000004:1" in dense_docs[:5]
    assert all(-1.0 <= score <= 1.0 for _, score in dense)
    assert [s for _, s in dense] == sorted((s for _, s in dense), reverse=True)

    backend, lexical = selectors.chunks_lexical_search(query="ABCD syndrome symptoms", language="en", limit=10)
    assert backend == "paradedb"
    assert Chunk.objects.get(id=lexical[0][0]).document.external_id.startswith("medquad:GARD:0000004")


def test_dutch_stemming_matches_inflected_forms() -> None:
    """GIVEN a Dutch chunk with 'behandelingen' WHEN searching 'behandeling' with the Dutch alias
    THEN BM25 finds it (Snowball Dutch stems both to 'behandel'); the English alias does not."""
    from ingestion.models import Source

    source = Source.objects.create(key="nltest", name="NL", connector="jsonl")
    document = Document.objects.create(
        source=source, external_id="nl:1", url="https://x.test", title="Hart", language="nl", content_hash="x"
    )
    chunk = Chunk.objects.create(
        document=document,
        position=0,
        text="De behandelingen van hartfalen.",
        embedded_text="De behandelingen van hartfalen.",
        token_count=5,
        language="nl",
    )
    _, dutch = selectors.chunks_lexical_search(query="behandeling", language="nl", limit=5)
    _, english = selectors.chunks_lexical_search(query="behandeling", language="en", limit=5)
    assert chunk.id in [i for i, _ in dutch]
    assert chunk.id not in [i for i, _ in english]


@pytest.mark.parametrize(("language", "paradedb_name"), [("nl", "dutch"), ("en", "english"), ("fr", "french")])
def test_bm25_stopwords_are_paradedbs_snowball_lists(language: str, paradedb_name: str) -> None:
    """GIVEN our stop word list of a language and spaCy's larger one (a superset of candidates)
    WHEN pg_search's own tokenizer with ``stopwords_language`` reads them
    THEN it removes every word of our list and no other word: the list is the library's."""
    import importlib

    from core.text import BM25_STOPWORDS

    spacy_words = importlib.import_module(f"spacy.lang.{language}.stop_words").STOP_WORDS
    candidates = sorted({w for w in spacy_words if w.isalpha()} | BM25_STOPWORDS[language])
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT %s::pdb.simple('stopwords_language={paradedb_name}')::text[]", [" ".join(candidates)])
        kept = set(cursor.fetchone()[0])
    assert {w for w in candidates if w not in kept} == BM25_STOPWORDS[language]


def test_dutch_stop_words_do_not_rank_a_page_that_only_shares_them() -> None:
    """GIVEN a short Dutch page that shares only function words with the question ("moet",
    "ik", "mijn", "voor") and a page about its subject (shaving before an operation), in an index
    of English MedQuAD text where those Dutch words are rare
    WHEN BM25 searches the question with and without the Dutch stop words
    THEN with them the short page is first (the failure seen on hospital-nl), without them the
    page about the subject is."""
    from core.text import BM25_STOPWORDS
    from ingestion.models import Source

    source = Source.objects.create(key="nltest", name="NL", connector="jsonl")

    def page(external_id: str, text: str) -> int:
        document = Document.objects.create(
            source=source,
            external_id=external_id,
            url=f"https://x.test/{external_id}",
            title="",
            language="nl",
            content_hash=external_id,
        )
        return Chunk.objects.create(
            document=document, position=0, text=text, embedded_text=text, token_count=len(text.split()), language="nl"
        ).id

    dossier = page("dossier", "Ik wil mijn dossier zien, wat moet ik doen? Het moet voor mij zijn.")
    shaving = page(
        "scheren",
        "Ontharen van het operatiegebied gebeurt in het ziekenhuis vlak voor de ingreep. Scheer het "
        "operatiegebied thuis niet: scheren geeft kleine wondjes en een grotere kans op infectie na de "
        "operatie. De verpleegkundige verwijdert het haar met een tondeuse op de dag van de operatie.",
    )
    question = "moet ik mijn been zelf scheren voor de operatie"
    _, plain = selectors.chunks_lexical_search(query=question, language="nl", limit=5)
    _, stopped = selectors.chunks_lexical_search(query=question, language="nl", limit=5, stopwords=BM25_STOPWORDS["nl"])
    assert plain[0][0] == dossier
    assert stopped[0][0] == shaving
    assert dossier not in [i for i, _ in stopped]  # nothing left to match it on
    # every word a stop word: searched as written rather than not at all
    _, only_stop = selectors.chunks_lexical_search(
        query="wat moet ik", language="nl", limit=5, stopwords=BM25_STOPWORDS["nl"]
    )
    assert dossier in [i for i, _ in only_stop]


def test_filters_by_language_and_source() -> None:
    provider = embedding_provider_get()
    vector = provider.embed_query("symptoms of syndrome")
    assert selectors.chunks_dense_search(vector=vector, model_key=provider.key, limit=5, languages=["nl"]) == []
    only_cdc = selectors.chunks_dense_search(
        vector=vector, model_key=provider.key, limit=5, sources=["medquad"], languages=["en"]
    )
    assert len(only_cdc) == 5
    _, lexical = selectors.chunks_lexical_search(query="syndrome", language="en", limit=5, sources=["nope"])
    assert lexical == []


def test_dense_search_uses_the_models_hnsw_index() -> None:
    """The ORM query of the dense selector matches the partial HNSW index of the active model."""
    from django.db.models.functions import Cast
    from pgvector.django import CosineDistance, VectorField

    from ingestion.models import ChunkEmbedding
    from ingestion.services import embedding_index_name

    provider = embedding_provider_get()
    vector = provider.embed_query("heart").tolist()
    queryset = (
        ChunkEmbedding.objects.filter(model_key=provider.key)
        .annotate(distance=CosineDistance(Cast("vector", VectorField(dimensions=provider.dimensions)), vector))
        .order_by("distance")[:10]
    )
    with connection.cursor() as cursor:
        # A test corpus this small is cheaper to sort than to walk a graph; switching the other
        # plans off shows that the selector's expression can use the partial HNSW index at all.
        for plan_kind in ("seqscan", "bitmapscan", "sort"):
            cursor.execute(f"SET LOCAL enable_{plan_kind} = off")
        plan = queryset.explain()
    assert embedding_index_name(model_key=provider.key, dimensions=provider.dimensions) in plan


def test_postgres_full_text_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """GIVEN a server without the BM25 index WHEN searching THEN PostgreSQL full-text search
    runs, finds the page, and the answer's trace says postgres_fts."""
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX chunk_bm25_idx")  # rolled back with the test transaction
    monkeypatch.setattr(selectors, "_lexical_backend", {})
    backend, hits = selectors.chunks_lexical_search(query="ABCD syndrome symptoms", language="en", limit=5)
    assert backend == "postgres_fts"
    assert Chunk.objects.get(id=hits[0][0]).document.external_id.startswith("medquad:GARD:0000004")
    state = pipeline_run(request=SearchRequest(question="ABCD syndrome symptoms"), config=pipeline_config_default())
    assert state.trace.lexical_backend == "postgres_fts"
    monkeypatch.setattr(selectors, "_lexical_backend", {})


def test_hnsw_agrees_with_exact_search() -> None:
    provider = embedding_provider_get()
    for question in ["What causes Aicardi syndrome?", "How is Holmes-Adie syndrome treated?", "flu vaccine"]:
        vector = provider.embed_query(question)
        approximate = [i for i, _ in selectors.chunks_dense_search(vector=vector, model_key=provider.key, limit=10)]
        exact = selectors.chunks_exact_search(vector=vector, model_key=provider.key, limit=10)
        assert len(set(approximate) & set(exact)) >= 9


def test_chunk_vectors_read_in_binary_equal_the_stored_vectors() -> None:
    """GIVEN 30 ingested chunks' stored vectors, as the ORM's VectorField reads them (text format)
    WHEN the pipeline reads them in pgvector's binary send format (selectors.chunk_vectors_by_id)
    THEN every vector is the same float32 array, ids without a vector are absent, and a byte
    string whose length disagrees with its header is refused (pgvector's ``Vector.from_binary``,
    which the read goes through)."""
    import numpy as np

    from ingestion.models import ChunkEmbedding

    model_key = embedding_provider_get().key
    rows = list(ChunkEmbedding.objects.filter(model_key=model_key).order_by("chunk_id")[:30])
    assert len(rows) == 30
    read = selectors.chunk_vectors_by_id(ids=[r.chunk_id for r in rows] + [-1], model_key=model_key)
    assert set(read) == {r.chunk_id for r in rows}
    for row in rows:
        expected = np.asarray(
            row.vector.to_numpy() if hasattr(row.vector, "to_numpy") else row.vector, dtype=np.float32
        )
        assert read[row.chunk_id].dtype == np.float32
        assert np.array_equal(read[row.chunk_id], expected)
    from pgvector import Vector

    with pytest.raises(ValueError, match="invalid length"):
        Vector.from_binary((512).to_bytes(2, "big") + b"\0\0" + b"\0" * 8)


def test_chunk_vectors_are_stored_in_their_rows() -> None:
    """GIVEN the ingested corpus (512-dimension USE vectors: 2,056 bytes, over PostgreSQL's
    2,032-byte TOAST threshold) WHEN its vector column's storage and rows are read
    THEN the column's storage is MAIN (migration ingestion 0010) and no vector lives out of line
    in the TOAST table, uncompressed (the HNSW query's distances and the reads by id read the row)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'ingestion_chunkembedding'::regclass"
            " AND attname = 'vector'"
        )
        assert cursor.fetchone() == ("m",)
        cursor.execute(
            "SELECT count(*), count(*) FILTER (WHERE pg_column_toast_chunk_id(vector) IS NOT NULL),"
            " count(*) FILTER (WHERE pg_column_compression(vector) IS NOT NULL) FROM ingestion_chunkembedding"
        )
        total, out_of_line, compressed = cursor.fetchone()
    assert total > 100
    assert (out_of_line, compressed) == (0, 0)
