"""Pieces the evaluation admin screens share: headline metrics, formatting, the read-only base
(:class:`core.admin_runs.ReadOnlyAdmin`)."""

from __future__ import annotations

from core.admin_runs import ReadOnlyAdmin

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


__all__ = ["HEADLINE", "ReadOnlyAdmin", "_percent"]
