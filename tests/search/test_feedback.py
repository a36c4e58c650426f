"""POST /api/v1/feedback: stored per answer and client without personal identifiers, rate
limited with 429 and Retry-After, counted in Prometheus, read-only in the admin."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from prometheus_client import REGISTRY

from zolsearch.search.models import Feedback
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import client_fingerprint, search_answer

pytestmark = pytest.mark.django_db
URL = "/api/v1/feedback"


def _trace() -> str:
    _, answer = search_answer(request=SearchRequest(question="What is Holmes-Adie syndrome?", language="en"))
    return str(answer.trace_id)


def _post(client: Client, body: dict, address: str = "10.0.0.1"):  # type: ignore[no-untyped-def]
    return client.post(URL, body, content_type="application/json", REMOTE_ADDR=address)


def _count(helpful: str, comment: str) -> float:
    return REGISTRY.get_sample_value("zolsearch_feedback_total", {"helpful": helpful, "comment": comment}) or 0.0


def test_feedback_is_stored_without_identifiers_and_counted() -> None:
    client, trace = Client(), _trace()
    before = _count("no", "yes")
    comment = (
        "Mijn naam is Jan Peeters, bel me op 0470 12 34 56 of mail jan.peeters@example.be, het antwoord klopt niet"
    )
    response = _post(client, {"trace_id": trace, "helpful": False, "comment": comment})
    assert response.status_code == 201, response.content
    body = response.json()
    stored = Feedback.objects.get()
    for value in ("Peeters", "0470", "jan.peeters@example.be"):
        assert value not in stored.comment and value not in body["comment_stored"]
    assert "het antwoord klopt niet" in stored.comment
    assert {"PHONE", "EMAIL"} <= set(stored.identifiers) and body["identifiers_removed"] == stored.identifiers
    assert stored.client == client_fingerprint(address="10.0.0.1") and "10.0.0.1" not in stored.client
    assert _count("no", "yes") == before + 1
    # the same client changes its mind: one row, updated
    assert _post(client, {"trace_id": trace, "helpful": True}).status_code == 201
    assert Feedback.objects.get().helpful is True and Feedback.objects.count() == 1
    assert _post(client, {"trace_id": trace, "helpful": True}, address="10.0.0.2").status_code == 201
    assert Feedback.objects.count() == 2


def test_bad_feedback_is_refused_with_the_reason() -> None:
    client, trace = Client(), _trace()
    missing = _post(client, {"trace_id": str(uuid.uuid4()), "helpful": True})
    assert missing.status_code == 404 and "trace id" in missing.json()["detail"]
    assert _post(client, {"trace_id": "not-a-uuid", "helpful": True}).status_code == 422
    assert _post(client, {"trace_id": trace}).status_code == 422
    too_long = _post(client, {"trace_id": trace, "helpful": True, "comment": "x" * 1001})
    assert too_long.status_code == 422 and "comment" in too_long.json()["detail"]
    assert not Feedback.objects.exists()


def test_a_client_over_the_limit_gets_429_with_retry_after(settings) -> None:  # type: ignore[no-untyped-def]
    settings.FEEDBACK_RATE_LIMIT = (2, 60)
    client = Client()
    traces = [_trace() for _ in range(3)]
    assert [_post(client, {"trace_id": t, "helpful": True}).status_code for t in traces[:2]] == [201, 201]
    limited = _post(client, {"trace_id": traces[2], "helpful": True})
    assert limited.status_code == 429 and 1 <= int(limited["Retry-After"]) <= 60
    assert _post(client, {"trace_id": traces[2], "helpful": True}, address="10.9.9.9").status_code == 201
    Feedback.objects.update(updated_at=timezone.now() - timedelta(seconds=61))  # the window has passed
    assert _post(client, {"trace_id": traces[2], "helpful": True}).status_code == 201


def test_the_fingerprint_changes_every_day() -> None:
    now = timezone.now()
    assert client_fingerprint(address="10.0.0.1", now=now) == client_fingerprint(address="10.0.0.1", now=now)
    assert client_fingerprint(address="10.0.0.1", now=now) != client_fingerprint(address="10.0.0.2", now=now)
    assert client_fingerprint(address="10.0.0.1", now=now) != client_fingerprint(
        address="10.0.0.1", now=now + timedelta(days=1)
    )


def test_the_admin_lists_feedback_read_only(admin_client, django_assert_max_num_queries) -> None:  # type: ignore[no-untyped-def]
    _post(Client(), {"trace_id": _trace(), "helpful": False, "comment": "te vaag"})
    with django_assert_max_num_queries(10):
        page = admin_client.get(reverse("admin:search_feedback_changelist"))
    assert page.status_code == 200 and "te vaag" in page.content.decode()
    assert admin_client.get(reverse("admin:search_feedback_add")).status_code == 403
