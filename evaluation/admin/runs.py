"""Evaluation runs and their results: run pages with CIs and breakdowns, comparison (McNemar)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext_lazy as _

from core.admin_runs import BackgroundRunAdminMixin
from evaluation.admin.common import HEADLINE, ReadOnlyAdmin, _percent
from evaluation.metrics.stats import mcnemar
from evaluation.models import EvaluationResult, EvaluationRun
from evaluation.selectors import run_results, runs_compare
from evaluation.services.runs import RunConfigInvalid, evaluation_runs_relaunch


@admin.register(EvaluationRun)
class EvaluationRunAdmin(BackgroundRunAdminMixin, ReadOnlyAdmin):
    """Run list with headline metrics; the run page shows the per-category table, a chart and
    the per-question list; two selected runs can be compared side by side."""

    list_display = (
        "id",
        "golden_set",
        "label",
        "status",
        "progress",
        "pass_rate_pct",
        "pass_rate_er_pct",
        "entity_recall_fmt",
        "ndcg_fmt",
        "latency_p95",
        "judge_key",
        "created_at",
    )
    list_filter = ("status", "golden_set__name", "judge_key", "embedding_model")
    list_select_related = ("golden_set",)
    search_fields = ("label", "golden_set__name", "config_hash")
    actions = ["compare", "run_again"]
    run_again_description = _("Run again with the same set version and configuration")
    run_again_errors = (RunConfigInvalid,)

    @admin.display(description=_("pass"), ordering="pass_rate")
    def pass_rate_pct(self, obj: EvaluationRun) -> str:
        return _percent(obj.pass_rate)

    @admin.display(description=_("pass (ER-only)"), ordering="pass_rate_er")
    def pass_rate_er_pct(self, obj: EvaluationRun) -> str:
        return _percent(obj.pass_rate_er)

    @admin.display(description=_("entity recall"), ordering="entity_recall")
    def entity_recall_fmt(self, obj: EvaluationRun) -> str:
        return "—" if obj.entity_recall is None else f"{obj.entity_recall:.3f}"

    @admin.display(description=_("NDCG@5"), ordering="ndcg_at_5")
    def ndcg_fmt(self, obj: EvaluationRun) -> str:
        return "—" if obj.ndcg_at_5 is None else f"{obj.ndcg_at_5:.3f}"

    @admin.display(description=_("p95 ms"))
    def latency_p95(self, obj: EvaluationRun) -> str:
        value = (obj.metrics.get("latency_ms") or {}).get("p95")
        return "—" if value is None else f"{value:.0f}"

    @admin.action(description=_("Compare the two selected runs"), permissions=["view"])
    def compare(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> HttpResponse | None:
        ids = sorted(queryset.values_list("id", flat=True))
        if len(ids) != 2:
            self.message_user(request, _("Select exactly two runs to compare."), level=messages.WARNING)
            return None
        return HttpResponseRedirect(reverse("admin:evaluation_evaluationrun_compare", args=ids))

    def runs_relaunch(self, request: HttpRequest, *, run_ids: list[int]) -> list[EvaluationRun]:
        return evaluation_runs_relaunch(run_ids=run_ids, created_by=request.user.get_username())

    def get_urls(self):
        extra = [
            path(
                "compare/<int:left>/<int:right>/",
                self.admin_site.admin_view(self.compare_view),
                name="evaluation_evaluationrun_compare",
            )
        ]
        return extra + super().get_urls()

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context=None):
        """The run page: headline metrics with CIs, per-category and per-language tables, a bar
        chart per category, and the per-question list (``?verdict=pass|fail``)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        run = get_object_or_404(EvaluationRun.objects.select_related("golden_set"), pk=object_id)
        verdict = request.GET.get("verdict", "")
        overall = run.metrics.get("overall") or {}
        headline = [(label, overall.get(key)) for key, label in HEADLINE]
        categories = _breakdown(run.metrics.get("per_category") or {})
        languages = _breakdown(run.metrics.get("per_language") or {})
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("Evaluation run %(id)s: %(set)s") % {"id": run.pk, "set": run.golden_set},
            "run": run,
            "headline": headline,
            "categories": categories,
            "languages": languages,
            "latency": run.metrics.get("latency_ms") or {},
            "results": run_results(run=run, verdict=verdict)[:1000],
            "verdict": verdict,
            "config_items": sorted(run.config.items()),
        }
        return TemplateResponse(request, "admin/evaluation/evaluationrun/detail.html", context)

    def compare_view(self, request: HttpRequest, left: int, right: int) -> HttpResponse:
        """Two runs side by side: headline metrics, the questions that changed verdict, and
        McNemar's test on the paired verdicts."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        runs = EvaluationRun.objects.select_related("golden_set").in_bulk([left, right])
        if left not in runs or right not in runs:
            self.message_user(request, _("One of the runs no longer exists."), level=messages.ERROR)
            return HttpResponseRedirect(reverse("admin:evaluation_evaluationrun_changelist"))
        a, b = runs[left], runs[right]
        pairs = runs_compare(left=a, right=b)
        changed = [p for p in pairs if p.change in ("regressed", "recovered")]
        oa, ob = a.metrics.get("overall") or {}, b.metrics.get("overall") or {}
        rows = []
        for key, label in HEADLINE:
            va, vb = oa.get(key), ob.get(key)
            delta = vb["mean"] - va["mean"] if va and vb else None
            rows.append((label, va, vb, delta))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("Compare run %(left)s and run %(right)s") % {"left": a.pk, "right": b.pk},
            "left": a,
            "right": b,
            "rows": rows,
            "changed": changed,
            "regressed": sum(1 for p in pairs if p.change == "regressed"),
            "recovered": sum(1 for p in pairs if p.change == "recovered"),
            "mcnemar": mcnemar(
                b=sum(1 for p in pairs if p.change == "regressed"), c=sum(1 for p in pairs if p.change == "recovered")
            ),
            "same_config": a.config_hash == b.config_hash,
            "config_diff": _config_diff(a.config, b.config),
        }
        return TemplateResponse(request, "admin/evaluation/evaluationrun/compare.html", context)


def _breakdown(groups: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows for the per-category/per-language tables and the bar chart (widths in %)."""
    rows = []
    for name, group in groups.items():
        cells = {key: group.get(key) for key in ("passed", "passed_er", "entity_recall", "ndcg_at_5", "faithfulness")}
        rows.append(
            {
                "name": name,
                "n": group.get("n", 0),
                **cells,
                "pass_width": round(100 * cells["passed"]["mean"]) if cells["passed"] else 0,
                "ndcg_width": round(100 * cells["ndcg_at_5"]["mean"]) if cells["ndcg_at_5"] else 0,
            }
        )
    return rows


