"""The audit trail of answer views: the answer and feedback pages record who saw which answers;
``answers_viewed`` is the entry point for other screens (the review queue)."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse

from zolsearch.access.models import AuditEntry
from zolsearch.search.models import Answer, Feedback
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import answers_viewed, answers_viewed_signal, search_answer

pytestmark = pytest.mark.django_db


def _answers(n: int) -> list[Answer]:
    questions = ["What is Holmes-Adie syndrome?", "What causes ABCD syndrome?", "What is Aicardi syndrome?"]
    return [search_answer(request=SearchRequest(question=q, language="en"))[1] for q in questions[:n]]


def _evaluator() -> Client:
    user = User.objects.create_user("eva", password="x", is_staff=True)
    user.groups.add(Group.objects.get(name="Evaluators"))
    client = Client()
    client.force_login(user)
    return client


def test_the_answer_list_and_page_are_audited(django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    """GIVEN three stored answers WHEN an evaluator opens the answer list (filtered to two),
    then one answer's page THEN one audit entry per page names the user, the screen and exactly
    the answers shown; the list still renders in a bounded number of queries."""
    answers = _answers(3)
    client = _evaluator()
    with django_assert_max_num_queries(16):
        response = client.get(reverse("admin:search_answer_changelist"), {"q": "syndrome"})
    assert response.status_code == 200
    listed = AuditEntry.objects.get()
    assert listed.username == "eva" and listed.user is not None and listed.where == "admin:search_answer_changelist"
    assert sorted(listed.answer_ids) == sorted(a.pk for a in answers)
    filtered = client.get(
        reverse("admin:search_answer_changelist"), {"outcome__exact": answers[0].outcome, "q": "Holmes"}
    )
    assert filtered.status_code == 200
    assert AuditEntry.objects.order_by("-id").first().answer_ids == [answers[0].pk]
    client.get(reverse("admin:search_answer_change", args=[answers[1].pk]))
    page = AuditEntry.objects.order_by("-id").first()
    assert page.where == "admin:search_answer_change" and page.answer_ids == [answers[1].pk]
    assert AuditEntry.objects.filter(answer_ids__contains=[answers[1].pk]).count() == 2


def test_feedback_pages_audit_the_answers_they_show() -> None:
    answer = _answers(1)[0]
    feedback = Feedback.objects.create(answer=answer, helpful=False, comment="", client="f" * 64)
    client = _evaluator()
    client.get(reverse("admin:search_feedback_changelist"))
    client.get(reverse("admin:search_feedback_change", args=[feedback.pk]))
    assert [(e.where, e.answer_ids) for e in AuditEntry.objects.order_by("id")] == [
        ("admin:search_feedback_changelist", [answer.pk]),
        ("admin:search_feedback_change", [answer.pk]),
    ]


def test_refused_and_empty_pages_record_nothing() -> None:
    """GIVEN an editor (no view_answer) and an empty result WHEN the pages are opened THEN no
    entry: nothing was shown."""
    _answers(1)
    editor = User.objects.create_user("ed", password="x", is_staff=True)
    editor.groups.add(Group.objects.get(name="Editors"))
    client = Client()
    client.force_login(editor)
    assert client.get(reverse("admin:search_answer_changelist")).status_code == 403
    assert _evaluator().get(reverse("admin:search_answer_changelist"), {"q": "no such words"}).status_code == 200
    assert not AuditEntry.objects.exists()


def test_answers_viewed_is_the_entry_point_for_other_screens(caplog: pytest.LogCaptureFixture) -> None:
    """GIVEN a screen of another app (the review queue) WHEN it calls answers_viewed(user, ids,
    where) THEN one entry, ids deduplicated; with no receiver connected (the access app missing)
    the view is logged as an error instead of passing silently."""
    answers = _answers(2)
    user = User.objects.create_user("rev", password="x", is_staff=True)
    answers_viewed(user, [answers[0].pk, answers[1].pk, answers[0].pk], "review:queue")
    entry = AuditEntry.objects.get()
    assert (entry.username, entry.where, entry.answer_ids) == ("rev", "review:queue", [answers[0].pk, answers[1].pk])
    answers_viewed(user=user, answer_ids=[], where="review:queue")
    assert AuditEntry.objects.count() == 1
    receivers = answers_viewed_signal.receivers[:]
    answers_viewed_signal.receivers.clear()
    answers_viewed_signal.sender_receivers_cache.clear()
    try:
        with caplog.at_level(logging.ERROR, logger="zolsearch.search.services"):
            answers_viewed(user, [answers[0].pk], "review:queue")
    finally:
        answers_viewed_signal.receivers[:] = receivers
        answers_viewed_signal.sender_receivers_cache.clear()
    assert "were not audited" in caplog.text and AuditEntry.objects.count() == 1
