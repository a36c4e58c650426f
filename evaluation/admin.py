"""Admin for evaluators: golden sets (import, edit, version, export), evaluation runs (start,
follow, read, compare), per-question results, and the judgements of served answers.

Computed rows (runs, results, judgements) are read-only. Actions collect ids, call a service
and report with ``message_user``.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from core.admin_runs import BackgroundRunAdminMixin
from evaluation.golden.io import GoldenFormatError, golden_jsonl_read, golden_jsonl_write
from evaluation.metrics.stats import mcnemar
from evaluation.models import EvaluationResult, EvaluationRun, GoldenQuestion, GoldenSet, Judgement
from evaluation.selectors import run_results, runs_compare
from evaluation.services.golden import (
    GoldenSetFrozen,
    golden_set_import,
    golden_set_items,
    golden_set_latest,
    golden_set_new_version,
    golden_set_rehash,
)
from evaluation.services.runs import RunConfigInvalid, evaluation_runs_relaunch, evaluation_runs_start

HEADLINE = (
    ("passed", "pass rate (composite)"),
    ("passed_er", "pass rate (ER-only)"),
    ("refusal_correct", "refusal accuracy"),
    ("refused", "explicitly refused (guard, red flag)"),
    ("fallback", "fallback (gate rejection, no results)"),
    ("red_flag_correct", "red-flag accuracy"),
    ("entity_recall", "entity recall"),
    ("ndcg_at_5", "NDCG@5"),
    ("mrr", "MRR"),
    ("precision_at_5", "P@5"),
    ("recall_at_5", "R@5"),
    ("faithfulness", "faithfulness"),
    ("relevancy", "answer relevancy"),
)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


class ReadOnlyAdmin(admin.ModelAdmin):
    """Computed rows: no add, no edit."""

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class GoldenQuestionInline(admin.TabularInline):
    """Questions of a set: editable while no run has used the version, read-only after."""

    model = GoldenQuestion
    extra = 0
    fields = (
        "position",
        "qid",
        "question",
        "language",
        "category",
        "expected_entities",
        "expected_urls",
        "must_refuse",
        "tags",
        "notes",
    )

    def _editable(self, obj: GoldenSet | None) -> bool:
        return obj is not None and not obj.frozen

    def has_add_permission(self, request: HttpRequest, obj: GoldenSet | None = None) -> bool:
        return self._editable(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: GoldenSet | None = None) -> bool:
        return self._editable(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: GoldenSet | None = None) -> bool:
        return self._editable(obj) and super().has_delete_permission(request, obj)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return True


class GoldenImportForm(forms.Form):
    """Upload a JSONL file as a golden set (a new version when the latest one is frozen)."""

    name = forms.SlugField(max_length=100, help_text="Set name, e.g. 'medquad-heldout'. Existing name → new version.")
    file = forms.FileField(help_text="JSONL: one question per line (qid, question, language, category, …).")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


@admin.register(GoldenSet)
class GoldenSetAdmin(admin.ModelAdmin):
    list_display = ("name", "version", "frozen", "question_count", "run_total", "short_hash", "updated_at")
    list_filter = ("frozen", "name")
    search_fields = ("name", "description")
    inlines = [GoldenQuestionInline]
    actions = ["start_run", "new_version", "export_jsonl"]
    change_list_template = "admin/evaluation/goldenset/change_list.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[GoldenSet]:
        return super().get_queryset(request).annotate(run_total=Count("runs"))

    def get_readonly_fields(self, request: HttpRequest, obj: GoldenSet | None = None):
        computed = ("version", "frozen", "content_hash", "question_count", "created_at", "updated_at")
        if obj is None:
            return computed
        if obj.frozen:
            return ("name", "description", "source", *computed)
        return ("name", *computed)

    @admin.display(description="runs", ordering="run_total")
    def run_total(self, obj: GoldenSet) -> int:
        return obj.run_total  # type: ignore[attr-defined]

    @admin.display(description="content hash")
    def short_hash(self, obj: GoldenSet) -> str:
        return obj.content_hash[:12]

    def save_model(self, request: HttpRequest, obj: GoldenSet, form: Any, change: bool) -> None:
        if not change:
            latest = golden_set_latest(name=obj.name)
            obj.version = latest.version + 1 if latest else 1
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        if not form.instance.frozen:
            golden_set_rehash(golden_set=form.instance)

    def has_start_run_permission(self, request: HttpRequest) -> bool:
        """Starting a run needs the right to add evaluation runs (evaluators)."""
        return request.user.has_perm("evaluation.add_evaluationrun")

    @admin.action(description="Start an evaluation run (queued for the worker)", permissions=["start_run"])
    def start_run(self, request: HttpRequest, queryset: QuerySet[GoldenSet]) -> None:
        try:
            runs = evaluation_runs_start(
                golden_set_ids=list(queryset.values_list("id", flat=True)), created_by=request.user.get_username()
            )
        except RunConfigInvalid as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return
        if not runs:
            self.message_user(request, "No run started: the selected sets have no questions.", level=messages.WARNING)
            return
        links = ", ".join(str(r.pk) for r in runs)
        self.message_user(request, f"Queued evaluation run(s) {links}; the run list shows their progress.")

    @admin.action(description="Make a new editable version", permissions=["add"])
    def new_version(self, request: HttpRequest, queryset: QuerySet[GoldenSet]) -> None:
        made = [golden_set_new_version(golden_set=s) for s in queryset]
        self.message_user(request, "Editable: " + ", ".join(str(s) for s in made))

    @admin.action(description="Export as JSONL (one set)", permissions=["view"])
    def export_jsonl(self, request: HttpRequest, queryset: QuerySet[GoldenSet]) -> HttpResponse | None:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one set to export.", level=messages.WARNING)
            return None
        golden_set = queryset.get()
        response = HttpResponse(content_type="application/x-ndjson; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{golden_set.name}-v{golden_set.version}.jsonl"'
        golden_jsonl_write(golden_set_items(golden_set=golden_set), response)  # type: ignore[arg-type]
        return response

    def get_urls(self):
        extra = [
            path(
                "import/",
                self.admin_site.admin_view(self.import_view),
                name="evaluation_goldenset_import",
            )
        ]
        return extra + super().get_urls()

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload form: JSONL → golden set version; errors name the file line. Needs the right
        to add golden sets (403 otherwise)."""
        if not self.has_add_permission(request):
            raise PermissionDenied("importing a golden set needs the 'add golden set' permission")
        form = GoldenImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                text = upload.read().decode("utf-8")
                items = golden_jsonl_read(text.splitlines(keepends=True), name=upload.name)
                golden_set, action = golden_set_import(
                    name=form.cleaned_data["name"],
                    items=items,
                    description=form.cleaned_data["description"],
                    source=f"uploaded {upload.name}",
                )
            except UnicodeDecodeError:
                form.add_error("file", "The file is not UTF-8 text.")
            except (GoldenFormatError, ValueError, ValidationError) as exc:
                form.add_error("file", str(exc))
            except IntegrityError:
                form.add_error("name", "Another import of this set ran at the same moment; import again.")
            else:
                self.message_user(request, f"{golden_set}: {action}, {golden_set.question_count} questions.")
                return HttpResponseRedirect(reverse("admin:evaluation_goldenset_change", args=[golden_set.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": "Import a golden set (JSONL)",
        }
        return TemplateResponse(request, "admin/evaluation/goldenset/import.html", context)

    def changeform_view(
        self, request: HttpRequest, object_id: str | None = None, form_url: str = "", extra_context=None
    ):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except GoldenSetFrozen as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return HttpResponseRedirect(request.path)


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

    @admin.display(description="pass", ordering="pass_rate")
    def pass_rate_pct(self, obj: EvaluationRun) -> str:
        return _percent(obj.pass_rate)

    @admin.display(description="pass (ER-only)", ordering="pass_rate_er")
    def pass_rate_er_pct(self, obj: EvaluationRun) -> str:
        return _percent(obj.pass_rate_er)

    @admin.display(description="entity recall", ordering="entity_recall")
    def entity_recall_fmt(self, obj: EvaluationRun) -> str:
        return "—" if obj.entity_recall is None else f"{obj.entity_recall:.3f}"

    @admin.display(description="NDCG@5", ordering="ndcg_at_5")
    def ndcg_fmt(self, obj: EvaluationRun) -> str:
        return "—" if obj.ndcg_at_5 is None else f"{obj.ndcg_at_5:.3f}"

    @admin.display(description="p95 ms")
    def latency_p95(self, obj: EvaluationRun) -> str:
        value = (obj.metrics.get("latency_ms") or {}).get("p95")
        return "—" if value is None else f"{value:.0f}"

    def has_rerun_permission(self, request: HttpRequest) -> bool:
        """Running again needs the right to add evaluation runs (evaluators)."""
        return request.user.has_perm("evaluation.add_evaluationrun")

    @admin.action(description="Compare the two selected runs", permissions=["view"])
    def compare(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> HttpResponse | None:
        ids = sorted(queryset.values_list("id", flat=True))
        if len(ids) != 2:
            self.message_user(request, "Select exactly two runs to compare.", level=messages.WARNING)
            return None
        return HttpResponseRedirect(reverse("admin:evaluation_evaluationrun_compare", args=ids))

    @admin.action(description="Run again with the same set version and configuration", permissions=["rerun"])
    def run_again(self, request: HttpRequest, queryset: QuerySet[EvaluationRun]) -> None:
        try:
            runs = evaluation_runs_relaunch(
                run_ids=list(queryset.values_list("id", flat=True)), created_by=request.user.get_username()
            )
        except RunConfigInvalid as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return
        self.message_user(request, f"Queued run(s) {', '.join(str(r.pk) for r in runs)}.")

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
            "title": f"Evaluation run {run.pk}: {run.golden_set}",
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
            self.message_user(request, "One of the runs no longer exists.", level=messages.ERROR)
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
            "title": f"Compare run {a.pk} and run {b.pk}",
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

    title = "run"
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

    @admin.display(description="qid", ordering="question__qid")
    def qid(self, obj: EvaluationResult) -> str:
        return obj.question.qid

    @admin.display(description="question")
    def short_question(self, obj: EvaluationResult) -> str:
        text = obj.question.question
        return text if len(text) <= 80 else text[:79] + "…"


@admin.register(Judgement)
class JudgementAdmin(ReadOnlyAdmin):
    """Background judgements of served answers: low scores first to review."""

    list_display = (
        "created_at",
        "short_question",
        "judge_key",
        "status",
        "faithfulness",
        "relevancy",
        "cached",
        "truncated",
        "latency_ms",
    )
    list_filter = ("status", "judge_key", "cached", "truncated", "answer__outcome", "answer__channel")
    list_select_related = ("answer",)
    search_fields = ("answer__question", "answer__answer")
    ordering = ("faithfulness", "-created_at")

    @admin.display(description="question")
    def short_question(self, obj: Judgement) -> str:
        text = obj.answer.question
        return text if len(text) <= 80 else text[:79] + "…"
