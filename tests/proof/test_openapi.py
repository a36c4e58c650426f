"""Schemathesis against the API's own OpenAPI schema (``/api/v1/openapi.json``), in process
through the WSGI application, on the real embedded PostgreSQL with the session's test corpus.

Every operation of the schema is exercised with generated requests, valid and invalid (bounded:
``MAX_EXAMPLES`` per operation and phase, derandomised, so a run is repeatable), and every
response goes through schemathesis' default checks: no 5xx, status codes, content types and
headers as declared, bodies that validate against the response schemas, requests the schema
allows accepted and requests it forbids rejected. The staff taxonomy route is exercised both
anonymously (401 is declared) and with a staff user's session cookie.

Rerun: ``EMBEDDED_PGDATA=/tmp/pg-proof .venv/bin/python -m pytest tests/proof/test_openapi.py -q``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core import signals
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, settings

from zolsearch.search.models import Answer
from zolsearch.wsgi import application

MAX_EXAMPLES = 30

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application)
bounded = settings(
    max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


@pytest.fixture
def in_test_transaction(settings) -> Iterator[None]:
    """Keep the test's connection (and so its transaction) open across requests, as Django's
    test client does: the WSGI handler would otherwise close it after each response. The search
    rate limit is lifted: the requests come from one client, and conformance is what is tested
    (the 429 itself is declared)."""
    settings.SEARCH_RATE_LIMIT = (0, 60)
    settings.JUDGE_ON_ANSWER = False
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture
def staff_session(db: None) -> str:
    """The session key of a logged-in staff user (rolled back with the test)."""
    user = get_user_model().objects.create_user(username="proof-staff", password="x" * 20, is_staff=True)
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


@pytest.mark.django_db
@schema.parametrize()
@bounded
def test_every_operation_conforms_anonymously(case, in_test_transaction) -> None:
    """GIVEN the served schema WHEN any request it describes (or violates) is sent without
    credentials THEN the response passes every default check (no 5xx, full conformance)."""
    case.call_and_validate()


@pytest.mark.django_db
@schema.include(tag="taxonomy").parametrize()
@bounded
def test_staff_operations_conform_with_a_staff_session(case, in_test_transaction, staff_session) -> None:
    """GIVEN a staff user's session WHEN the staff-only operations get generated requests THEN
    every response passes the default checks, and none is 401/403 (the session is honoured).
    The schema declares the session cookie as an API key: the generated value is replaced by
    the real session (a generated bearer token is left: it fails, and the session is tried next).
    ``ignored_auth`` (does the API refuse invalid credentials?) runs in the anonymous test: here
    the valid session rides along with its invalid ones on purpose."""
    case.cookies = {**(case.cookies or {}), "sessionid": staff_session}
    response = case.call_and_validate(excluded_checks=[schemathesis.checks.ignored_auth])
    assert response.status_code not in (401, 403), response.text


@pytest.mark.django_db
def test_a_nul_character_is_answered_not_a_500(settings) -> None:
    """GIVEN a question, conversation id and source filter holding NUL (PostgreSQL text cannot
    store it; psycopg raised DataError, a 500) WHEN asked THEN it is answered, the NUL stored as
    U+FFFD."""
    settings.JUDGE_ON_ANSWER = False
    response = Client().post(
        "/api/v1/search",
        {"question": "What causes\x00 Aicardi syndrome?", "conversation_id": "c\x00", "sources": ["medquad\x00"]},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert "\ufffd" in Answer.objects.get(trace_id=response.json()["trace_id"]).question
