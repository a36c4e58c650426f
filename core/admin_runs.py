"""Admin pieces the apps share: read-only admins for ingested and computed rows, and what every
background-run kind shares (ingestion runs, evaluation runs, SNOMED CT imports, studies)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.auth import get_permission_codename
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from core.runs import BackgroundRun

if TYPE_CHECKING:
    _AdminBase = admin.ModelAdmin
else:
    _AdminBase = object


class ReadOnlyAdmin(admin.ModelAdmin):
    """Ingested and computed rows: listed and shown, never added or edited through the admin."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class AuditAdmin(ReadOnlyAdmin):
    """Records that must stay as they were written (audit trails, imported terminology): not
    deleted through the admin either."""

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class BackgroundRunAdminMixin(_AdminBase):
    """For the admin of a :class:`core.runs.BackgroundRun` model, placed before
    ``admin.ModelAdmin``:

    - ``progress``: a list column, a ``<progress>`` bar with ``done / total`` and the percentage;
    - read-only detail: an existing run is never edited (``has_change_permission`` is False for
      an object), and ``run_readonly_fields`` lists the run machinery's fields;
    - ``run_again``: an admin action (add ``"run_again"`` to ``actions``) that hands the selected
      ids to :meth:`runs_relaunch`, which calls the run kind's service (new PENDING runs, queued
      after commit), and reports with ``message_user``. It is offered and executed only for
      users with the model's *add* permission (:meth:`has_run_again_permission`). Errors listed
      in ``run_again_errors`` (a refused configuration, a vanished folder) become an error
      message; ``run_again_description`` is the action's label.
    """

    run_readonly_fields = (
        "status",
        "total",
        "done",
        "error",
        "worker",
        "code_version",
        "created_at",
        "started_at",
        "finished_at",
    )
    run_again_description = _("Run again")
    run_again_errors: tuple[type[Exception], ...] = ()

    @admin.display(description=_("progress"))
    def progress(self, obj: BackgroundRun) -> str:
        return format_html(
            '<progress value="{}" max="{}" title="{} / {}"></progress> {}%',
            obj.done,
            obj.total or 1,
            obj.done,
            obj.total,
            obj.progress_percent,
        )

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """An existing run is read-only (its page shows it, never edits it)."""
        return obj is None and super().has_change_permission(request, obj)

    def has_run_again_permission(self, request: HttpRequest) -> bool:
        """Running again creates runs: it needs the right to add runs of this kind (e.g.
        ``evaluation.add_evaluationrun``)."""
        opts = self.opts
        return request.user.has_perm(f"{opts.app_label}.{get_permission_codename('add', opts)}")

    def runs_relaunch(self, request: HttpRequest, *, run_ids: list[int]) -> Sequence[BackgroundRun]:
        """Call the run kind's service: one new queued run per id; returns the new runs."""
        raise NotImplementedError

    @admin.action(description=_("Run again"), permissions=["run_again"])
    def run_again(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        try:
            runs = self.runs_relaunch(request, run_ids=list(queryset.values_list("pk", flat=True)))
        except self.run_again_errors as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return
        self.message_user(
            request,
            _("%(kinds)s queued: %(ids)s; refresh this page to follow their progress.")
            % {"kinds": capfirst(self.opts.verbose_name_plural), "ids": ", ".join(str(r.pk) for r in runs)},
        )

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        """The ``run_again`` action labelled with ``run_again_description``."""
        actions = super().get_actions(request)
        entry = actions.get("run_again")
        if entry is not None:
            func, name, _description = entry
            actions["run_again"] = (func, name, str(self.run_again_description))
        return actions
