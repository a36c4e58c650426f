"""The staff groups: created and synced after migrate from the declarative mapping, least
privilege as the admin shows it, and every model of the evaluators' apps covered."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.contrib.auth.models import Group, Permission, User
from django.test import Client
from django.urls import reverse

from zolsearch.access.groups import GROUPS
from zolsearch.access.services import groups_sync

pytestmark = pytest.mark.django_db


def _codenames(group: str) -> set[str]:
    return {
        f"{app}.{codename}"
        for app, codename in Group.objects.get(name=group).permissions.values_list(
            "content_type__app_label", "codename"
        )
    }


def _member(group: str) -> tuple[User, Client]:
    user = User.objects.create_user(f"member-{group.lower()}", password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    return user, client


def test_migrate_created_both_groups_with_their_permissions() -> None:
    """GIVEN the test database migrated (post_migrate synced the groups) THEN Editors curate
    content and taxonomy but see no answers, evaluation or flags; Evaluators hold the study
    permission apply_recommendations, view answers and feedback, change flags, and touch no
    content or taxonomy; neither may delete evaluation evidence or manage users."""
    editors, evaluators = _codenames("Editors"), _codenames("Evaluators")
    assert {"ingestion.add_source", "ingestion.change_source", "ingestion.view_document"} <= editors
    assert {"taxonomy.add_entity", "taxonomy.change_alias", "taxonomy.delete_relation"} <= editors
    assert {"taxonomy.view_snomedconcept", "taxonomy.add_snomedimport", "access.add_stafftoken"} <= editors
    assert "ingestion.change_document" not in editors and "ingestion.delete_source" not in editors
    assert "taxonomy.change_snomedconcept" not in editors
    assert not {p for p in editors if p.startswith(("search.", "evaluation.", "auth."))}

    assert {
        "evaluation.apply_recommendations",
        "evaluation.add_ablationstudy",
        "evaluation.add_goldenset",
        "evaluation.add_evaluationrun",
        "evaluation.view_judgement",
        "search.view_answer",
        "search.view_feedback",
        "search.change_pipelineflag",
        "access.add_stafftoken",
    } <= evaluators
    assert not {p for p in evaluators if p.startswith(("ingestion.", "taxonomy.", "auth."))}
    assert not {p for p in evaluators if ".delete_" in p}
    assert "evaluation.change_evaluationresult" not in evaluators and "evaluation.change_judgement" not in evaluators
    assert "search.view_semanticcacheentry" not in evaluators
    assert "access.view_auditentry" not in editors | evaluators


@pytest.mark.parametrize("app_label", ["evaluation", "review", "monitoring"])
def test_every_model_of_the_evaluators_apps_is_covered(app_label: str) -> None:
    """GIVEN whatever models the evaluators' apps hold now (other work adds some) THEN the
    Evaluators group may view each of them, and holds each custom permission they declare: a
    model added later is covered by the next migrate without editing the mapping."""
    app_config = apps.get_app_config(app_label)  # LookupError: the app is gone from INSTALLED_APPS
    granted = _codenames("Evaluators")
    models = list(app_config.get_models())
    assert models
    for model in models:
        assert f"{app_label}.view_{model._meta.model_name}" in granted, model
        for codename, _name in model._meta.permissions:
            assert f"{app_label}.{codename}" in granted, codename


def test_sync_is_idempotent_and_undoes_hand_edits() -> None:
    """GIVEN a permission added to Evaluators by hand and one removed WHEN the groups are synced
    (as after every migrate) THEN both groups hold exactly the declared permissions again."""
    before = {name: _codenames(name) for name in ("Editors", "Evaluators")}
    group = Group.objects.get(name="Evaluators")
    group.permissions.add(Permission.objects.get(codename="delete_answer"))
    group.permissions.remove(Permission.objects.get(codename="apply_recommendations"))
    counts = groups_sync()
    assert counts == {"Editors": len(before["Editors"]), "Evaluators": len(before["Evaluators"])}
    assert {name: _codenames(name) for name in ("Editors", "Evaluators")} == before
    assert groups_sync() == counts
    assert [spec.name for spec in GROUPS] == ["Editors", "Evaluators"]


def test_an_editor_curates_the_taxonomy_but_cannot_read_answers() -> None:
    user, client = _member("Editors")
    assert client.get(reverse("admin:taxonomy_entity_changelist")).status_code == 200
    assert client.get(reverse("admin:taxonomy_entity_add")).status_code == 200
    assert client.get(reverse("admin:ingestion_source_changelist")).status_code == 200
    assert client.get(reverse("admin:search_answer_changelist")).status_code == 403
    assert client.get(reverse("admin:evaluation_goldenset_changelist")).status_code == 403
    assert client.get(reverse("admin:search_pipelineflag_changelist")).status_code == 403
    assert user.has_perm("taxonomy.change_alias") and not user.has_perm("evaluation.apply_recommendations")


def test_an_evaluator_reads_answers_and_runs_evaluations_but_not_content() -> None:
    user, client = _member("Evaluators")
    assert client.get(reverse("admin:search_answer_changelist")).status_code == 200
    assert client.get(reverse("admin:evaluation_goldenset_changelist")).status_code == 200
    assert client.get(reverse("admin:evaluation_ablationstudy_add")).status_code == 200
    assert client.get(reverse("admin:taxonomy_entity_changelist")).status_code == 403
    assert client.get(reverse("admin:ingestion_source_add")).status_code == 403
    assert client.get(reverse("admin:access_auditentry_changelist")).status_code == 403
    assert user.has_perm("evaluation.apply_recommendations")
