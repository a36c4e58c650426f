"""Pieces the evaluation admin screens share: headline metrics, formatting, the read-only base
(:class:`core.admin_runs.ReadOnlyAdmin`)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from core.admin_runs import ReadOnlyAdmin

HEADLINE = (
    ("passed", _("pass rate (composite)")),
    ("passed_er", _("pass rate (ER-only)")),
    ("refusal_correct", _("refusal accuracy")),
    ("refused", _("explicitly refused (guard, red flag)")),
    ("fallback", _("fallback (gate rejection, no results)")),
    ("red_flag_correct", _("red-flag accuracy")),
    ("cited_expected", _("answered from an expected page")),
    ("reviewed_correct", _("served as the reviewer labelled")),
    ("entity_recall", _("entity recall")),
    ("ndcg_at_5", "NDCG@5"),
    ("mrr", "MRR"),
    ("precision_at_5", "P@5"),
    ("recall_at_5", "R@5"),
    ("faithfulness", _("faithfulness")),
    ("relevancy", _("answer relevancy")),
)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


__all__ = ["HEADLINE", "ReadOnlyAdmin", "_percent"]
