"""Rows of access control: staff API tokens, the audit trail of answer views and the counters of
the patient API's rate limit."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class StaffToken(models.Model):
    """A bearer token with which one staff user calls the staff API (``Authorization: Bearer …``).

    The token itself (``zst_<prefix>_<secret>``, 256 random bits in the secret) is shown once,
    when it is created, and never stored: ``digest`` is its HMAC-SHA-256 under a key derived from
    ``STAFF_TOKEN_HASH_KEY`` (hex, 64 characters), ``prefix`` (8 characters) finds the row. A
    token acts with its user's permissions, and only while the user is active staff, the token
    is not revoked (``revoked_at``) and not expired (``expires_at``; None: no expiry).
    ``last_used_at`` is written at most once a minute (``STAFF_TOKEN_TOUCH_S``).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="staff_tokens", verbose_name=_("user")
    )
    name = models.CharField(
        max_length=100, help_text=_("What the token is for, e.g. 'taxonomy sync script'."), verbose_name=_("name")
    )
    prefix = models.CharField(max_length=8, unique=True, editable=False, verbose_name=_("prefix"))
    digest = models.CharField(max_length=64, editable=False, verbose_name=_("digest"))
    created_by = models.CharField(max_length=150, blank=True, editable=False, verbose_name=_("created by"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    expires_at = models.DateTimeField(
        null=True, blank=True, help_text=_("Empty: the token does not expire."), verbose_name=_("expires at")
    )
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("last used at"))
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("revoked at"))

    class Meta:
        verbose_name = _("staff API token")
        verbose_name_plural = _("staff API tokens")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} (zst_{self.prefix}…, {self.user})"

    @property
    def active(self) -> bool:
        """Not revoked and not expired (the user's own state is checked on use)."""
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > timezone.now())


class AuditEntry(models.Model):
    """One staff user's view of patients' answers: who (``user``, and ``username`` kept if the
    account is deleted), when (``at``), where (``where``: the screen, e.g.
    ``admin:search_answer_changelist``) and which answers (``answer_ids``, the primary keys of
    ``search.Answer`` shown). One row per page view, not per answer; "who saw answer 42" is
    ``AuditEntry.objects.filter(answer_ids__contains=[42])`` (GIN index)."""

    class Action(models.TextChoices):
        ANSWERS_VIEWED = "answers_viewed", _("Answers viewed")

    at = models.DateTimeField(default=timezone.now, db_index=True, verbose_name=_("at"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+", verbose_name=_("user")
    )
    username = models.CharField(max_length=150, verbose_name=_("username"))
    action = models.CharField(
        max_length=32, choices=Action.choices, default=Action.ANSWERS_VIEWED, verbose_name=_("action")
    )
    where = models.CharField(max_length=100, verbose_name=_("where"))
    answer_ids = ArrayField(models.BigIntegerField(), default=list, verbose_name=_("answer ids"))

    class Meta:
        verbose_name = _("audit entry")
        verbose_name_plural = _("audit entries")
        ordering = ["-at"]
        indexes = [GinIndex(fields=["answer_ids"], name="access_audit_answer_ids_gin")]

    def __str__(self) -> str:
        return f"{self.username} viewed {len(self.answer_ids)} answer(s) in {self.where} at {self.at:%Y-%m-%d %H:%M}"


class RateCounter(models.Model):
    """Requests of one client in the current fixed window of one limit (``scope``).

    ``key``: ``<scope>:<client fingerprint>`` (a keyed hash of the address, never the address);
    ``window_start``: the start of the window the ``hits`` count. The table is UNLOGGED (no
    write-ahead log: cheap writes; its rows are lost after a crash of PostgreSQL, which only
    forgives the current window). Written by one ``INSERT … ON CONFLICT`` per request
    (:func:`zolsearch.access.services.rate_limit_hit`).
    """

    key = models.CharField(max_length=100, primary_key=True, verbose_name=_("key"))
    window_start = models.DateTimeField(db_index=True, verbose_name=_("window start"))
    hits = models.PositiveIntegerField(default=0, verbose_name=_("hits"))

    class Meta:
        verbose_name = _("rate counter")
        verbose_name_plural = _("rate counters")

    def __str__(self) -> str:
        return f"{self.key[:20]}…: {self.hits} since {self.window_start:%H:%M:%S}"
