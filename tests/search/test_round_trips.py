"""Round trips of a live request, as a web worker runs it: in autocommit, outside any transaction.

The retrievers' server settings (``SET LOCAL``) travel with their query in one message, the
answer is one INSERT, and the live configuration is held per process for
``PIPELINE_CONFIG_MAX_AGE_S`` seconds (docs/BENCHMARKS.md, "Fewer round trips"). Transactional
(``transaction=True``): the ordinary tests run inside a transaction, where the other path runs.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.db import DataError, connection, transaction
from django.test.utils import CaptureQueriesContext

from core.providers.embeddings import embedding_provider_get
from ingestion.models import Source
from ingestion.services import ingestion_run_create, ingestion_run_execute
from zolsearch.search import selectors
from zolsearch.search.config import embedding_model_indexed_live, pipeline_config_default, pipeline_config_live
from zolsearch.search.models import Answer, PipelineFlag
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import answer_stored, pipeline_flag_set, search_answer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def cdc(slice_dir: Path) -> None:
    """The slice's CDC subset ingested and committed (10 pages)."""
    run = ingestion_run_create(connector="medquad", path=str(slice_dir), subsets=["CDC"])
    assert ingestion_run_execute(run_id=run.id).chunk_count > 0


def _setting(name: str) -> str:
    with connection.cursor() as cursor:  # missing_ok: pgvector's settings exist once it is loaded
        cursor.execute("SELECT current_setting(%s, true)", [name])
        return str(cursor.fetchone()[0])


