"""Admin of served answers: read-only, filterable by gate result and outcome."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from zolsearch.search.models import Answer


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @admin.display(description="question")
    def short_question(self, obj: Answer) -> str:
        return obj.question if len(obj.question) <= 80 else obj.question[:79] + "…"
