"""Golden sets: versions, questions, JSONL import and export, starting runs."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from evaluation.golden.io import GoldenFormatError, golden_jsonl_read, golden_jsonl_write
from evaluation.models import GoldenQuestion, GoldenSet
from evaluation.services.golden import (
    GoldenSetFrozen,
    golden_set_import,
    golden_set_items,
    golden_set_latest,
    golden_set_new_version,
    golden_set_rehash,
)
from evaluation.services.runs import RunConfigInvalid, evaluation_runs_start


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

    name = forms.SlugField(
        max_length=100, help_text=_("Set name, e.g. 'medquad-heldout'. Existing name → new version.")
    )
    file = forms.FileField(help_text=_("JSONL: one question per line (qid, question, language, category, …)."))
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

    @admin.display(description=_("runs"), ordering="run_total")
    def run_total(self, obj: GoldenSet) -> int:
        return obj.run_total  # type: ignore[attr-defined]

    @admin.display(description=_("content hash"))
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

    @admin.action(description=_("Start an evaluation run (queued for the worker)"), permissions=["start_run"])
    def start_run(self, request: HttpRequest, queryset: QuerySet[GoldenSet]) -> None:
        try:
            runs = evaluation_runs_start(
                golden_set_ids=list(queryset.values_list("id", flat=True)), created_by=request.user.get_username()
            )
        except RunConfigInvalid as exc:
            self.message_user(request, str(exc), level=messages.ERROR)
            return
        if not runs:
            self.message_user(
                request, _("No run started: the selected sets have no questions."), level=messages.WARNING
            )
            return
        links = ", ".join(str(r.pk) for r in runs)
        self.message_user(
            request,
            ngettext(
                "Queued evaluation run %(ids)s; the run list shows its progress.",
                "Queued evaluation runs %(ids)s; the run list shows their progress.",
                len(runs),
            )
            % {"ids": links},
        )

    @admin.action(description=_("Make a new editable version"), permissions=["add"])
    def new_version(self, request: HttpRequest, queryset: QuerySet[GoldenSet]) -> None:
        made = [golden_set_new_version(golden_set=s) for s in queryset]
        self.message_user(request, _("Editable: %(sets)s") % {"sets": ", ".join(str(s) for s in made)})

    @admin.action(description=_("Export as JSONL (one set)"), permissions=["view"])
    def export_jsonl(self, request: HttpRequest, queryset: QuerySet[GoldenSet]) -> HttpResponse | None:
        if queryset.count() != 1:
            self.message_user(request, _("Select exactly one set to export."), level=messages.WARNING)
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
                form.add_error("file", _("The file is not UTF-8 text."))
            except (GoldenFormatError, ValueError, ValidationError) as exc:
                form.add_error("file", str(exc))
            except IntegrityError:
                form.add_error("name", _("Another import of this set ran at the same moment; import again."))
            else:
                actions = {"created": _("created"), "replaced": _("replaced"), "unchanged": _("unchanged")}
                self.message_user(
                    request,
                    ngettext(
                        "%(set)s: %(action)s, %(count)d question.",
                        "%(set)s: %(action)s, %(count)d questions.",
                        golden_set.question_count,
                    )
                    % {
                        "set": golden_set,
                        "action": actions.get(action, action),
                        "count": golden_set.question_count,
                    },
                )
                return HttpResponseRedirect(reverse("admin:evaluation_goldenset_change", args=[golden_set.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": _("Import a golden set (JSONL)"),
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
