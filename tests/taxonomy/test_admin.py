"""Editors in the taxonomy admin: SNOMED alias proposals, the review queue, refused relations,
SNOMED CT imports (progress, read-only, run again)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse
from django.utils import translation

from taxonomy.models import Alias, Entity, Relation, ReviewState, SnomedImport
from taxonomy.services import sample_hospital_load
from taxonomy.snomed import snomed_import, snomed_import_create

pytestmark = pytest.mark.django_db
DATA = Path(__file__).resolve().parent.parent.parent / "data" / "snomed"


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    """The admin in English (its default is Belgian Dutch), so the tests read the English labels."""
    with translation.override("en"):
        yield


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
    assert "This relation does not fit these entity types: doctor works in condition" in response.content.decode()
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


def _staff(*codenames: str) -> Client:
    user = User.objects.create_user("staff", password="x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def test_snomed_import_list_shows_progress_with_a_bounded_number_of_queries(  # type: ignore[no-untyped-def]
    admin_client, django_assert_max_num_queries
) -> None:
    """GIVEN the finished import of the fixture and five pending ones WHEN listing imports
    THEN each row has a progress bar (3 of 3 files; 0 of 3) and the page costs no query per row."""
    for _ in range(5):
        snomed_import_create(path=DATA / "heartfailure-subset")
    with django_assert_max_num_queries(8):
        page = admin_client.get(reverse("admin:taxonomy_snomedimport_changelist"))
    content = page.content.decode()
    assert page.status_code == 200
    assert content.count('<progress value="3" max="3" title="3 / 3"></progress> 100%') == 1
    assert content.count('<progress value="0" max="3" title="0 / 3"></progress> 0%') == 5


def test_snomed_import_detail_is_read_only(admin_client) -> None:  # type: ignore[no-untyped-def]
    run = SnomedImport.objects.get()
    url = reverse("admin:taxonomy_snomedimport_change", args=[run.pk])
    page = admin_client.get(url)
    assert page.status_code == 200 and "heartfailure-subset" in page.content.decode()
    assert 'name="path"' not in page.content.decode() and 'name="status"' not in page.content.decode()
    assert admin_client.post(url, {"path": "/elsewhere"}).status_code == 403
    assert admin_client.get(reverse("admin:taxonomy_snomedimport_add")).status_code == 403
    run.refresh_from_db()
    assert run.path.endswith("heartfailure-subset")


def test_run_again_needs_the_add_permission_and_queues_a_new_import(django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a finished import WHEN staff with only the view permission post 'run_again' on the
    changelist THEN it is not offered and nothing is created; WHEN staff who may add imports post
    it THEN a new import of the same folder is queued and, run by the worker (eager here),
    succeeds with its progress on the row."""
    from zolsearch.celery import app

    old = SnomedImport.objects.get()
    url = reverse("admin:taxonomy_snomedimport_changelist")
    viewer = _staff("view_snomedimport")
    assert 'value="run_again"' not in viewer.get(url).content.decode()
    viewer.post(url, {"action": "run_again", "_selected_action": [old.pk]})
    assert SnomedImport.objects.count() == 1

    User.objects.filter(username="staff").delete()
    importer = _staff("view_snomedimport", "add_snomedimport")
    assert 'value="run_again"' in importer.get(url).content.decode()
    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = importer.post(url, {"action": "run_again", "_selected_action": [old.pk]}, follow=True)
    finally:
        app.conf.task_always_eager = False
    new = SnomedImport.objects.exclude(pk=old.pk).get()
    assert f"SNOMED CT imports queued: {new.pk}" in response.content.decode()
    assert (new.path, new.status, new.done, new.total) == (old.path, "succeeded", 3, 3)
