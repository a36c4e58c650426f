"""Admin for content editors: sources, documents with their chunks, ingestion runs.

Ingested rows are read-only: they change by re-ingesting, never by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from core.admin_runs import BackgroundRunAdminMixin, ReadOnlyAdmin
from ingestion.connectors import CONNECTORS
from ingestion.models import Chunk, Document, IngestionRun, Source
from ingestion.services import ingestion_run_relaunch, ingestion_run_start, source_priority_set


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    """Sources are created by ingestion; editors change only their search priority (0–10),
    through :func:`ingestion.services.source_priority_set`."""

    list_display = ("name", "key", "connector", "priority", "licence", "document_total")
    list_editable = ("priority",)
    search_fields = ("name", "key")
    fields = ("key", "name", "connector", "priority", "licence", "description", "created_at")
    readonly_fields = ("key", "name", "connector", "licence", "description", "created_at")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Source, form: object, change: bool) -> None:
        source_priority_set(key=obj.key, priority=obj.priority)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Source]:
        return super().get_queryset(request).annotate(document_total=Count("documents"))

    @admin.display(description=_("documents"), ordering="document_total")
    def document_total(self, obj: Source) -> int:
        return obj.document_total  # type: ignore[attr-defined]


class ChunkInline(admin.TabularInline):
    model = Chunk
    fields = ("position", "heading", "text", "token_count", "language")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ("title", "external_id", "source", "language", "link", "updated_at")
    list_filter = ("source", "language")
    search_fields = ("title", "external_id", "url")
    list_select_related = ("source",)
    readonly_fields = (
        "source",
        "external_id",
        "url",
        "title",
        "language",
        "summary",
        "metadata",
        "content_hash",
        "created_at",
        "updated_at",
    )
    inlines = [ChunkInline]

    @admin.display(description=_("url"))
    def link(self, obj: Document) -> str:
        return format_html('<a href="{}" target="_blank" rel="noopener">{}</a>', obj.url, _("open")) if obj.url else "—"


class IngestionRunForm(forms.ModelForm):
    """Start a run: pick a connector, give a path on the server, optionally limit it."""

    connector = forms.ChoiceField(choices=[])
    limit = forms.IntegerField(required=False, min_value=1, help_text=_("Stop after this many documents."))
    subsets = forms.CharField(required=False, help_text=_("MedQuAD folders, comma-separated (e.g. GARD, CancerGov)."))

    class Meta:
        model = IngestionRun
        fields = ("connector", "path")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

        self.fields["connector"].choices = [(name, name) for name in sorted(CONNECTORS)]  # type: ignore[attr-defined]
        self.fields["path"].help_text = _("A file or folder on the server, e.g. data/medquad-slice.")

    def clean_path(self) -> str:
        path = self.cleaned_data["path"].strip()
        if not Path(path).exists():
            raise forms.ValidationError(_("Nothing found at %(path)s on the server.") % {"path": path})
        return path

    def save(self, commit: bool = True) -> IngestionRun:
        run = super().save(commit=False)
        subsets = [s.strip() for s in (self.cleaned_data.get("subsets") or "").split(",") if s.strip()]
        run.options = {"limit": self.cleaned_data.get("limit"), "subsets": subsets, "source_key": ""}
        if commit:
            run.save()
        return run


@admin.register(IngestionRun)
class IngestionRunAdmin(BackgroundRunAdminMixin, admin.ModelAdmin):
    """Runs with a progress bar, read-only once created; editors start new runs with the form or
    run old ones again (the shared ``run_again`` action, with the right to add runs)."""

    list_display = (
        "id",
        "connector",
        "path",
        "status",
        "progress",
        "created_count",
        "updated_count",
        "unchanged_count",
        "skipped_count",
        "error_count",
        "created_at",
    )
    list_filter = ("status", "connector")
    list_select_related = ("source",)
    readonly_fields = (
        "status",
        "source",
        "model_key",
        "total",
        "done",
        "created_count",
        "updated_count",
        "unchanged_count",
        "skipped_count",
        "error_count",
        "chunk_count",
        "errors",
        "timings_ms",
        "error",
        "created_at",
        "started_at",
        "finished_at",
    )

    def get_form(self, request: HttpRequest, obj: IngestionRun | None = None, change: bool = False, **kwargs: Any):
        if obj is None:
            kwargs["form"] = IngestionRunForm
            kwargs["fields"] = ("connector", "path", "limit", "subsets")
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: IngestionRun | None = None):
        if obj is None:
            return ("connector", "path", "limit", "subsets")
        return ("connector", "path", "options", *self.readonly_fields)

    def get_readonly_fields(self, request: HttpRequest, obj: IngestionRun | None = None):
        return ("connector", "path", "options", *self.readonly_fields) if obj else ()

    actions = ["run_again"]
    run_again_description = _("Run again (unchanged documents are skipped)")

    def save_model(self, request: HttpRequest, obj: IngestionRun, form: object, change: bool) -> None:
        """A run added in the admin is created and queued by the service (after commit)."""
        run = ingestion_run_start(
            connector=obj.connector,
            path=obj.path,
            limit=obj.options.get("limit"),
            subsets=obj.options.get("subsets") or (),
        )
        obj.pk, obj.model_key, obj._state.adding = run.pk, run.model_key, False
        self.message_user(
            request, _("Ingestion run %(id)s queued; refresh this page to follow its progress.") % {"id": run.pk}
        )

    def runs_relaunch(self, request: HttpRequest, *, run_ids: list[int]) -> list[IngestionRun]:
        return ingestion_run_relaunch(run_ids=run_ids)
