"""``core.lookups.AnyOf``: the same rows as ``__in``, with one array parameter."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from core.lookups import AnyOf
from ingestion.models import Source


@pytest.mark.django_db
def test_any_of_finds_what_in_finds_with_one_parameter() -> None:
    """GIVEN three sources WHEN they are filtered by a list of keys THEN AnyOf returns the rows
    ``__in`` returns, sends the list as one array (no placeholder per value), and an empty list
    or a list of unknown keys matches nothing."""
    for key in ("t-hospital", "t-medquad", "t-rivm"):
        Source.objects.create(key=key, name=key.upper())
    wanted = ["t-medquad", "t-rivm", "t-unknown", "o'brien"]  # a quote must be bound, not pasted
    with CaptureQueriesContext(connection) as queries:
        found = sorted(Source.objects.filter(AnyOf(F("key"), wanted)).values_list("key", flat=True))
    assert (
        found == sorted(Source.objects.filter(key__in=wanted).values_list("key", flat=True)) == ["t-medquad", "t-rivm"]
    )
    assert "= ANY(" in queries.captured_queries[0]["sql"] and " IN (" not in queries.captured_queries[0]["sql"]
    assert not Source.objects.filter(AnyOf(F("key"), [])).exists()
    assert not Source.objects.filter(AnyOf(F("key"), ["nothing"])).exists()
