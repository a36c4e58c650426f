"""Judgements of served answers, lowest faithfulness first."""

from __future__ import annotations

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from evaluation.admin.common import ReadOnlyAdmin
from evaluation.models import Judgement


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

    @admin.display(description=_("question"))
    def short_question(self, obj: Judgement) -> str:
        text = obj.answer.question
        return text if len(text) <= 80 else text[:79] + "…"
