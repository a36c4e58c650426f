"""Admin permissions for staff users who are not superusers: actions that start work, the golden
set import view and alias review are offered and executed only with the matching permission."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from evaluation.models import EvaluationRun, GoldenSet
from evaluation.services.golden import golden_set_import
from taxonomy.services import sample_hospital_load
from tests.evaluation.factories import medquad_items

pytestmark = pytest.mark.django_db


def _staff(*codenames: str) -> Client:
    user = User.objects.create_user("staff", password="x", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    return client


def _golden_set() -> GoldenSet:
    golden_set, _ = golden_set_import(name="perm", items=medquad_items(external_ids=["medquad:GARD:0000004:1"]))
    return golden_set


def _actions(client: Client, url_name: str) -> str:
    response = client.get(reverse(url_name))
    assert response.status_code == 200
    return response.content.decode()


def test_a_viewer_sees_no_start_run_action_and_cannot_post_it() -> None:
    """GIVEN staff with view rights only WHEN listing golden sets or posting 'start_run' THEN the
    action is not offered and no run is created."""
    golden_set = _golden_set()
    client = _staff("view_goldenset", "view_evaluationrun", "view_ingestionrun")
    assert 'value="start_run"' not in _actions(client, "admin:evaluation_goldenset_changelist")
    assert 'value="export_jsonl"' in _actions(client, "admin:evaluation_goldenset_changelist")
    assert 'value="run_again"' not in _actions(client, "admin:evaluation_evaluationrun_changelist")
    assert 'value="run_again"' not in _actions(client, "admin:ingestion_ingestionrun_changelist")
    client.post(
        reverse("admin:evaluation_goldenset_changelist"),
        {"action": "start_run", "_selected_action": [golden_set.pk]},
    )
    assert not EvaluationRun.objects.exists()


def test_an_evaluator_may_start_a_run(django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    golden_set = _golden_set()
    client = _staff("view_goldenset", "view_evaluationrun", "add_evaluationrun")
    assert 'value="start_run"' in _actions(client, "admin:evaluation_goldenset_changelist")
    with django_capture_on_commit_callbacks(execute=False):
        client.post(
            reverse("admin:evaluation_goldenset_changelist"),
            {"action": "start_run", "_selected_action": [golden_set.pk]},
        )
    assert EvaluationRun.objects.filter(golden_set=golden_set).count() == 1


def test_the_golden_set_import_view_needs_the_add_permission() -> None:
    url = reverse("admin:evaluation_goldenset_import")
    assert _staff("view_goldenset").get(url).status_code == 403
    User.objects.filter(username="staff").delete()
    assert _staff("view_goldenset", "add_goldenset").get(url).status_code == 200


def test_alias_review_actions_need_the_change_permission() -> None:
    sample_hospital_load()  # aliases to list (the action bar shows only over rows)
    viewer = _staff("view_alias")
    page = _actions(viewer, "admin:taxonomy_alias_changelist")
    assert 'value="approve"' not in page and 'value="reject"' not in page
    User.objects.filter(username="staff").delete()
    editor = _staff("view_alias", "change_alias")
    page = _actions(editor, "admin:taxonomy_alias_changelist")
    assert 'value="approve"' in page and 'value="reject"' in page
