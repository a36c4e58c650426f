"""Editors in the taxonomy admin: SNOMED alias proposals, the review queue, refused relations."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from taxonomy.models import Alias, Entity, Relation, ReviewState
from taxonomy.services import sample_hospital_load
from taxonomy.snomed import snomed_import

pytestmark = pytest.mark.django_db
DATA = Path(__file__).resolve().parent.parent.parent / "data" / "snomed"


@pytest.fixture(autouse=True)
def hospital() -> None:
    snomed_import(path=DATA / "heartfailure-subset")
    sample_hospital_load()


def test_snomed_synonyms_are_proposed_pending_then_reviewed_in_bulk(admin_client) -> None:  # type: ignore[no-untyped-def]
    """GIVEN 'Hartfalen' linked to SNOMED 84114007 WHEN an editor proposes SNOMED synonyms
    THEN they arrive PENDING (never approved), first in the queue; bulk approve and reject work."""
    heart_failure = Entity.objects.get(slug="hartfalen")
    response = admin_client.post(
        reverse("admin:taxonomy_entity_changelist"),
        {"action": "propose_snomed_aliases", "_selected_action": [heart_failure.pk]},
    )
    assert response.status_code == 302
    proposed = Alias.objects.filter(entity=heart_failure, origin="snomed")
    assert proposed.exists() and set(proposed.values_list("review_state", flat=True)) == {"pending"}
    assert "cardiac failure" in {a.normalised for a in proposed}

    queue = admin_client.get(reverse("admin:taxonomy_alias_changelist")).content.decode()
    assert queue.index("Cardiac failure") < queue.index("hartzwakte")  # pending first

    first, second = list(proposed.order_by("id")[:2])
    admin_client.post(reverse("admin:taxonomy_alias_changelist"), {"action": "approve", "_selected_action": [first.pk]})
    admin_client.post(reverse("admin:taxonomy_alias_changelist"), {"action": "reject", "_selected_action": [second.pk]})
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.review_state, second.review_state) == (ReviewState.APPROVED, ReviewState.REJECTED)
    assert first.reviewed_at is not None


def test_conflicting_alias_is_flagged_and_not_approved(admin_client) -> None:  # type: ignore[no-untyped-def]
    """GIVEN 'hartzwakte' approved for Hartfalen WHEN the same text is proposed for Astma
    THEN the queue marks it as a conflict and approving it is refused with a message."""
    conflicting = Alias.objects.create(entity=Entity.objects.get(slug="astma"), text="Hartzwakte", language="nl")
    url = reverse("admin:taxonomy_alias_changelist")
    page = admin_client.get(url).content.decode()
    assert "icon-yes.svg" in page  # the conflict column's check mark
    response = admin_client.post(url, {"action": "approve", "_selected_action": [conflicting.pk]}, follow=True)
    assert "already approved for another entity" in response.content.decode()
    conflicting.refresh_from_db()
    assert conflicting.review_state == ReviewState.PENDING


def test_entity_page_refuses_a_doctor_working_in_a_condition(admin_client) -> None:  # type: ignore[no-untyped-def]
    doctor = Entity.objects.get(slug="dr-anna-demo")
    condition = Entity.objects.get(slug="astma")
    url = reverse("admin:taxonomy_entity_change", args=[doctor.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    relations = list(Relation.objects.filter(subject=doctor))
    data = {
        "type": "doctor",
        "slug": doctor.slug,
        "name": doctor.name,
        "names": "{}",
        "url": "",
        "phone": "",
        "description": "",
        "published": "on",
        "is_sample": "on",
        "snomed_concept_id": "",
        "relations_out-TOTAL_FORMS": str(len(relations) + 1),
        "relations_out-INITIAL_FORMS": str(len(relations)),
        "relations_out-MIN_NUM_FORMS": "0",
        "relations_out-MAX_NUM_FORMS": "1000",
        "aliases-TOTAL_FORMS": "0",
        "aliases-INITIAL_FORMS": "0",
        "aliases-MIN_NUM_FORMS": "0",
        "aliases-MAX_NUM_FORMS": "1000",
    }
    for i, relation in enumerate(relations):
        data.update(
            {
                f"relations_out-{i}-id": str(relation.pk),
                f"relations_out-{i}-subject": str(doctor.pk),
                f"relations_out-{i}-predicate": relation.predicate,
                f"relations_out-{i}-object": str(relation.object_id),
                f"relations_out-{i}-provenance": relation.provenance,
            }
        )
    n = len(relations)
    data.update(
        {
            f"relations_out-{n}-subject": str(doctor.pk),
            f"relations_out-{n}-predicate": "WORKS_IN",
            f"relations_out-{n}-object": str(condition.pk),
            f"relations_out-{n}-provenance": "editor",
        }
    )
    response = admin_client.post(url, data)
    assert response.status_code == 200  # the form comes back with the error
    assert "A doctor cannot be WORKS_IN a condition" in response.content.decode()
    assert not Relation.objects.filter(subject=doctor, object=condition).exists()


def test_entity_list_marks_sample_data(admin_client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    with django_assert_max_num_queries(12):
        page = admin_client.get(reverse("admin:taxonomy_entity_changelist"))
    assert page.status_code == 200 and "SAMPLE" in page.content.decode()


def test_editors_search_snomed_terms_accent_insensitively(admin_client) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the heart-failure subset WHEN an editor searches 'LEFT-sided  Héart' THEN the
    full-text search over normalised terms finds 'Acute left-sided heart failure'; a number
    finds the concept's descriptions."""
    url = reverse("admin:taxonomy_snomeddescription_changelist")
    page = admin_client.get(url, {"q": "LEFT-sided  Héart"}).content.decode()
    assert "Acute left-sided heart failure" in page and "Asthma" not in page
    by_id = admin_client.get(url, {"q": "364006"}).content.decode()
    assert "Acute left-sided heart failure" in by_id
