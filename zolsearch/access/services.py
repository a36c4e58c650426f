"""Writes of access control: group permissions, staff API tokens, the patient API's rate limit
and the audit trail of answer views."""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import random
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.apps import apps as global_apps
from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission
from django.db import DEFAULT_DB_ALIAS, connection, transaction
from django.utils import timezone

from zolsearch.access.groups import FULL, GROUPS, GroupSpec
from zolsearch.access.models import AuditEntry, RateCounter, StaffToken

logger = logging.getLogger(__name__)

# --- groups -----------------------------------------------------------------------------------


def _group_permissions(spec: GroupSpec, *, using: str) -> tuple[list[Permission], list[str]]:
    """The permissions ``spec`` grants that exist, and the names it grants that do not."""
    wanted: list[Permission] = []
    missing: list[str] = []
    for grant in spec.apps:
        try:
            app_config = global_apps.get_app_config(grant.app_label)
        except LookupError:
            continue  # not installed (yet): nothing to grant
        model_names = {model._meta.model_name for model in app_config.get_models()}
        for permission in Permission.objects.using(using).filter(content_type__app_label=grant.app_label):
            model = permission.content_type.model
            if model not in model_names:
                continue  # a content type left by a deleted model
            actions = grant.models.get(model, grant.actions)
            granted = {f"{action}_{model}" for action in actions}
            custom = permission.codename not in {f"{action}_{model}" for action in FULL}
            if permission.codename in granted or (grant.custom and custom):
                wanted.append(permission)
    for name in spec.permissions:
        app_label, _, codename = name.partition(".")
        found = Permission.objects.using(using).filter(content_type__app_label=app_label, codename=codename).first()
        if found is None:
            missing.append(name)
        else:
            wanted.append(found)
    return wanted, missing


@transaction.atomic
def groups_sync(*, specs: Iterable[GroupSpec] = GROUPS, using: str = DEFAULT_DB_ALIAS) -> dict[str, int]:
    """Make each group of ``specs`` hold exactly the permissions it declares
    (:mod:`zolsearch.access.groups`); create missing groups. Returns group name → number of
    permissions. Permissions of every installed app are created first (Django creates them
    after migrate, app by app, so some may not exist yet when this runs). A declared single
    permission that does not exist is logged and skipped. Idempotent; a permission added to a
    group by hand is removed (the mapping is the source of truth)."""
    for app_config in global_apps.get_app_configs():
        create_permissions(app_config, verbosity=0, using=using)
    counts: dict[str, int] = {}
    for spec in specs:
        group, _ = Group.objects.using(using).get_or_create(name=spec.name)
        wanted, missing = _group_permissions(spec, using=using)
        if missing:
            logger.warning("group %s: permissions not found, skipped: %s", spec.name, ", ".join(missing))
        group.permissions.set(wanted)
        counts[spec.name] = len({p.pk for p in wanted})
    return counts


# --- staff API tokens -------------------------------------------------------------------------

TOKEN_PREFIX = "zst_"


class TokenInvalid(ValueError):
    """A token cannot be created for this user (not active staff) or with this expiry."""


def _token_key() -> bytes:
    base = str(getattr(settings, "STAFF_TOKEN_HASH_KEY", "") or settings.SECRET_KEY)
    return hmac.new(base.encode(), b"zolsearch-staff-token-v1", hashlib.sha256).digest()


def token_digest(token: str) -> str:
    """HMAC-SHA-256 hex (64 characters) of ``token`` under the key derived from
    ``STAFF_TOKEN_HASH_KEY`` (default ``SECRET_KEY``). A keyed fast hash suffices: the secret part
    has 256 random bits, so there is nothing to guess (no password stretching needed); the key
    keeps a stolen table useless without the settings. Changing the key invalidates every token."""
    return hmac.new(_token_key(), token.encode(), hashlib.sha256).hexdigest()


@transaction.atomic
def staff_token_create(
    *, user: AbstractBaseUser, name: str, created_by: str, expires_at: datetime | None = None
) -> tuple[StaffToken, str]:
    """A new token of ``user`` and its plain text (``zst_<8 hex>_<43 url-safe characters>``),
    which is returned here once and never stored. Raises :class:`TokenInvalid` when the user is
    not active staff or ``expires_at`` has passed."""
    if not (user.is_active and getattr(user, "is_staff", False)):
        raise TokenInvalid(f"{user} is not an active staff user")
    if expires_at is not None and expires_at <= timezone.now():
        raise TokenInvalid("the expiry date has already passed")
    while True:
        prefix = secrets.token_hex(4)
        if not StaffToken.objects.filter(prefix=prefix).exists():
            break
    plain = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    token = StaffToken(
        user=user,  # type: ignore[misc]
        name=name.strip()[:100],
        prefix=prefix,
        digest=token_digest(plain),
        created_by=created_by[:150],
        expires_at=expires_at,
    )
    token.full_clean()
    token.save()
    return token, plain


