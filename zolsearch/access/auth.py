"""Authentication of the staff API (django-ninja): a staff API token as ``Authorization: Bearer
zst_…``, or the admin's own session (the browser of a logged-in staff user).

Mounted on the staff routers in ``zolsearch/api.py`` as :data:`staff_auth`; ninja tries them in
order and answers 401 when neither authenticates. Both put the user on ``request.user`` (so a
route's own ``request.user.is_staff`` or ``has_perm`` checks work the same) and return it as
``request.auth``. Session requests that change data need the CSRF token (ninja's session auth).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuthIsStaff

from zolsearch.access.services import staff_token_authenticate


class StaffTokenAuth(HttpBearer):
    """``Authorization: Bearer <staff API token>`` (:func:`staff_token_authenticate`)."""

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        user = staff_token_authenticate(token=token.strip())
        if user is not None:
            request.user = user  # type: ignore[assignment]  # the project's user model
        return user


class StaffSessionAuth(SessionAuthIsStaff):
    """The admin session of an active staff user."""


staff_auth = [StaffTokenAuth(), StaffSessionAuth()]
