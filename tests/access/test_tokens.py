"""Staff API tokens: stored only as a keyed hash, shown once in the admin, revocable, expiring,
per user; Bearer auth on the staff API next to the admin session."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from taxonomy.services import sample_hospital_load
from zolsearch.access.models import StaffToken
from zolsearch.access.services import TokenInvalid, staff_token_authenticate, staff_token_create, token_digest

pytestmark = pytest.mark.django_db

RESOLVE = "/api/v1/taxonomy/resolve"


def _staff(username: str = "editor", *, group: str = "Editors") -> User:
    user = User.objects.create_user(username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return user


def _resolve(token: str | None, *, client: Client | None = None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return (client or Client()).get(RESOLVE, {"q": "cardiologie"}, headers=headers).status_code


def test_a_token_is_stored_only_as_its_keyed_hash() -> None:
    """GIVEN a new token WHEN its row is read THEN neither the token nor its secret part is in any
    column; the digest is the HMAC of the token (64 hex), the prefix its 8 lookup characters."""
    user = _staff()
    token, plain = staff_token_create(user=user, name="sync script", created_by="admin")
    assert re.fullmatch(r"zst_[0-9a-f]{8}_[A-Za-z0-9_-]{43}", plain)
    row = StaffToken.objects.filter(pk=token.pk).values().get()
    secret = plain.rsplit("_", 1)[1]
    assert not [value for value in row.values() if isinstance(value, str) and (plain in value or secret in value)]
    assert row["digest"] == token_digest(plain) and len(row["digest"]) == 64
    assert row["prefix"] == plain[4:12] and row["created_by"] == "admin"


def test_bearer_token_and_admin_session_both_open_the_staff_api() -> None:
    """GIVEN the sample hospital WHEN the staff API is called with a valid token, with the admin
    session of a staff user, without either, or with a made-up token THEN 200, 200, 401, 401;
    the token's last use is recorded."""
    sample_hospital_load()
    user = _staff()
    token, plain = staff_token_create(user=user, name="sync", created_by="editor")
    assert token.last_used_at is None
    assert _resolve(plain) == 200
    assert StaffToken.objects.get(pk=token.pk).last_used_at is not None
    session = Client()
    session.force_login(user)
    assert _resolve(None, client=session) == 200
    assert _resolve(None) == 401
    assert _resolve(plain[:-4] + "AAAA") == 401
    assert _resolve("not-a-token") == 401
    body = Client().get(RESOLVE, {"q": "cardiologie"}, headers={"Authorization": f"Bearer {plain}"}).json()
    assert any(entity["type"] == "department" for entity in body["entities"])


def test_revoked_expired_and_demoted_tokens_are_refused() -> None:
    user = _staff()
    revoked, revoked_plain = staff_token_create(user=user, name="old", created_by="editor")
    expiring, expiring_plain = staff_token_create(
        user=user, name="short", created_by="editor", expires_at=timezone.now() + timedelta(hours=1)
    )
    assert staff_token_authenticate(token=revoked_plain) == user
    StaffToken.objects.filter(pk=revoked.pk).update(revoked_at=timezone.now())
    assert staff_token_authenticate(token=revoked_plain) is None
    assert _resolve(revoked_plain) == 401

    assert staff_token_authenticate(token=expiring_plain) == user
    StaffToken.objects.filter(pk=expiring.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert staff_token_authenticate(token=expiring_plain) is None

    _, plain = staff_token_create(user=user, name="demoted", created_by="editor")
    User.objects.filter(pk=user.pk).update(is_staff=False)
    assert staff_token_authenticate(token=plain) is None


def test_tokens_are_only_for_active_staff_and_future_expiry() -> None:
    patient = User.objects.create_user("patient", password="x")
    with pytest.raises(TokenInvalid):
        staff_token_create(user=patient, name="nope", created_by="admin")
    with pytest.raises(TokenInvalid):
        staff_token_create(
            user=_staff(), name="past", created_by="admin", expires_at=timezone.now() - timedelta(minutes=1)
        )
    assert not StaffToken.objects.exists()


def test_the_admin_shows_a_new_token_once_and_revokes_it() -> None:
    """GIVEN an editor in the admin WHEN they add a token THEN the page after saving shows the
    plain token (not cached), which then works on the API; the list and the token's page never
    show it again; the revoke action makes the API refuse it."""
    user = _staff()
    client = Client()
    client.force_login(user)
    response = client.post(reverse("admin:access_stafftoken_add"), {"user": user.pk, "name": "taxonomy sync"})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    plain = re.search(r"zst_[0-9a-f]{8}_[A-Za-z0-9_-]{43}", response.content.decode()).group()
    token = StaffToken.objects.get(user=user)
    assert token.name == "taxonomy sync" and token.created_by == "editor" and token.prefix == plain[4:12]
    assert _resolve(plain) == 200
    listing = client.get(reverse("admin:access_stafftoken_changelist")).content.decode()
    detail = client.get(reverse("admin:access_stafftoken_change", args=[token.pk])).content.decode()
    assert f"zst_{token.prefix}_" in listing and plain not in listing and plain not in detail

    client.post(reverse("admin:access_stafftoken_changelist"), {"action": "revoke", "_selected_action": [token.pk]})
    assert StaffToken.objects.get(pk=token.pk).revoked_at is not None
    assert _resolve(plain) == 401


def test_staff_see_and_create_only_their_own_tokens() -> None:
    """GIVEN two editors, one with a token WHEN the other lists tokens or tries to create one for
    the first THEN the first's token is not listed and the form refuses the other user."""
    owner, other = _staff("owner"), _staff("other")
    staff_token_create(user=owner, name="owner's script", created_by="owner")
    client = Client()
    client.force_login(other)
    assert "owner&#x27;s script" not in client.get(reverse("admin:access_stafftoken_changelist")).content.decode()
    response = client.post(reverse("admin:access_stafftoken_add"), {"user": owner.pk, "name": "stolen"})
    assert response.status_code == 200 and not StaffToken.objects.filter(name="stolen").exists()
    assert "user" in response.context_data["adminform"].form.errors