def test_local_settings_hold_for_their_query_only_in_one_message() -> None:
    """GIVEN autocommit, then a caller's transaction WHEN a query runs with local settings THEN it
    sees them, they are gone afterwards, and in autocommit it was a single message."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT '[1]'::vector")  # pgvector loaded in this session: its settings exist
    default = _setting("hnsw.ef_search")
    assert default.isdigit(), default
    sql = "SELECT current_setting('hnsw.ef_search'), current_setting('max_parallel_workers_per_gather'), %s::int"
    local = {"hnsw.ef_search": "37", "max_parallel_workers_per_gather": "0"}
    assert not connection.in_atomic_block
    with CaptureQueriesContext(connection) as queries:
        rows = selectors._rows_with_local_settings(local, sql, [5])
    assert rows == [("37", "0", 5)]
    assert len(queries.captured_queries) == 1, queries.captured_queries
    assert _setting("hnsw.ef_search") == default

    with pytest.raises(DataError, match="division by zero"):  # an error in the message's query
        selectors._rows_with_local_settings(local, "SELECT 1 / (%s::int - 1)", [1])
    assert _setting("hnsw.ef_search") == default
    assert selectors._rows_with_local_settings(local, "SELECT 1 WHERE %s", [False]) == []  # no rows

    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.ef_search = 55")  # the caller's own value
        assert selectors._rows_with_local_settings(local, sql, [6]) == [("37", "0", 6)]
        assert _setting("hnsw.ef_search") == "55"  # the caller's value again, not the default
        with pytest.raises(DataError, match="division by zero"), transaction.atomic():
            selectors._rows_with_local_settings(local, "SELECT 1 / (%s::int - 1)", [1])
        assert _setting("hnsw.ef_search") == "55"
    assert _setting("hnsw.ef_search") == default
    assert selectors._rows_with_local_settings({}, "SELECT %s::int", [7]) == [(7,)]
    provider = embedding_provider_get()
    assert selectors.chunks_dense_search(vector=provider.embed_query("flu"), model_key=provider.key, limit=0) == []


def test_retrievers_return_the_same_in_autocommit_as_in_a_transaction(cdc: None) -> None:
    """GIVEN committed chunks WHEN dense, exact and BM25 search run in autocommit and inside a
    transaction THEN they return the same hits, and each is one statement in autocommit."""
    provider = embedding_provider_get()
    vector = provider.embed_query("How do I protect my child against the flu?")
    searches = {
        "dense": lambda: selectors.chunks_dense_search(vector=vector, model_key=provider.key, limit=10, ef_search=200),
        "exact": lambda: selectors.chunks_exact_search(vector=vector, model_key=provider.key, limit=10),
        "bm25": lambda: selectors.chunks_lexical_search(query="flu vaccine children", language="en", limit=10)[1],
    }
    selectors.lexical_backend()  # its one-time probe of the index is not part of a search
    defaults = {name: _setting(name) for name in ("hnsw.ef_search", "max_parallel_workers_per_gather")}
    for name, search in searches.items():
        with CaptureQueriesContext(connection) as queries:
            autocommit = search()
        assert len(queries.captured_queries) == 1, (name, queries.captured_queries)
        with transaction.atomic():
            inside = search()
        assert autocommit and autocommit == inside, name
    assert {name: _setting(name) for name in defaults} == defaults


def test_the_answer_is_one_insert_and_announced(cdc: None) -> None:
    """GIVEN autocommit WHEN an answer is served THEN its row is stored by one INSERT (no BEGIN and
    COMMIT around it) and ``answer_stored`` is sent once it is committed."""
    announced: list[int] = []
    other = connection.get_new_connection(connection.get_connection_params())  # sees committed rows only

    def receiver(sender: object, answer: Answer, **kwargs: object) -> None:
        with other.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {Answer._meta.db_table} WHERE id = %s", [answer.pk])
            if cursor.fetchone()[0] == 1:
                announced.append(answer.pk)

    answer_stored.connect(receiver, dispatch_uid="test-round-trips")
    try:
        with CaptureQueriesContext(connection) as queries:
            _, answer = search_answer(request=SearchRequest(question="Who should get a flu vaccine?", language="en"))
    finally:
        answer_stored.disconnect(dispatch_uid="test-round-trips")
        other.close()
    statements = [q["sql"] for q in queries.captured_queries]
    inserts = [sql for sql in statements if sql.startswith(f'INSERT INTO "{Answer._meta.db_table}"')]
    assert len(inserts) == 1, statements
    assert not [sql for sql in statements if sql.split()[0].upper() in {"BEGIN", "COMMIT", "SAVEPOINT"}], statements
    assert announced == [answer.pk]


def test_live_configuration_is_held_for_its_maximum_age(settings: Any) -> None:
    """GIVEN a live configuration read once WHEN a flag row changes behind the process's back (as
    another worker's admin save does) THEN it is seen after the maximum age, not before; a change
    saved in this process, a source's priority or a settings override is seen at once; 0 reads it
    every time."""
    settings.PIPELINE_CONFIG_MAX_AGE_S = 2.0  # (changing a setting clears the held one too)
    pipeline_flag_set(name="top_k", value=7, changed_by="test", reason="round trips")
    first = pipeline_config_live()
    assert first.top_k == 7
    with CaptureQueriesContext(connection) as queries:
        assert pipeline_config_live() is first
    assert queries.captured_queries == []

    PipelineFlag.objects.filter(name="top_k", model_key="").update(value=8)  # no signal: another process
    assert pipeline_config_live().top_k == 7
    time.sleep(2.1)
    assert pipeline_config_live().top_k == 8

    settings.PIPELINE_CONFIG_MAX_AGE_S = 60
    pipeline_flag_set(name="top_k", value=9, changed_by="test", reason="round trips")
    assert pipeline_config_live().top_k == 9
    settings.SEARCH_RRF_K = 31  # a settings override (tests; in production only a restart)
    assert pipeline_config_live().rrf_k == 31
    source = Source.objects.create(key="round-trips", name="Round trips", connector="jsonl", priority=7)
    assert pipeline_config_live().source_priorities.get("round-trips") == 7
    source.delete()
    assert "round-trips" not in pipeline_config_live().source_priorities

    with transaction.atomic():  # inside a transaction: the rows as it sees them, every time
        PipelineFlag.objects.filter(name="top_k", model_key="").update(value=4)
        assert pipeline_config_live().top_k == 4
    settings.PIPELINE_CONFIG_MAX_AGE_S = 0
    assert pipeline_config_live().top_k == pipeline_config_default().top_k == 4


def test_index_probe_held_once_positive(cdc: None, settings: Any) -> None:
    """GIVEN an index with vectors of the query model WHEN the probe is asked twice in autocommit
    THEN only the first asks the database; a model without vectors is asked every time (never
    held), and inside a transaction or with a maximum age of 0 it is asked every time."""
    settings.PIPELINE_CONFIG_MAX_AGE_S = 60
    key = embedding_provider_get().key
    with CaptureQueriesContext(connection) as queries:
        assert embedding_model_indexed_live(model_key=key)
        assert embedding_model_indexed_live(model_key=key)
        assert not embedding_model_indexed_live(model_key="no-such-model")
        assert not embedding_model_indexed_live(model_key="no-such-model")
    assert len(queries.captured_queries) == 3, queries.captured_queries
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        assert embedding_model_indexed_live(model_key=key)
    assert len(queries.captured_queries) == 1
    settings.PIPELINE_CONFIG_MAX_AGE_S = 0
    with CaptureQueriesContext(connection) as queries:
        assert embedding_model_indexed_live(model_key=key)
    assert len(queries.captured_queries) == 1


def test_candidate_vectors_are_read_once_per_answer(cdc: None) -> None:
    """GIVEN the reranker and the gate on (the defaults) WHEN an answer is drafted THEN the stored
    vectors of its candidates are read by one statement, the reranker's, and the gate's context
    is built from them (no statement): the same vector as when the gate reads the cited chunks'
    vectors itself. (CRAG off: its thresholds, calibrated on the full MedQuAD, call this small
    corpus's retrieval incorrect and stop before a draft.)"""
    import numpy as np

    from zolsearch.search.config import pipeline_config_live
    from zolsearch.search.pipeline import pipeline_run
    from zolsearch.search.stages.quality_gate import draft_gate_vectors

    request = SearchRequest(question="Who should get a flu vaccine?", language="en")
    config = pipeline_config_live().with_overrides(crag_enabled=False)
    with CaptureQueriesContext(connection) as queries:
        state = pipeline_run(request=request, config=config)
    assert state.draft is not None and state.gate is not None and state.rerank, state.trace
    reads = [q["sql"] for q in queries.captured_queries if "vector_send" in q["sql"]]
    assert len(reads) == 1, reads
    assert set(state.chunk_vectors) == set(state.chunks)

    state.filtered_vectors = {}  # as with FILCO off: every cited chunk's stored vector is needed
    with CaptureQueriesContext(connection) as queries:
        answer, context = draft_gate_vectors(state)
    assert not [q for q in queries.captured_queries if "vector_send" in q["sql"]]
    state.chunk_vectors = {}
    with CaptureQueriesContext(connection) as queries:
        answer_again, context_read = draft_gate_vectors(state)
    assert len([q for q in queries.captured_queries if "vector_send" in q["sql"]]) == 1
    np.testing.assert_allclose(context, context_read, rtol=1e-6)
    np.testing.assert_array_equal(answer, answer_again)
