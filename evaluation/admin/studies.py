"""Ablation studies in the admin: a form an evaluator fills (golden sets, the flags to vary and
their levels, the design, repetitions), the study page (configurations with CIs, McNemar against
the base, Cochran's Q, factorial effects, a chart, recommendations with an "apply" button),
CSV and Markdown export, and "resume" for a study whose worker stopped."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from core.admin_runs import BackgroundRunAdminMixin
from evaluation.ablation.design import DesignInvalid, design_build
from evaluation.ablation.report import study_csv, study_markdown
from evaluation.models import AblationStudy, GoldenSet
from evaluation.selectors import studies_with_run_counts
from evaluation.services.ablation import (
    StudyInvalid,
    ablation_recommendations_apply,
    ablation_study_create,
    ablation_study_enqueue,
    ablation_study_resume,
    factors_from_text,
    factors_validate,
)
from zolsearch.search.config import ConfigInvalid, pipeline_config_default
from zolsearch.search.models import PipelineFlag
from zolsearch.search.services import FlagInvalid


class AblationStudyForm(forms.ModelForm):
    """What an evaluator fills in to launch a study; checked (flags, levels, design) before any
    run is created."""

    sets = forms.ModelMultipleChoiceField(
        queryset=GoldenSet.objects.order_by("name", "-version"),
        widget=forms.CheckboxSelectMultiple,
        label=_("golden sets"),
        help_text=_("Each configuration is run over every chosen set version."),
    )
    flags = forms.ModelMultipleChoiceField(
        queryset=PipelineFlag.objects.filter(model_key="").order_by("name"),
        widget=forms.CheckboxSelectMultiple,
        required=False,
        label=_("factors: flags to vary"),
        help_text=_("A true/false flag is tried at its live value (the base) and the other value."),
    )
    levels = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 70}),
        label=_("levels of other factors"),
        help_text=_(
            "One per line, base level first, e.g. 'top_k: 10, 5' or 'reranker: features-lr, ' "
            "(an empty level is allowed). Flags named here need not be ticked above."
        ),
    )
    overrides = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 70}),
        label=_("base configuration changes"),
        help_text=_("Optional, one 'flag=value' per line; the base is otherwise the live configuration now."),
    )
    generators = forms.CharField(
        required=False,
        label=_("generators (fractional designs)"),
        help_text=_("e.g. 'E=ABCD'; empty: the standard minimum-aberration generators for k and p."),
    )

    class Meta:
        model = AblationStudy
        fields = ["name", "design", "fraction_p", "repetitions"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        try:
            base = pipeline_config_default()
            lines = [line.strip() for line in (data.get("overrides") or "").splitlines() if line.strip()]
            base = base.with_override_pairs(lines) if lines else base
            names = [flag.name for flag in data.get("flags") or []]
            factors = factors_validate(
                factors=factors_from_text(text=data.get("levels") or "", names=names, base=base), base=base
            )
            if not factors:
                raise StudyInvalid("choose at least one flag to vary")
            generators = [g.strip() for g in (data.get("generators") or "").split(",") if g.strip()]
            design_build(
                str(data.get("design") or "ofat"),
                [{"name": f["name"], "levels": f["levels"]} for f in factors],
                p=int(data.get("fraction_p") or 0),
                generators=generators or None,
            )
        except (StudyInvalid, ConfigInvalid, DesignInvalid) as exc:
            raise forms.ValidationError(str(exc)) from exc
        data["parsed"] = {"base": base, "factors": factors, "generators": generators or None}
        return data


@admin.register(AblationStudy)
class AblationStudyAdmin(BackgroundRunAdminMixin, admin.ModelAdmin):
    """Studies with their progress; the add form launches one (queued for the worker)."""

    form = AblationStudyForm
    list_display = (
        "id",
        "name",
        "design_description",
        "repetitions",
        "status",
        "progress",
        "runs",
        "created_by",
        "created_at",
    )
    list_filter = ("status", "design")
    search_fields = ("name",)
    actions = ["resume"]
    fieldsets = (
        (None, {"fields": ("name", "sets")}),
        (_("Factors"), {"fields": ("flags", "levels", "overrides")}),
        (_("Design"), {"fields": ("design", "fraction_p", "generators", "repetitions")}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[AblationStudy]:
        return studies_with_run_counts(super().get_queryset(request).defer("results", "base_config"))

    @admin.display(description=_("runs done / failed / all"))
    def runs(self, obj: AblationStudy) -> str:
        return f"{obj.runs_succeeded} / {obj.runs_failed} / {obj.runs_total}"  # type: ignore[attr-defined]

    def save_model(self, request: HttpRequest, obj: AblationStudy, form: forms.ModelForm, change: bool) -> None:
        parsed = form.cleaned_data["parsed"]
        study = ablation_study_create(
            name=obj.name,
            golden_sets=list(form.cleaned_data["sets"]),
            factors=parsed["factors"],
            design=obj.design,
            fraction_p=obj.fraction_p,
            generators=parsed["generators"],
            repetitions=obj.repetitions,
            base_config=parsed["base"],
            created_by=request.user.get_username(),
        )
        ablation_study_enqueue(study=study)
        obj.pk, obj.created_at = study.pk, study.created_at
        self.message_user(
            request, _("Study %(id)s queued: %(design)s.") % {"id": study.pk, "design": study.design_description}
        )

    def save_related(self, request: HttpRequest, form: forms.ModelForm, formsets: Any, change: bool) -> None:
        return None  # the service set the golden sets

    def has_resume_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("evaluation.add_ablationstudy")

    @admin.action(description=_("Resume (keeps finished runs and questions)"), permissions=["resume"])
    def resume(self, request: HttpRequest, queryset: QuerySet[AblationStudy]) -> None:
        resumed = []
        for study_id in queryset.exclude(status=AblationStudy.Status.SUCCEEDED).values_list("pk", flat=True):
            study = ablation_study_resume(study_id=study_id)
            ablation_study_enqueue(study=study)
            resumed.append(str(study_id))
        self.message_user(
            request,
            ngettext("Resumed %(count)d study: %(ids)s.", "Resumed %(count)d studies: %(ids)s.", len(resumed))
            % {"count": len(resumed), "ids": ", ".join(resumed) or _("none")},
        )

    def get_urls(self):
        view = self.admin_site.admin_view
        extra = [
            path("<int:pk>/export.csv", view(self.export_csv), name="evaluation_ablationstudy_csv"),
            path("<int:pk>/export.md", view(self.export_markdown), name="evaluation_ablationstudy_markdown"),
            path("<int:pk>/apply/", view(require_POST(self.apply_view)), name="evaluation_ablationstudy_apply"),
        ]
        return extra + super().get_urls()

    def _study(self, request: HttpRequest, pk: int | str) -> AblationStudy:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return get_object_or_404(studies_with_run_counts(AblationStudy.objects.all()), pk=pk)

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context=None):
        """The study page, read-only; everything shown comes from the stored analysis."""
        study = self._study(request, object_id)
        results = study.results or {}
        configurations = results.get("configurations") or []
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("Ablation study %(id)s: %(name)s") % {"id": study.pk, "name": study.name},
            "study": study,
            "results": results,
            "configurations": configurations,
            "chart": _chart(configurations),
            "can_apply": request.user.has_perm("evaluation.apply_recommendations"),
            "golden_sets": list(study.golden_sets.all()),
            "runs_url": reverse("admin:evaluation_evaluationrun_changelist") + f"?q=study+{study.pk}+%C2%B7",
        }
        return TemplateResponse(request, "admin/evaluation/ablationstudy/detail.html", context)

    def export_csv(self, request: HttpRequest, pk: int) -> HttpResponse:
        study = self._study(request, pk)
        response = HttpResponse(study_csv(study.results or {}), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="ablation-study-{study.pk}.csv"'
        return response

    def export_markdown(self, request: HttpRequest, pk: int) -> HttpResponse:
        study = self._study(request, pk)
        text = study_markdown(
            title=f"Ablation study {study.pk}: {study.name}",
            description=study.design_description,
            results=study.results or {},
            recommendations=study.recommendations or [],
        )
        response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="ablation-study-{study.pk}.md"'
        return response

    def apply_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """Apply the recommendations to the live flags (evaluators with the permission only)."""
        if not request.user.has_perm("evaluation.apply_recommendations"):
            raise PermissionDenied
        study = self._study(request, pk)
        try:
            changed = ablation_recommendations_apply(study=study, applied_by=request.user.get_username())
        except (StudyInvalid, FlagInvalid) as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
        else:
            text = ", ".join(changed) if changed else _("none (the live flags already match)")
            self.message_user(
                request,
                _("Applied study %(id)s's recommendations; flags changed: %(flags)s.")
                % {"id": study.pk, "flags": text},
            )
        return HttpResponseRedirect(reverse("admin:evaluation_ablationstudy_change", args=[study.pk]))


def _chart(configurations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of the pass-rate chart: bar and CI whisker positions in % of the track (0–100)."""
    rows = []
    for c in configurations:
        value = c.get("pass_rate")
        if not value:
            continue
        rows.append(
            {
                "label": c["label"],
                "mean": value["mean"],
                "width": round(100 * value["mean"], 1),
                "low": round(100 * value["low"], 1),
                "span": round(100 * (value["high"] - value["low"]), 1),
                "is_base": c["is_base"],
            }
        )
    return rows