def _config_diff(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    return [(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


class RunListFilter(admin.SimpleListFilter):
    """The 30 latest runs, their set loaded in the same query (no query per run)."""

    title = _("run")
    parameter_name = "run"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        runs = EvaluationRun.objects.select_related("golden_set").order_by("-pk")[:30]
        return [(str(r.pk), f"{r.pk}: {r.golden_set} {r.label}".strip()) for r in runs]

    def queryset(self, request: HttpRequest, queryset: QuerySet[EvaluationResult]) -> QuerySet[EvaluationResult]:
        value = self.value()
        return queryset.filter(run_id=int(value)) if value and value.isdigit() else queryset


@admin.register(EvaluationResult)
class EvaluationResultAdmin(ReadOnlyAdmin):
    list_display = (
        "qid",
        "run",
        "short_question",
        "outcome",
        "passed",
        "passed_er",
        "entity_recall",
        "ndcg_at_5",
        "faithfulness",
        "relevancy",
        "latency_ms",
    )
    list_filter = ("passed", "passed_er", "refused", "question__category", "question__language", RunListFilter)
    list_select_related = ("question", "run__golden_set")
    search_fields = ("question__qid", "question__question", "answer_text")

    @admin.display(description=_("qid"), ordering="question__qid")
    def qid(self, obj: EvaluationResult) -> str:
        return obj.question.qid

    @admin.display(description=_("question"))
    def short_question(self, obj: EvaluationResult) -> str:
        text = obj.question.question
        return text if len(text) <= 80 else text[:79] + "…"
