"""Admin of staff API tokens (create: shown once; revoke) and of the audit trail of answer views
(read-only)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.db.models import ForeignKey, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from core.admin_runs import AuditAdmin
from zolsearch.access.models import AuditEntry, StaffToken
from zolsearch.access.services import staff_token_create, staff_tokens_revoke


class StaffTokenForm(forms.ModelForm):
    """A new token: whose (an active staff user), what for, and an optional expiry."""

    class Meta:
        model = StaffToken
        fields = ["user", "name", "expires_at"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        user = data.get("user")
        if user is not None and not (user.is_active and user.is_staff):
            self.add_error("user", _("Tokens are for active staff users only."))
        expires_at = data.get("expires_at")
        if expires_at is not None and expires_at <= timezone.now():
            self.add_error("expires_at", _("The expiry must lie in the future."))
        return data


@admin.register(StaffToken)
class StaffTokenAdmin(admin.ModelAdmin):
    """Staff API tokens. A staff user with the token permissions sees and manages their own
    tokens; a superuser sees everyone's and may create one for any staff user. The token is
    shown once, on the page that follows its creation, and never again (only its digest is
    kept). Tokens are revoked, never deleted, so the record of who had access stays."""

    form = StaffTokenForm
    list_display = ("name", "user", "token_prefix", "state", "created_at", "expires_at", "last_used_at")
    list_filter = ("revoked_at",)
    list_select_related = ("user",)
    search_fields = ("name", "user__username", "prefix")
    actions = ["revoke"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[StaffToken]:
        queryset = super().get_queryset(request)
        return queryset if request.user.is_superuser else queryset.filter(user=request.user)

    def formfield_for_foreignkey(self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any) -> Any:
        if db_field.name == "user":
            users = get_user_model().objects.filter(is_active=True, is_staff=True)
            kwargs["queryset"] = users if request.user.is_superuser else users.filter(pk=request.user.pk or 0)
            kwargs.setdefault("initial", request.user.pk)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: StaffToken | None = None) -> Any:
        if obj is None:
            return ()
        return ("user", "name", "token_prefix", "created_by", "created_at", "expires_at", "last_used_at", "revoked_at")

    def get_fields(self, request: HttpRequest, obj: StaffToken | None = None) -> Any:
        return ["user", "name", "expires_at"] if obj is None else list(self.get_readonly_fields(request, obj))

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @admin.display(description=_("token"))
    def token_prefix(self, obj: StaffToken) -> str:
        return f"zst_{obj.prefix}_…"

    @admin.display(description=_("state"))
    def state(self, obj: StaffToken) -> str:
        if obj.revoked_at is not None:
            return str(_("revoked"))
        return str(_("active") if obj.active else _("expired"))

    def save_model(self, request: HttpRequest, obj: StaffToken, form: forms.ModelForm, change: bool) -> None:
        if change:
            return  # nothing of a token is edited; revoke it instead
        created, plain = staff_token_create(
            user=form.cleaned_data["user"],
            name=form.cleaned_data["name"],
            expires_at=form.cleaned_data.get("expires_at"),
            created_by=request.user.get_username(),
        )
        obj.pk, obj.prefix, obj.digest, obj.created_at = created.pk, created.prefix, created.digest, created.created_at
        obj.created_by = created.created_by
        obj._state.adding = False
        request._staff_token_plain = plain  # type: ignore[attr-defined]  # for response_add only

    def response_add(self, request: HttpRequest, obj: StaffToken, post_url_continue: str | None = None) -> HttpResponse:
        plain = getattr(request, "_staff_token_plain", None)
        if plain is None:
            return super().response_add(request, obj, post_url_continue)
        context = {
            **self.admin_site.each_context(request),
            "title": _("Staff API token created"),
            "opts": self.opts,
            "token": obj,
            "plain": plain,
        }
        response = TemplateResponse(request, "admin/access/stafftoken/created.html", context)
        response["Cache-Control"] = "no-store"  # the page holds a secret
        return response

    @admin.action(description=_("Revoke the selected tokens"), permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[StaffToken]) -> None:
        revoked = staff_tokens_revoke(token_ids=queryset.values_list("pk", flat=True))
        self.message_user(
            request,
            ngettext("%(count)d token revoked.", "%(count)d tokens revoked.", revoked) % {"count": revoked},
            level=messages.SUCCESS,
        )


@admin.register(AuditEntry)
class AuditEntryAdmin(AuditAdmin):
    """Who viewed patients' answers, when and where (read-only; superusers by default: no group
    holds ``view_auditentry``). Who saw one answer: ``AuditEntry.objects.filter(answer_ids__contains=[pk])``."""

    list_display = ("at", "username", "action", "where", "answers_shown")
    list_filter = ("action", "where")
    search_fields = ("username",)
    date_hierarchy = "at"
    readonly_fields = ("at", "user", "username", "action", "where", "answer_ids")

    @admin.display(description=_("answers"))
    def answers_shown(self, obj: AuditEntry) -> int:
        return len(obj.answer_ids)
