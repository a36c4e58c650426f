"""The admin's language (core.admin_language): Belgian Dutch by default, English for a browser
that prefers it; pages, forms, the review queue and action messages all follow it, and the
patient page keeps its own language switch."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse

from core.admin_language import admin_language
from evaluation.models import GoldenSet
from evaluation.review.models import Review
from evaluation.review.services import review_queue_sync
from tests.monitoring.factories import answer_make
from zolsearch.search.contract import Outcome

pytestmark = pytest.mark.django_db
ENGLISH = {"Accept-Language": "en-GB,en;q=0.9"}


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("", None),
        ("nl-BE,nl;q=0.9,en;q=0.8", "nl-be"),
        ("en-GB,en;q=0.9", "en"),
        ("en-US;q=0.5, nl;q=0.8", "nl-be"),  # q-values, not the order written, decide
        ("fr-BE,fr;q=0.9,en;q=0.8", "en"),  # no French admin: the next language it has
        ("fr-BE,fr;q=0.9", None),
        ("*", None),
    ],
)
def test_admin_language_from_accept_language(header: str, expected: str | None) -> None:
    assert admin_language(header) == expected


def test_admin_index_is_dutch_by_default_and_english_on_request(admin_client: Client) -> None:
    """GIVEN no language preference WHEN the admin index is opened THEN the project's apps and
    models have their Dutch names; a browser preferring English gets the English ones."""
    url = reverse("admin:index")
    dutch = admin_client.get(url)
    page = dutch.content.decode()
    assert dutch["Content-Language"] == "nl-be" and 'lang="nl-be"' in page
    for label in ("Referentiesets", "Evaluatieruns", "Kalibraties", "Beoordelingswachtrij", "Antwoorden", "Bronnen"):
        assert label in page, label
    assert "Golden sets" not in page and "Evaluation runs" not in page
    english = admin_client.get(url, headers=ENGLISH)
    page = english.content.decode()
    assert english["Content-Language"] == "en" and "Accept-Language" in english["Vary"]
    for label in ("Golden sets", "Evaluation runs", "Calibrations", "Review queue", "Answers", "Sources"):
        assert label in page, label
    assert "Referentiesets" not in page


def test_answer_list_columns_and_filters_follow_the_language(admin_client: Client) -> None:
    answer_make(created_at=datetime(2026, 11, 1, 9, 0, tzinfo=UTC), outcome=Outcome.GATE_REJECTED, gate_score=0.5)
    url = reverse("admin:search_answer_changelist")
    dutch = admin_client.get(url).content.decode()
    for label in ("Uitkomst", "Reden van weigering", "Score kwaliteitscontrole", "Embeddingmodel"):
        assert label in dutch, label
    assert "Terugvalantwoord: afgewezen door de kwaliteitscontrole" in dutch  # choice label, filter and cell
    english = admin_client.get(url, headers=ENGLISH).content.decode()
    for label in ("Outcome", "Refusal reason", "Gate score", "Fallback: rejected by the quality gate"):
        assert label in english, label


def test_golden_set_form_labels_and_help_texts(admin_client: Client) -> None:
    url = reverse("admin:evaluation_goldenset_add")
    dutch = admin_client.get(url).content.decode()
    assert "referentieset toevoegen" in dutch  # Django's "%s toevoegen" with the model name
    assert "Vaste naam, bv. 'medquad-heldout'." in dutch
    assert "Referentievragen" in dutch  # the inline's title
    english = admin_client.get(url, headers=ENGLISH).content.decode()
    assert "Add golden set" in english and "Stable name, e.g. 'medquad-heldout'." in english


def test_review_queue_and_review_page_in_dutch(admin_client: Client) -> None:
    """GIVEN a gate rejection in the review queue WHEN an evaluator opens the queue and the
    review THEN the columns, the kind and the panels are Dutch (English with the header)."""
    answer = answer_make(
        created_at=datetime(2026, 11, 1, 9, 0, tzinfo=UTC), outcome=Outcome.GATE_REJECTED, gate_score=0.5
    )
    review_queue_sync(answer_ids=[answer.pk])
    review = Review.objects.get(answer=answer)
    queue = admin_client.get(reverse("admin:review_review_changelist")).content.decode()
    assert "Afgewezen door de kwaliteitscontrole" in queue and "Wachtrij vernieuwen" in queue
    page = admin_client.get(reverse("admin:review_review_change", args=[review.pk])).content.decode()
    assert "Kwaliteitscontrole" in page and "Oordeel" in page
    english = admin_client.get(reverse("admin:review_review_changelist"), headers=ENGLISH).content.decode()
    assert "Rejected by the quality gate" in english and "Refresh queue" in english


def test_action_messages_are_stored_in_the_admin_language(admin_client: Client) -> None:
    """GIVEN two golden sets WHEN the one-set export action runs on both THEN its warning
    reads in the request's language (messages are stored before the language is restored)."""
    sets = [GoldenSet.objects.create(name="set-a"), GoldenSet.objects.create(name="set-b")]
    url = reverse("admin:evaluation_goldenset_changelist")
    data = {"action": "export_jsonl", "_selected_action": [s.pk for s in sets]}
    dutch = admin_client.post(url, data, follow=True).content.decode()
    assert "Kies precies één set om te exporteren." in dutch
    english = admin_client.post(url, data, follow=True, headers=ENGLISH).content.decode()
    assert "Select exactly one set to export." in english


def test_the_patient_page_keeps_its_own_language(client: Client) -> None:
    """The admin's middleware leaves the patient page alone: without ``?lang=`` it is Dutch,
    whatever the browser prefers."""
    response = client.get(reverse("web:search"), headers=ENGLISH)
    assert response.status_code == 200
    assert response["Content-Language"] == "nl"
