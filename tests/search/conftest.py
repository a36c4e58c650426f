"""Fixtures of the search tests that index shared/data's real pages."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.providers.embeddings import embedding_provider_get
from ingestion.models import Source
from ingestion.services import documents_upsert
from tests.search import hospital_page_records
from zolsearch.search.focus import medquad_lexicon_clear
from zolsearch.search.sites import index_sites_clear


@pytest.fixture
def hospital_pages(transactional_db: None) -> Iterator[None]:
    """shared/data/hospital-nl's 100 pages in the index, as the jsonl connector reads them,
    embedded by the real default encoder, at the source priority the product runs with (10).
    Committed and truncated after the test (``transactional_db``), not rolled back: rolled
    back, the 100 Dutch pages still changed later tests' BM25 rankings (the rarity of "moet" and
    "ik" in tests/search/test_retrieval.py; seen 2026-11-29), as rows a rollback removes stay
    counted in the BM25 index's term statistics. The per-process caches derived from
    the index (site labels, the MedQuAD lexicon) are cleared before and after, so neither this
    test nor the next sees another's index."""
    index_sites_clear()
    medquad_lexicon_clear()
    source = Source.objects.create(key="hospital-nl", name="hospital-nl", connector="jsonl", priority=10)
    documents_upsert(source=source, records=hospital_page_records(), provider=embedding_provider_get())
    yield
    index_sites_clear()
    medquad_lexicon_clear()
