"""Admin pages as an editor uses them: list pages without N+1, read-only rows, starting runs."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import translation

from ingestion.models import Document, IngestionRun
from zolsearch.search.models import Answer
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import search_answer

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url_name",
    [
        "admin:ingestion_source_changelist",
        "admin:ingestion_document_changelist",
        "admin:ingestion_ingestionrun_changelist",
        "admin:search_answer_changelist",
        "admin:taxonomy_snomedimport_changelist",
    ],
)
def test_list_pages_render_with_a_bounded_number_of_queries(
    admin_client, django_assert_max_num_queries, url_name: str
) -> None:  # type: ignore[no-untyped-def]
    search_answer(request=SearchRequest(question="What is Holmes-Adie syndrome?"))
    with django_assert_max_num_queries(15):
        response = admin_client.get(reverse(url_name))
    assert response.status_code == 200


def test_document_page_shows_chunks_read_only(admin_client) -> None:  # type: ignore[no-untyped-def]
    document = Document.objects.get(external_id="medquad:GARD:0000004:1")
    response = admin_client.get(reverse("admin:ingestion_document_change", args=[document.pk]))
    assert response.status_code == 200
    content = response.content.decode()
    assert "The Human Phenotype Ontology provides" in content  # the chunk inline
    assert 'name="title"' not in content  # no editable field
    assert admin_client.get(reverse("admin:ingestion_document_add")).status_code == 403


def test_answers_filter_by_gate_result(admin_client, settings) -> None:  # type: ignore[no-untyped-def]
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}  # everything passes
    search_answer(request=SearchRequest(question="What is Holmes-Adie syndrome?"))
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 1.01}
    search_answer(request=SearchRequest(question="What causes ABCD syndrome?"))
    url = reverse("admin:search_answer_changelist")
    rejected = admin_client.get(url, {"gate_passed__exact": "0"}).content.decode()
    passed = admin_client.get(url, {"gate_passed__exact": "1"}).content.decode()
    assert "What causes ABCD syndrome?" in rejected and "Holmes-Adie" not in rejected
    assert "Holmes-Adie" in passed and "What causes ABCD syndrome?" not in passed
    assert Answer.objects.count() == 2


def test_editor_starts_an_ingestion_run_from_the_admin(
    admin_client, fixtures_dir, django_capture_on_commit_callbacks, settings
) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the add form WHEN an editor picks the 'html' connector and a folder and saves
    THEN a run is stored and, after commit, executed by the Celery task (eager here), with
    progress and counts on the row."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from zolsearch.celery import app

    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = admin_client.post(
                reverse("admin:ingestion_ingestionrun_add"),
                {"connector": "html", "path": str(fixtures_dir / "html"), "limit": "", "subsets": ""},
            )
    finally:
        app.conf.task_always_eager = False
    assert response.status_code == 302
    run = IngestionRun.objects.latest("created_at")
    assert (run.connector, run.status, run.created_count, run.done, run.total) == ("html", "succeeded", 2, 2, 2)
    assert Document.objects.filter(external_id="html:https://voorbeeld.ziekenhuis.test/afdelingen/cardiologie").exists()


def test_add_form_rejects_a_missing_path(admin_client) -> None:  # type: ignore[no-untyped-def]
    with translation.override("en"):
        response = admin_client.post(
            reverse("admin:ingestion_ingestionrun_add"), {"connector": "medquad", "path": "/nope/nothing"}
        )
    assert response.status_code == 200
    assert "Nothing found at /nope/nothing" in response.content.decode()
    assert not IngestionRun.objects.filter(path="/nope/nothing").exists()


def test_run_again_action_queues_a_new_run(admin_client, fixtures_dir, django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    from zolsearch.celery import app

    old = IngestionRun.objects.create(
        connector="html",
        path=str(fixtures_dir / "html"),
        status="succeeded",
        options={"limit": None, "subsets": [], "source_key": ""},
    )
    app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = admin_client.post(
                reverse("admin:ingestion_ingestionrun_changelist"),
                {"action": "run_again", "_selected_action": [old.pk]},
            )
    finally:
        app.conf.task_always_eager = False
    assert response.status_code == 302
    new = IngestionRun.objects.exclude(pk=old.pk).latest("created_at")
    assert (new.connector, new.path, new.status) == ("html", old.path, "succeeded")


def test_editor_sets_a_source_priority_on_the_changelist(admin_client) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the MedQuAD source at priority 0
    WHEN an editor sets 7 in the list's priority column and saves, then tries 11
    THEN the row holds 7, the next request's configuration carries it, and 11 is refused."""
    from ingestion.models import Source
    from zolsearch.search.config import pipeline_config_default

    source = Source.objects.get(key="medquad")
    url = reverse("admin:ingestion_source_changelist")

    def post(priority: int):  # type: ignore[no-untyped-def]
        return admin_client.post(
            url,
            {
                "form-TOTAL_FORMS": "1",
                "form-INITIAL_FORMS": "1",
                "form-0-id": str(source.pk),
                "form-0-priority": str(priority),
                "_save": "Save",
            },
        )

    assert post(7).status_code == 302
    source.refresh_from_db()
    assert source.priority == 7 and pipeline_config_default().source_priorities == {"medquad": 7}
    response = post(11)
    assert response.status_code == 200
    assert "priority" in response.context["cl"].formset.errors[0]
    source.refresh_from_db()
    assert source.priority == 7