def staff_tokens_revoke(*, token_ids: Iterable[int]) -> int:
    """Revoke the tokens ``token_ids`` (those not revoked yet); returns how many. A revoked token
    is refused from its next request on; the row stays for the record."""
    return StaffToken.objects.filter(pk__in=list(token_ids), revoked_at__isnull=True).update(revoked_at=timezone.now())


def staff_token_authenticate(*, token: str) -> AbstractBaseUser | None:
    """The user of the bearer ``token``, or None when it is malformed, unknown, revoked,
    expired, or its user is no longer active staff. Constant-time digest comparison. Touches
    ``last_used_at`` at most once per ``STAFF_TOKEN_TOUCH_S`` seconds (default 60)."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 100:
        return None
    prefix = token[len(TOKEN_PREFIX) : len(TOKEN_PREFIX) + 8]
    row = StaffToken.objects.select_related("user").filter(prefix=prefix).first()
    if row is None or not hmac.compare_digest(row.digest, token_digest(token)) or not row.active:
        return None
    user = row.user
    if not (user.is_active and user.is_staff):
        return None
    now = timezone.now()
    touch_s = int(getattr(settings, "STAFF_TOKEN_TOUCH_S", 60))
    if row.last_used_at is None or now - row.last_used_at >= timedelta(seconds=touch_s):
        StaffToken.objects.filter(pk=row.pk).update(last_used_at=now)
    return user


# --- rate limits ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateDecision:
    """One request counted against a limit of ``limit`` requests per window: ``hits`` (≥ 1)
    in the current window including this one; ``retry_after_s`` (≥ 1): seconds until the window
    ends, which is when a refused client may ask again."""

    allowed: bool
    hits: int
    limit: int
    retry_after_s: int


_UPSERT = f"""
INSERT INTO {RateCounter._meta.db_table} AS counter (key, window_start, hits) VALUES (%s, %s, 1)
ON CONFLICT (key) DO UPDATE SET
    hits = CASE WHEN EXCLUDED.window_start > counter.window_start THEN 1 ELSE counter.hits + 1 END,
    window_start = GREATEST(counter.window_start, EXCLUDED.window_start)
RETURNING hits, window_start
"""  # noqa: S608 (the table name is ours, the values are parameters)

PURGE_PROBABILITY = 0.01  # share of first-in-window requests that also delete stale counters


def rate_limit_hit(*, scope: str, client: str, limit: int, window_s: int, now: datetime | None = None) -> RateDecision:
    """Count one request of ``client`` (a fingerprint, never an address) against ``limit``
    requests per fixed window of ``window_s`` seconds (windows aligned to the epoch) in
    ``scope`` (e.g. ``"search"``).

    One ``INSERT … ON CONFLICT … RETURNING`` on the UNLOGGED table of :class:`RateCounter`: atomic,
    so every web process (gunicorn workers, several machines on one database) shares the count,
    and one round trip on the search path. Refused requests count too (a client that keeps
    hammering stays refused until the window ends). About one first-in-window request in a
    hundred also deletes counters of windows that ended (:func:`rate_counters_purge`).
    Raises ``django.db.DatabaseError`` when the database is unreachable (the caller decides).
    """
    now = now or timezone.now()
    epoch_s = now.timestamp()
    window_start = datetime.fromtimestamp(epoch_s - epoch_s % window_s, tz=now.tzinfo)
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT, [f"{scope}:{client}"[:100], window_start])
        hits, stored_start = cursor.fetchone()
    retry_after_s = max(1, math.ceil((stored_start + timedelta(seconds=window_s) - now).total_seconds()))
    if hits == 1 and random.random() < PURGE_PROBABILITY:
        rate_counters_purge(before=window_start - timedelta(days=1))  # longer than any window
    return RateDecision(allowed=hits <= limit, hits=hits, limit=limit, retry_after_s=retry_after_s)


def rate_counters_purge(*, before: datetime) -> int:
    """Delete counters whose window started before ``before`` (they count nothing any more, and
    their fingerprints' keys have rotated away); returns how many. ``before`` should be at least
    the longest window ago."""
    deleted, _ = RateCounter.objects.filter(window_start__lt=before).delete()
    return deleted


# --- audit ------------------------------------------------------------------------------------


def audit_answers_viewed(*, user: Any, answer_ids: Iterable[int], where: str) -> AuditEntry | None:
    """Record that ``user`` saw the answers ``answer_ids`` on screen ``where``; one row per call
    (ids deduplicated, order kept). None when there were no ids (an empty list page) or no
    user. ``where``: at most 100 characters (longer is cut)."""
    ids = list(dict.fromkeys(int(i) for i in answer_ids))
    if not ids or user is None or isinstance(user, AnonymousUser):
        return None
    entry = AuditEntry(
        user=user if getattr(user, "pk", None) else None,
        username=str(user.get_username())[:150],
        action=AuditEntry.Action.ANSWERS_VIEWED,
        where=where[:100],
        answer_ids=ids,
    )
    entry.full_clean()
    entry.save()
    return entry
