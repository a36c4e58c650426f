"""The semantic cache: live answers kept and served again, never across configurations, index
versions or channels, and only after the safety stages."""

from __future__ import annotations

import pytest

from core.providers.embeddings import embedding_provider_get
from ingestion.connectors.base import DocumentRecord, Section
from ingestion.models import Source
from ingestion.services import documents_upsert
from zolsearch.search.contract import Outcome
from zolsearch.search.models import Answer, SemanticCacheEntry
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import search_answer

pytestmark = pytest.mark.django_db
QUESTION = "What are the symptoms of ABCD syndrome?"


@pytest.fixture(autouse=True)
def passing_gate(settings) -> None:  # type: ignore[no-untyped-def]
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 0.5}  # only gate-passed answers are cached


def test_the_same_question_again_is_served_from_the_cache() -> None:
    """GIVEN a live answer WHEN the same question comes again, and once without its question
    mark THEN both are served from the cache (same answer and citations, no retrieval stage ran,
    the entry counts the hits) and stored as answers of their own."""
    first, _ = search_answer(request=SearchRequest(question=QUESTION, language="en"))
    assert first.outcome == Outcome.ANSWERED and first.trace.retrieval.cache_hit_id is None
    entry = SemanticCacheEntry.objects.get()
    again, stored = search_answer(request=SearchRequest(question=QUESTION, language="en"))
    near, _ = search_answer(request=SearchRequest(question=QUESTION.rstrip("?").lower(), language="en"))
    for state in (again, near):
        assert state.trace.retrieval.cache_hit_id == entry.pk
        assert state.answer == first.answer and [c.url for c in state.citations] == [c.url for c in first.citations]
        assert (
            "dense" not in state.timings_ms and "generate" not in state.timings_ms and "red_flags" in state.timings_ms
        )
    entry.refresh_from_db()
    assert entry.hits == 2 and SemanticCacheEntry.objects.count() == 1
    assert Answer.objects.filter(trace_id=again.trace_id).exists() and stored.gate_passed


def test_another_question_or_configuration_is_not_served_from_the_cache() -> None:
    search_answer(request=SearchRequest(question=QUESTION, language="en"))
    other, _ = search_answer(request=SearchRequest(question="How is Holmes-Adie syndrome treated?", language="en"))
    assert other.trace.retrieval.cache_hit_id is None
    from zolsearch.search.config import pipeline_config_default

    changed, _ = search_answer(
        request=SearchRequest(question=QUESTION, language="en"),
        config=pipeline_config_default().with_overrides(top_k=9),
    )
    assert changed.trace.retrieval.cache_hit_id is None  # another configuration hash


def test_ingestion_invalidates_the_cache() -> None:
    """GIVEN a cached answer WHEN a document is ingested THEN the same question is computed again."""
    search_answer(request=SearchRequest(question=QUESTION, language="en"))
    source = Source.objects.create(key="test-cache", name="Cache test", connector="jsonl")
    record = DocumentRecord(
        external_id="test-cache:1",
        url="https://example.org/cache",
        title="Unrelated",
        sections=(Section(heading="", text="Parking is free on Sundays."),),
        language="en",
    )
    documents_upsert(source=source, records=[record], provider=embedding_provider_get())
    again, _ = search_answer(request=SearchRequest(question=QUESTION, language="en"))
    assert again.trace.retrieval.cache_hit_id is None and "dense" in again.timings_ms


def test_the_lookup_reads_the_index_version_in_the_same_statement() -> None:
    """GIVEN an index with chunks WHEN the cache is looked up THEN one statement gives the index's
    version (the highest chunk id, as :func:`ingestion.selectors.index_version` reads it) on a miss,
    and on a hit the entry's row is read as well; an entry under another version, configuration
    or language, or below the cosine, is a miss."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ingestion.selectors import index_version
    from zolsearch.search.selectors import cache_lookup

    provider = embedding_provider_get()
    search_answer(request=SearchRequest(question=QUESTION, language="en"))
    entry = SemanticCacheEntry.objects.get()
    vector = provider.embed_query(QUESTION.lower().rstrip("?"))
    key = {"model_key": provider.key, "config_hash": entry.config_hash, "language": "en", "min_cosine": 0.9}
    with CaptureQueriesContext(connection) as queries:
        version, found = cache_lookup(vector=vector, **key)
    assert version == index_version() == entry.index_version != "0"
    assert found is not None and found.pk == entry.pk and len(queries.captured_queries) == 2
    with CaptureQueriesContext(connection) as queries:
        version, missed = cache_lookup(vector=vector, **{**key, "language": "nl"})
    assert version == entry.index_version and missed is None and len(queries.captured_queries) == 1
    assert cache_lookup(vector=vector, **{**key, "config_hash": "other"})[1] is None
    assert cache_lookup(vector=-vector, **key)[1] is None  # cosine -1
    SemanticCacheEntry.objects.update(index_version="0")
    assert cache_lookup(vector=vector, **key) == (entry.index_version, None)


def test_migrate_forgets_the_cache() -> None:
    """GIVEN a cached live answer WHEN ``migrate`` runs (every deployment of new code, every
    ``serve`` start) THEN the cache is empty and the same question is answered by the pipeline
    again: the cache key does not see a change of code."""
    from django.core.management import call_command

    search_answer(request=SearchRequest(question=QUESTION, language="en"))
    assert SemanticCacheEntry.objects.count() == 1
    call_command("migrate", interactive=False, verbosity=0)
    assert SemanticCacheEntry.objects.count() == 0
    again, _ = search_answer(request=SearchRequest(question=QUESTION, language="en"))
    assert again.trace.retrieval.cache_hit_id is None and "dense" in again.timings_ms
    assert SemanticCacheEntry.objects.count() == 1


def test_evaluation_and_batch_runs_bypass_the_cache() -> None:
    search_answer(request=SearchRequest(question=QUESTION, language="en"))
    for channel in (Answer.Channel.EVALUATION, Answer.Channel.BATCH):
        state, _ = search_answer(request=SearchRequest(question=QUESTION, language="en"), channel=channel)
        assert state.trace.retrieval.cache_hit_id is None and state.fused and not state.config.semantic_cache_enabled
    assert SemanticCacheEntry.objects.count() == 1


def test_safety_runs_before_the_cache() -> None:
    """A red-flag message is routed even when a near-identical informational question is cached."""
    search_answer(request=SearchRequest(question="What are the symptoms of a stroke?", language="en"))
    state, _ = search_answer(
        request=SearchRequest(
            question="My father has the symptoms of a stroke right now, his face droops", language="en"
        )
    )
    assert state.outcome == Outcome.RED_FLAG and state.trace.retrieval.cache_hit_id is None
