"""The judges' context budget (``context_truncate``), in tokens of ``core.text.tokens_estimate``."""

from __future__ import annotations

import pytest

from core.text import tokens_estimate
from evaluation.judges.base import context_truncate

FIRST = "ABCD syndrome is a rare inherited disorder."
SECOND = "Treatment consists of hearing aids and regular check-ups at the clinic."


def test_passages_that_fit_are_kept_whole() -> None:
    budget = tokens_estimate(FIRST) + tokens_estimate(SECOND)
    assert context_truncate([FIRST, SECOND], budget_tokens=budget) == ([FIRST, SECOND], False, budget)


def test_the_passage_crossing_the_budget_is_cut_after_a_whole_word() -> None:
    """GIVEN room for the first passage and four more tokens WHEN truncating THEN the second is
    cut after its fourth word, the truncation is reported and the tokens kept stay in budget."""
    budget = tokens_estimate(FIRST) + 4
    kept, truncated, used = context_truncate([FIRST, SECOND, "never reached"], budget_tokens=budget)
    assert kept == [FIRST, "Treatment consists of hearing"]
    assert truncated is True and used == budget


def test_a_budget_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        context_truncate([FIRST], budget_tokens=0)
