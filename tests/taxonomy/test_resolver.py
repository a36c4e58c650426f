"""The resolver cascade on the real heart-failure SNOMED CT subset and the sample hospital."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction

from taxonomy.models import Alias, Entity, Relation, ReviewState
from taxonomy.resolver import text_resolve
from taxonomy.services import sample_hospital_load
from taxonomy.snomed import snomed_import

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "snomed"
DATA = Path(__file__).resolve().parent.parent.parent / "data" / "snomed"


@pytest.fixture
def hospital() -> None:
    snomed_import(path=DATA / "heartfailure-subset")
    sample_hospital_load()


def _by_slug(resolution) -> dict:  # type: ignore[no-untyped-def]
    return {r.entity.slug: r for r in resolution.entities}


def test_acute_left_sided_heart_failure_reaches_heart_failure_and_the_left_ventricle(hospital: None) -> None:
    """GIVEN the real subset WHEN resolving 'Acute left-sided heart failure'
    THEN 'Heart failure' is reached through IS_A (depth 2) and cardiology through the
    FINDING_SITE 'Left cardiac ventricular structure' (the left ventricle of the heart).
    (The sample's English alias 'heart failure' would match first; it is removed here.)"""
    Alias.objects.filter(text="heart failure").delete()
    resolution = text_resolve(text="Acute left-sided heart failure", language="en")
    concept = resolution.concepts[0]
    assert concept["concept_id"] == 364006
    assert {"concept_id": 84114007, "term": "Heart failure", "depth": 2} in concept["ancestors"]
    assert 87878005 in [s["concept_id"] for s in concept["finding_sites"]]
    found = _by_slug(resolution)
    heart_failure = found["hartfalen"]
    assert [step["step"] for step in heart_failure.trail] == ["snomed_description", "is_a"]
    assert heart_failure.trail[1]["depth"] == 2 and heart_failure.trail[1]["path"][-1] == 84114007
    cardiology = found["cardiologie"]
    assert cardiology.via == "body_site" and cardiology.trail[1] == {
        "step": "finding_site",
        "site_concept_id": 87878005,
    }


def test_approved_alias_resolves_and_pending_does_not(hospital: None) -> None:
    assert "hartfalen" in _by_slug(text_resolve(text="Ik heb last van hartzwakte", language="nl"))
    entity = Entity.objects.get(slug="astma")
    Alias.objects.create(entity=entity, text="kortademigheid", language="nl")  # pending
    assert "astma" not in _by_slug(text_resolve(text="kortademigheid", language="nl"))
    trail = _by_slug(text_resolve(text="suikerziekte", language="nl"))["diabetes"].trail
    assert trail == [{"step": "alias", "text": "suikerziekte", "language": "nl", "origin": "import"}]


def test_accents_and_case_do_not_matter(hospital: None) -> None:
    assert "hartfalen" in _by_slug(text_resolve(text="HARTINSUFFICIENTIE?", language="nl"))


def test_entity_names_and_unknown_text(hospital: None) -> None:
    assert _by_slug(text_resolve(text="Waar is de cardiologie?", language="nl"))["cardiologie"].via == "name"
    empty = text_resolve(text="!!!", language="nl")
    assert empty.entities == [] and empty.concepts == []


def test_a_doctor_cannot_work_in_a_condition(hospital: None) -> None:
    doctor, condition = Entity.objects.get(slug="dr-anna-demo"), Entity.objects.get(slug="astma")
    with pytest.raises(IntegrityError), transaction.atomic():
        Relation.objects.create(subject=doctor, predicate="WORKS_IN", object=condition)


def test_one_approved_text_cannot_name_two_entities_unless_ambiguous(hospital: None) -> None:
    other = Entity.objects.get(slug="astma")
    with pytest.raises(IntegrityError), transaction.atomic():
        Alias.objects.create(entity=other, text="Hartzwakte", language="nl", review_state=ReviewState.APPROVED)
    Alias.objects.filter(normalised="hartzwakte").update(ambiguous=True)
    Alias.objects.create(
        entity=other, text="Hartzwakte", language="nl", review_state=ReviewState.APPROVED, ambiguous=True
    )


def test_resolve_command_and_staff_route(hospital: None, admin_client, client, capsys) -> None:  # type: ignore[no-untyped-def]
    call_command("resolve", "Acute left-sided heart failure", "--language", "en")
    out = capsys.readouterr().out
    assert "Heart failure (depth 2)" in out and "Left ventricle" in out and "Cardiologie" in out
    response = admin_client.get("/api/v1/taxonomy/resolve", {"q": "hartzwakte", "language": "nl"})
    assert response.status_code == 200
    assert response.json()["entities"][0]["slug"] == "hartfalen"
    assert client.get("/api/v1/taxonomy/resolve", {"q": "hartzwakte"}).status_code == 401


def test_resolver_query_count_does_not_grow_with_the_text(hospital: None, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    with django_assert_max_num_queries(12):
        text_resolve(text="Acute left-sided heart failure " * 20, language="en")


def test_inactive_descriptions_do_not_resolve(hospital: None) -> None:
    """GIVEN a description made inactive WHEN its exact term is asked THEN it no longer matches."""
    from taxonomy.models import SnomedDescription

    description = SnomedDescription.objects.get(term="Acute left-sided heart failure")

    def concepts() -> list[object]:
        return [c["concept_id"] for c in text_resolve(text="Acute left-sided heart failure", language="en").concepts]

    assert description.concept_id in concepts()
    SnomedDescription.objects.filter(concept_id=description.concept_id).update(active=False)
    assert description.concept_id not in concepts()


def test_editor_changes_are_recorded_with_who_and_when(hospital: None, admin_client, admin_user) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.urls import reverse

    entity = Entity.objects.get(slug="astma")
    data = {
        "type": "condition",
        "slug": "astma",
        "name": "Astma (bronchiaal)",
        "names": '{"en": "Asthma"}',
        "url": "",
        "phone": "",
        "description": "",
        "published": "on",
        "is_sample": "on",
        "snomed_concept_id": "195967001",
        "relations_out-TOTAL_FORMS": "0",
        "relations_out-INITIAL_FORMS": "0",
        "relations_out-MIN_NUM_FORMS": "0",
        "relations_out-MAX_NUM_FORMS": "1000",
        "aliases-TOTAL_FORMS": "0",
        "aliases-INITIAL_FORMS": "0",
        "aliases-MIN_NUM_FORMS": "0",
        "aliases-MAX_NUM_FORMS": "1000",
    }
    response = admin_client.post(reverse("admin:taxonomy_entity_change", args=[entity.pk]), data)
    assert response.status_code == 302
    log = LogEntry.objects.get(object_id=str(entity.pk), action_flag=CHANGE)
    assert log.user == admin_user and log.action_time is not None and "Name" in log.get_change_message()
