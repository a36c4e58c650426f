"""The token estimate shared by chunking and the judges' context budget."""

from __future__ import annotations

from core.text import tokens_estimate, tokens_truncate


def test_tokens_are_words_and_punctuation_marks() -> None:
    assert tokens_estimate("") == 0
    assert tokens_estimate("Holmes-Adie syndrome.") == 5  # Holmes, -, Adie, syndrome, .
    assert tokens_estimate("Hartfalen: kortademig, moe") == 5
    assert tokens_estimate("Patiënten   met\nhartfalen") == 3  # accents are word characters


def test_truncate_keeps_whole_words_within_the_budget() -> None:
    text = "Dr. Janssens treats Holmes-Adie syndrome at Campus Noord."
    assert tokens_truncate(text, tokens=0) == ""
    assert tokens_truncate(text, tokens=100) == text
    assert tokens_truncate(text, tokens=3) == "Dr. Janssens"
    # The fifth token ends inside "Holmes-Adie": the cut backs off to the last whole word.
    assert tokens_truncate(text, tokens=5) == "Dr. Janssens treats"
    assert tokens_truncate(text, tokens=7) == "Dr. Janssens treats Holmes-Adie"
    for budget in range(12):
        assert tokens_estimate(tokens_truncate(text, tokens=budget)) <= budget
