"""Admin of served answers (read-only, filterable by gate result and outcome) and of the
pipeline's flags and thresholds (audited rows). Every page that shows patients' questions (the
answer list and detail, the feedback list and detail) records who saw which answers
(:func:`~zolsearch.search.services.answers_viewed`)."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _

from core.admin_runs import AuditAdmin, ReadOnlyAdmin
from zolsearch.search.config import ConfigInvalid, config_value_parse, pipeline_config_settings
from zolsearch.search.flags import FLAGS
from zolsearch.search.models import Answer, Feedback, PipelineFlag, PipelineFlagChange
from zolsearch.search.services import FlagInvalid, answers_viewed, pipeline_flag_set, pipeline_flags_ensure


class AnswersViewedAudit:
    """Mixin for an admin whose pages show answers: after the list page or an existing row's
    page rendered its rows, :func:`answers_viewed` records the answers shown (the list's page of
    rows, read from the page's own result list: no extra query), as ``admin:<app>_<model>_
    changelist`` / ``…_change``. ``answer_id_of`` maps a row to its answer's primary key."""

    def answer_id_of(self, obj: Any) -> int:
        return int(obj.pk)

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        response = super().changelist_view(request, extra_context)  # type: ignore[misc]
        changelist = getattr(response, "context_data", {}).get("cl") if response.status_code == 200 else None
        if changelist is not None:
            opts = changelist.opts
            answers_viewed(
                request.user,
                [self.answer_id_of(obj) for obj in changelist.result_list],
                f"admin:{opts.app_label}_{opts.model_name}_changelist",
            )
        return response

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        response = super().change_view(request, object_id, form_url, extra_context)  # type: ignore[misc]
        original = getattr(response, "context_data", {}).get("original") if response.status_code == 200 else None
        if original is not None:
            opts = original._meta
            answers_viewed(
                request.user, [self.answer_id_of(original)], f"admin:{opts.app_label}_{opts.model_name}_change"
            )
        return response


@admin.register(Answer)
class AnswerAdmin(AnswersViewedAudit, ReadOnlyAdmin):
    list_display = (
        "created_at",
        "short_question",
        "language",
        "outcome",
        "refusal_reason",
        "red_flag_category",
        "gate_passed",
        "gate_score",
        "generator",
        "embedding_model",
    )
    list_filter = (
        "outcome",
        "refusal_reason",
        "red_flag_category",
        "gate_passed",
        "language",
        "generator",
        "channel",
        "embedding_model",
    )
    search_fields = ("question", "answer", "trace_id")
    date_hierarchy = "created_at"
    readonly_fields = [f.name for f in Answer._meta.fields]

    @admin.display(description=_("question"))
    def short_question(self, obj: Answer) -> str:
        return Truncator(obj.question).chars(80)


def flag_text(value: Any) -> str:
    """A flag value as an evaluator types it: true/false, numbers, comma-separated lists, JSON
    objects; ``""`` for the default (``None``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


class FlagGroupFilter(admin.SimpleListFilter):
    """Flags by the stage they belong to (safety, retrieval, CRAG, …)."""

    title = _("stage")
    parameter_name = "group"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        groups = dict.fromkeys(spec.group for spec in FLAGS.values())
        return [(g, g) for g in groups]

    def queryset(self, request: HttpRequest, queryset: QuerySet[PipelineFlag]) -> QuerySet[PipelineFlag]:
        value = self.value()
        return queryset.filter(name__in=[n for n, s in FLAGS.items() if s.group == value]) if value else queryset


class PipelineFlagForm(forms.ModelForm):
    """A flag change: the new value as text (or back to the default) and the reason, which the
    history keeps. The value is checked against the pipeline's configuration on save."""

    new_value = forms.CharField(
        required=False,
        label=_("value"),
        help_text=_("true/false, a number, comma-separated words, or a JSON object, as the flag needs."),
        widget=forms.TextInput(attrs={"size": 60}),
    )
    use_default = forms.BooleanField(required=False, label=_("use the default instead"))
    reason = forms.CharField(
        label=_("reason for the change"), widget=forms.Textarea(attrs={"rows": 2, "cols": 60}), max_length=2000
    )

    class Meta:
        model = PipelineFlag
        fields: list[str] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["new_value"].initial = flag_text(self.instance.value)
        self.fields["use_default"].initial = self.instance.value is None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        name = self.instance.name
        if data.get("use_default"):
            data["parsed"] = None
            return data
        try:
            data["parsed"] = config_value_parse(name=name, raw=data.get("new_value") or "")
            pipeline_config_settings().with_overrides(**{name: data["parsed"]})
        except ConfigInvalid as exc:
            raise forms.ValidationError({"new_value": str(exc)}) from exc
        return data


@admin.register(PipelineFlag)
class PipelineFlagAdmin(admin.ModelAdmin):
    """Every feature flag and threshold of the pipeline with its current value, its default and
    who changed it last; a change needs a reason and is kept in the flag's history. Live
    requests freeze these rows into their configuration; evaluation runs and studies carry their
    own configuration and never read them."""

    form = PipelineFlagForm
    list_display = ("name", "stage", "current", "default", "model_key", "updated_by", "updated_at", "description")
    list_filter = (FlagGroupFilter,)
    search_fields = ("name",)
    readonly_fields = ("name", "model_key", "description", "default", "history")
    fields = ("name", "model_key", "description", "default", "new_value", "use_default", "reason", "history")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    _defaults: dict[str, Any] = {}

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        pipeline_flags_ensure()  # a flag added to the catalogue since the last migrate
        self._defaults = _settings_config()  # once per page, not once per row
        return super().changelist_view(request, extra_context)

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        self._defaults = _settings_config()
        return super().changeform_view(request, *args, **kwargs)

    @admin.display(description=_("stage"))
    def stage(self, obj: PipelineFlag) -> str:
        spec = FLAGS.get(obj.name)
        return spec.group if spec else str(_("(no longer a flag)"))

    @admin.display(description=_("what it does"))
    def description(self, obj: PipelineFlag) -> str:
        spec = FLAGS.get(obj.name)
        return spec.description if spec else str(_("Not used by this version of the pipeline."))

    @admin.display(description=_("history"))
    def history(self, obj: PipelineFlag) -> str:
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{} → {}</td><td>{}</td></tr>",
            (
                (c.changed_at.strftime("%Y-%m-%d %H:%M"), c.changed_by, flag_text(c.old_value) or _("(default)"),
                 flag_text(c.new_value) or _("(default)"), c.reason)
                for c in obj.changes.all()[:50]
            ),
        )  # fmt: skip
        if not rows:
            return str(_("No changes yet."))
        return format_html(
            "<table><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead><tbody>{}</tbody></table>",
            _("when"),
            _("who"),
            _("change"),
            _("reason"),
            rows,
        )

    @admin.display(description=_("value"))
    def current(self, obj: PipelineFlag) -> str:
        return str(_("(default)")) if obj.value is None else flag_text(obj.value)

    @admin.display(description=_("default"))
    def default(self, obj: PipelineFlag) -> str:
        return flag_text(self._defaults.get(obj.name))

    def save_model(self, request: HttpRequest, obj: PipelineFlag, form: forms.ModelForm, change: bool) -> None:
        try:
            pipeline_flag_set(
                name=obj.name,
                model_key=obj.model_key,
                value=form.cleaned_data["parsed"],
                changed_by=request.user.get_username(),
                reason=form.cleaned_data["reason"],
            )
        except FlagInvalid as exc:
            self.message_user(request, str(exc), level=messages.ERROR)

    def save_related(self, request: HttpRequest, form: forms.ModelForm, formsets: Any, change: bool) -> None:
        return None  # the history is written by pipeline_flag_set, never through the inline


