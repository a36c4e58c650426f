"""Admin of the scheduled monitoring: drift alerts (acknowledge), drift checks and retention
purges. All three are records: never added or edited here; checks and purges never deleted.
The schedules themselves are django-celery-beat's *Periodic tasks*."""

from __future__ import annotations

import json

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from core.admin_runs import AuditAdmin
from evaluation.monitoring.models import DriftAlert, DriftCheck, RetentionPurge
from evaluation.monitoring.services import drift_alerts_acknowledge


def _json(value: object) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False, default=str))


class DriftAlertInline(admin.TabularInline):
    model = DriftAlert
    fields = ("metric", "value", "threshold", "current", "baseline", "p_value", "acknowledged_by", "acknowledged_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(DriftAlert)
class DriftAlertAdmin(AuditAdmin):
    """Open alerts first; the *acknowledge* action needs the change permission on drift alerts."""

    list_display = (
        "created_at",
        "metric",
        "value",
        "threshold",
        "current",
        "baseline",
        "p_value",
        "window",
        "acknowledged_by",
        "acknowledged_at",
    )
    list_filter = ("metric", ("acknowledged_at", admin.EmptyFieldListFilter), "created_at")
    list_select_related = ("check_run",)
    ordering = ("-created_at", "-id")
    actions = ["acknowledge"]
    readonly_fields = (
        "check_run",
        "metric",
        "window_start",
        "window_end",
        "value",
        "threshold",
        "current",
        "baseline",
        "p_value",
        "details_pretty",
        "created_at",
        "acknowledged_by",
        "acknowledged_at",
    )
    exclude = ("details",)

    @admin.display(description=_("window"))
    def window(self, obj: DriftAlert) -> str:
        return f"{obj.window_start:%Y-%m-%d %H:%M} – {obj.window_end:%Y-%m-%d %H:%M}"

    @admin.display(description=_("details"))
    def details_pretty(self, obj: DriftAlert) -> str:
        return _json(obj.details)

    def has_acknowledge_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("monitoring.change_driftalert")

    @admin.action(description=_("Acknowledge the selected alerts"), permissions=["acknowledge"])
    def acknowledge(self, request: HttpRequest, queryset: QuerySet[DriftAlert]) -> None:
        changed = drift_alerts_acknowledge(
            alert_ids=list(queryset.values_list("pk", flat=True)), user_name=request.user.get_username()
        )
        self.message_user(
            request,
            ngettext("Acknowledged %(n)d alert.", "Acknowledged %(n)d alerts.", changed) % {"n": changed},
            level=messages.SUCCESS if changed else messages.WARNING,
        )


@admin.register(DriftCheck)
class DriftCheckAdmin(AuditAdmin):
    """Every drift check with what it computed, alerts or not."""

    list_display = ("created_at", "window_end", "answers", "baseline_answers", "alert_count", "webhook", "trigger")
    list_filter = ("trigger", "webhook", "created_at")
    ordering = ("-created_at", "-id")
    inlines = [DriftAlertInline]
    readonly_fields = (
        "created_at",
        "trigger",
        "window_start",
        "window_end",
        "baseline_start",
        "answers",
        "baseline_answers",
        "alert_count",
        "results_table",
        "webhook",
        "webhook_error",
    )
    exclude = ("results",)

    @admin.display(description=_("results"))
    def results_table(self, obj: DriftCheck) -> str:
        def number(value: object, spec: str) -> str:
            return "–" if value is None else format(value, spec)

        cells = "<tr>" + "<td>{}</td>" * 8 + "</tr>"
        rows = format_html_join(
            "",
            cells,
            (
                (
                    metric,
                    number(r.get("value"), ".4f"),
                    r.get("threshold"),
                    number(r.get("current"), ".4f"),
                    number(r.get("baseline"), ".4f"),
                    f"{r.get('n_current')} / {r.get('n_baseline')}",
                    number(r.get("p_value"), ".3g"),
                    _("alert") if r.get("exceeded") else (r.get("skipped") or _("ok")),
                )
                for metric, r in obj.results.items()
            ),
        )
        header = format_html_join(
            "",
            "<th>{}</th>",
            (
                (label,)
                for label in (
                    _("metric"),
                    _("value"),
                    _("threshold"),
                    _("current"),
                    _("baseline"),
                    _("n (window / baseline)"),
                    _("p-value"),
                    _("result"),
                )
            ),
        )
        return format_html("<table><tr>{}</tr>{}</table>", header, rows)


@admin.register(RetentionPurge)
class RetentionPurgeAdmin(AuditAdmin):
    """What each retention purge deleted, per table."""

    list_display = ("started_at", "cutoff", "retention_days", "status", "total_deleted", "batches", "trigger")
    list_filter = ("status", "trigger")
    ordering = ("-started_at", "-id")
    readonly_fields = (
        "started_at",
        "finished_at",
        "trigger",
        "cutoff",
        "retention_days",
        "batch_size",
        "status",
        "counts_pretty",
        "batches",
        "error",
    )
    exclude = ("counts",)

    @admin.display(description=_("rows deleted"))
    def total_deleted(self, obj: RetentionPurge) -> int:
        return obj.total

    @admin.display(description=_("rows deleted per table"))
    def counts_pretty(self, obj: RetentionPurge) -> str:
        return _json(obj.counts)
