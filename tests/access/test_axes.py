"""Brute-force protection of the admin login (django-axes), without storing the client's address."""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


def _login(client: Client, password: str, address: str) -> int:
    response = client.post(LOGIN, {"username": "staff", "password": password, "next": "/admin/"}, REMOTE_ADDR=address)
    return response.status_code


def test_failed_logins_lock_the_username_from_that_client() -> None:
    """GIVEN a staff login WHEN one client types a wrong password AXES_FAILURE_LIMIT times THEN
    its next attempt is locked out (429), even with the right password; another client still
    logs in; the attempt rows hold a pseudonym instead of the address."""
    User.objects.create_user("staff", password="right-password", is_staff=True)
    limit = settings.AXES_FAILURE_LIMIT
    attacker = Client()
    assert [_login(attacker, "wrong", "198.51.100.7") for _ in range(limit - 1)] == [200] * (limit - 1)
    assert _login(attacker, "wrong", "198.51.100.7") == 429
    assert _login(attacker, "right-password", "198.51.100.7") == 429
    assert "_auth_user_id" not in attacker.session

    colleague = Client()
    assert _login(colleague, "right-password", "203.0.113.20") == 302
    assert colleague.session["_auth_user_id"]

    attempt = AccessAttempt.objects.get(username="staff")
    assert attempt.failures_since_start >= limit
    assert attempt.ip_address and attempt.ip_address != "198.51.100.7" and ":" in attempt.ip_address
    row = AccessAttempt.objects.filter(pk=attempt.pk).values().get()
    assert not [value for value in row.values() if isinstance(value, str) and "198.51.100.7" in value]


def test_a_right_password_before_the_limit_resets_the_count() -> None:
    User.objects.create_user("staff", password="right-password", is_staff=True)
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, "wrong", "198.51.100.8")
    assert _login(client, "right-password", "198.51.100.8") == 302
    assert not AccessAttempt.objects.filter(username="staff", failures_since_start__gt=0).exists()