def _settings_config() -> dict[str, Any]:
    """The configuration before flag rows (what an empty row means), as plain values."""
    return pipeline_config_settings().as_dict()


@admin.register(PipelineFlagChange)
class PipelineFlagChangeAdmin(AuditAdmin):
    """The audit trail of every flag change, read-only."""

    list_display = ("changed_at", "flag", "old_value", "new_value", "changed_by", "reason")
    list_filter = ("changed_by",)
    list_select_related = ("flag",)
    search_fields = ("flag__name", "reason", "changed_by")
    date_hierarchy = "changed_at"


@admin.register(Feedback)
class FeedbackAdmin(AnswersViewedAudit, ReadOnlyAdmin):
    """Patients' feedback on answers, read-only (comments are stored without identifiers)."""

    list_display = ("created_at", "helpful", "short_comment", "identifiers", "answer_question", "answer_outcome")
    list_filter = ("helpful", "answer__outcome", "answer__language")
    list_select_related = ("answer",)
    search_fields = ("comment", "answer__question")
    date_hierarchy = "created_at"
    readonly_fields = ("answer", "helpful", "comment", "identifiers", "created_at", "updated_at")
    exclude = ("client",)

    def answer_id_of(self, obj: Feedback) -> int:
        return int(obj.answer_id)

    @admin.display(description=_("comment"))
    def short_comment(self, obj: Feedback) -> str:
        return Truncator(obj.comment).chars(80)

    @admin.display(description=_("question"), ordering="answer__question")
    def answer_question(self, obj: Feedback) -> str:
        return obj.answer.question[:80]

    @admin.display(description=_("outcome"), ordering="answer__outcome")
    def answer_outcome(self, obj: Feedback) -> str:
        return obj.answer.outcome
