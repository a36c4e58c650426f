"""The resolver's alias and name queries are skipped, in autocommit, for a text none of whose
n-grams is an approved alias or an entity's name (:func:`taxonomy.resolver.lookup_terms_live`);
what editors change is seen at once in the saving process and within the maximum age elsewhere.
Transactional (``transaction=True``): inside a transaction the resolver queries every time.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from taxonomy.models import Alias, Entity, ReviewState
from taxonomy.resolver import lookup_terms_live, text_resolve
from taxonomy.services import sample_hospital_load
from taxonomy.snomed import snomed_import

pytestmark = pytest.mark.django_db(transaction=True)
DATA = Path(__file__).resolve().parent.parent.parent / "data" / "snomed"


@pytest.fixture
def hospital(settings: Any) -> None:
    """The heart-failure SNOMED CT subset and the sample hospital, committed; terms held 60 s."""
    snomed_import(path=DATA / "heartfailure-subset")
    sample_hospital_load()
    settings.PIPELINE_CONFIG_MAX_AGE_S = 60  # (a settings change also forgets the held terms)


def _tables(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries]


def _slugs(text: str, language: str = "nl") -> set[str]:
    return {r.entity.slug for r in text_resolve(text=text, language=language, with_terms=False).entities}


def test_no_alias_or_name_query_for_a_text_that_names_nothing(hospital: None) -> None:
    """GIVEN the held terms WHEN a question names no alias nor entity THEN the resolver sends no
    alias nor entity-name query, and the same entities are found as with every query sent."""
    lookup_terms_live()  # read once
    with CaptureQueriesContext(connection) as queries:
        assert _slugs("mag ik bij mijn vrouw blijven slapen na de bevalling") == set()
    sent = _tables(queries)
    assert not [sql for sql in sent if "taxonomy_alias" in sql or 'FROM "taxonomy_entity"' in sql], sent
    assert len(sent) == 1, sent  # the SNOMED CT descriptions only

    with CaptureQueriesContext(connection) as queries:
        found = _slugs("Ik heb last van hartzwakte, waar is de cardiologie?")
    assert {"hartfalen", "cardiologie"} <= found
    assert any("taxonomy_alias" in sql for sql in _tables(queries))
    with transaction.atomic():  # inside a transaction: every query, the same answer
        assert _slugs("Ik heb last van hartzwakte, waar is de cardiologie?") == found


def test_changes_are_seen_at_once_here_and_within_the_maximum_age_elsewhere(hospital: None, settings: Any) -> None:
    """GIVEN the held terms WHEN an editor approves an alias in this process THEN it resolves at
    once; WHEN another process's write (no signal here) adds one THEN it resolves after the
    maximum age, not before; a renamed entity is found by its new name at once."""
    astma = Entity.objects.get(slug="astma")
    assert "astma" not in _slugs("ik ben vaak kortademig")
    Alias.objects.create(entity=astma, text="kortademig", language="nl", review_state=ReviewState.APPROVED)
    assert "astma" in _slugs("ik ben vaak kortademig")

    settings.PIPELINE_CONFIG_MAX_AGE_S = 1.0
    pending = Alias.objects.create(entity=astma, text="piepende ademhaling", language="nl")
    assert "astma" not in _slugs("een piepende ademhaling")  # pending: not an alias yet
    Alias.objects.filter(pk=pending.pk).update(review_state=ReviewState.APPROVED)  # as another worker
    assert "astma" not in _slugs("een piepende ademhaling")  # held: not seen yet
    time.sleep(1.1)
    assert "astma" in _slugs("een piepende ademhaling")

    astma.name = "Bronchiale astma"
    astma.save()
    assert "astma" in _slugs("wat is bronchiale astma")


def test_snomed_ct_routing_reads_no_editor_table_when_held(hospital: None) -> None:
    """GIVEN the held terms WHEN a text reaches SNOMED CT concepts THEN the routing table and the
    linked entities come from the held copy (no statement reads them) and the resolution, trails
    included, is the one every query gives inside a transaction; a route deleted in this process
    is gone at once."""

    Alias.objects.filter(text="heart failure").delete()  # reach the graph through SNOMED CT only
    text = "Acute left-sided heart failure"
    lookup_terms_live()
    with CaptureQueriesContext(connection) as queries:
        held = text_resolve(text=text, language="en", with_terms=False)
    sent = _tables(queries)
    assert not [sql for sql in sent if "taxonomy_bodysitedepartment" in sql or "snomed_concept_id" in sql], sent
    with transaction.atomic():
        read = text_resolve(text=text, language="en", with_terms=False)
    assert {r.entity.slug: r.trail for r in held.entities} == {r.entity.slug: r.trail for r in read.entities}
    assert {"hartfalen", "cardiologie"} <= {r.entity.slug for r in held.entities}

    from taxonomy.models import BodySiteDepartment

    BodySiteDepartment.objects.filter(department__slug="cardiologie").delete()  # an editor's change here
    assert "cardiologie" not in {r.entity.slug for r in text_resolve(text=text, language="en").entities}
