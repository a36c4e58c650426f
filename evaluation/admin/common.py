"""Pieces the evaluation admin screens share: headline metrics, formatting, read-only base."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

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
