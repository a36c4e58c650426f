"""Calibration in the admin: a form that calibrates the gate on chosen evaluation runs (and the
review queue's labels) with the evaluator's maximum false-refusal rate; the calibration page
(the TPR/FPR curve over the 0.20–0.91 sweep, the chosen point and Youden's optimum, cohort
percentiles, the targets and why they are or are not met, the history); activate and retire with
a reason (audited, frozen into each request's configuration)."""

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

from core.admin_runs import AuditAdmin
from evaluation.models import Calibration, CalibrationChange, EvaluationRun
from evaluation.review.selectors import calibration_labels
from evaluation.services.calibration import (
    TARGET_FALSE_REFUSAL,
    CalibrationInvalid,
    calibrate_from_runs,
    calibration_activate,
    calibration_retire,
)
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.services import FlagInvalid

CHART_WIDTH, CHART_HEIGHT, SWEEP_LOW, SWEEP_HIGH = 480, 240, 0.20, 0.91


class CalibrationForm(forms.ModelForm):
    """What an evaluator chooses: the runs whose stored answers make the cohorts, the languages,
    and the largest share of good answers the gate may refuse."""

    runs = forms.ModelMultipleChoiceField(
        queryset=EvaluationRun.objects.filter(
            status=EvaluationRun.Status.SUCCEEDED, study_configuration__isnull=True
        ).select_related("golden_set"),
        widget=forms.CheckboxSelectMultiple,
        help_text=_(
            "Succeeded evaluation runs of the live embedding model: their answers and judgements are the "
            "cohorts. Use dev sets; keep held-out sets to check the result."
        ),
    )
    languages = forms.CharField(
        required=False,
        help_text=_("Comma separated, e.g. 'nl, en'; empty: every language with answers."),
    )
    pooled = forms.BooleanField(
        required=False,
        label=_("also for every language pooled"),
        help_text=_(
            "Adds a row for language '*' made from the answers of every language together: the gate uses it "
            "for a language without an active row of its own (too few answers, e.g. French or Turkish)."
        ),
    )

    class Meta:
        model = Calibration
        fields = ["max_false_refusal"]
        help_texts = {
            "max_false_refusal": _(
                # xgettext:no-python-format
                "Between 0 and 1: 0.05 lets the gate refuse at most 5 % of the answers the judge "
                "or a reviewer rated good. The threshold is the strictest one within this limit."
            )
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["max_false_refusal"].initial = TARGET_FALSE_REFUSAL
        self.fields["runs"].label_from_instance = lambda run: (  # type: ignore[attr-defined]
            _("run %(id)s: %(set)s · %(label)s · %(model)s · %(finished)s")
            % {
                "id": run.pk,
                "set": run.golden_set,
                "label": run.label or _("no label"),
                "model": run.embedding_model,
                "finished": f"{run.finished_at:%Y-%m-%d %H:%M}",
            }
            if run.finished_at
            else _("run %(id)s: %(set)s") % {"id": run.pk, "set": run.golden_set}
        )

    def clean_languages(self) -> list[str]:
        return [part.strip() for part in str(self.cleaned_data.get("languages") or "").split(",") if part.strip()]


class CalibrationActionForm(forms.Form):
    """Activate or retire a calibration: the reason is kept in its history."""

    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2, "cols": 60}), max_length=2000)


@admin.register(Calibration)
class CalibrationAdmin(admin.ModelAdmin):
    """Calibrations per scorer, embedding model and language; the add form calibrates now."""

    form = CalibrationForm
    list_display = (
        "id",
        "scorer",
        "language",
        "model_key",
        "status",
        "threshold",
        "context_weight",
        "false_refusal",
        "negatives_refused",
        "roc_auc",
        "positives",
        "negatives",
        "created_at",
    )
    list_filter = ("status", "scorer", "language", "model_key")
    fields = ("runs", "languages", "pooled", "max_false_refusal")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Calibration]:
        return super().get_queryset(request).defer("curve", "evidence")

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False if obj is not None else super().has_change_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: Calibration, form: forms.ModelForm, change: bool) -> None:
        """Calibrate on the chosen runs (this takes a few seconds per thousand answers: each draft and
        question is embedded once)."""
        model_key = pipeline_config_default().embedding_model
        labels = [(label.answer_id, label.positive) for label in calibration_labels(model_key=model_key)]
        try:
            rows = calibrate_from_runs(
                runs=list(form.cleaned_data["runs"]),
                model_key=model_key,
                labels=labels,
                languages=form.cleaned_data["languages"],
                max_false_refusal=float(obj.max_false_refusal),
                created_by=request.user.get_username(),
                pooled=bool(form.cleaned_data.get("pooled")),
            )
        except CalibrationInvalid as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return
        obj.pk = rows[0].pk if rows else None
        text = "; ".join(f"{r.language}: {_('none') if r.threshold is None else f'{r.threshold:.2f}'}" for r in rows)
        self.message_user(
            request,
            ngettext(
                "Proposed %(count)d calibration (%(thresholds)s). Open it to activate it.",
                "Proposed %(count)d calibrations (%(thresholds)s). Open one to activate it.",
                len(rows),
            )
            % {"count": len(rows), "thresholds": text},
        )

    def response_add(
        self, request: HttpRequest, obj: Calibration, post_url_continue: str | None = None
    ) -> HttpResponse:
        return HttpResponseRedirect(reverse("admin:evaluation_calibration_changelist"))

    def get_urls(self):
        view = self.admin_site.admin_view
        extra = [
            path("<int:pk>/activate/", view(require_POST(self.activate_view)), name="evaluation_calibration_activate"),
            path("<int:pk>/retire/", view(require_POST(self.retire_view)), name="evaluation_calibration_retire"),
        ]
        return extra + super().get_urls()

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "", extra_context=None):
        """The calibration page, read-only; activation and retirement are forms posting a reason."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        row = get_object_or_404(Calibration, pk=object_id)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("Calibration %(id)s: %(scorer)s, %(language)s, %(model)s")
            % {"id": row.pk, "scorer": row.get_scorer_display(), "language": row.language, "model": row.model_key},
            "row": row,
            "chart": curve_chart(row),
            "changes": list(row.changes.all()),
            "runs": list(
                EvaluationRun.objects.filter(pk__in=row.evidence.get("runs") or []).select_related("golden_set")
            ),
            "can_change": request.user.has_perm("evaluation.change_calibration"),
            "action_form": CalibrationActionForm(),
        }
        return TemplateResponse(request, "admin/evaluation/calibration/detail.html", context)

    def _act(self, request: HttpRequest, pk: int, *, activate: bool) -> HttpResponse:
        if not request.user.has_perm("evaluation.change_calibration"):
            raise PermissionDenied
        form = CalibrationActionForm(request.POST)
        if not form.is_valid():
            self.message_user(request, _("Say why (the reason is kept in the calibration's history)."), messages.ERROR)
        else:
            service = calibration_activate if activate else calibration_retire
            try:
                row = service(
                    calibration_id=pk, changed_by=request.user.get_username(), reason=form.cleaned_data["reason"]
                )
            except (CalibrationInvalid, FlagInvalid) as exc:
                self.message_user(request, str(exc), level=messages.ERROR)
            except Calibration.DoesNotExist:
                self.message_user(request, _("Calibration %(id)s does not exist.") % {"id": pk}, level=messages.ERROR)
            else:
                self.message_user(
                    request,
                    _("Calibration %(id)s is now %(status)s.")
                    % {"id": row.pk, "status": str(row.get_status_display()).lower()},
                )
        return HttpResponseRedirect(reverse("admin:evaluation_calibration_change", args=[pk]))

    def activate_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._act(request, pk, activate=True)

    def retire_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._act(request, pk, activate=False)


@admin.register(CalibrationChange)
class CalibrationChangeAdmin(AuditAdmin):
    """Who activated or retired which calibration, when and why."""

    list_display = ("changed_at", "calibration", "action", "old_threshold", "new_threshold", "changed_by", "reason")
    list_filter = ("action",)
    list_select_related = ("calibration",)
    search_fields = ("reason", "changed_by")


def curve_chart(row: Calibration) -> dict[str, Any]:
    """SVG coordinates of the sweep: ``tpr`` and ``fpr`` polylines (``"x,y x,y …"``), the chosen
    threshold's and Youden optimum's x, and the axis ticks; x maps a threshold in
    [0.20, 0.91] to [0, CHART_WIDTH] px, y maps a rate in [0, 1] to [CHART_HEIGHT, 0] px."""

    def x(t: float) -> float:
        return round((min(max(t, SWEEP_LOW), SWEEP_HIGH) - SWEEP_LOW) / (SWEEP_HIGH - SWEEP_LOW) * CHART_WIDTH, 1)

    def y(rate: float) -> float:
        return round((1.0 - rate) * CHART_HEIGHT, 1)

    curve = row.curve or []
    youden = (row.evidence or {}).get("youden") or {}
    return {
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "tpr": " ".join(f"{x(p['t'])},{y(p['tpr'])}" for p in curve),
        "fpr": " ".join(f"{x(p['t'])},{y(p['fpr'])}" for p in curve),
        "chosen": x(row.threshold) if row.threshold is not None else None,
        "youden": x(youden["threshold"]) if youden.get("threshold") is not None else None,
        "xticks": [{"x": x(t), "label": f"{t:.1f}"} for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)],
        "yticks": [{"y": y(r), "label": f"{r:.0%}"} for r in (0.0, 0.25, 0.5, 0.75, 1.0)],
        "points": curve,
    }
