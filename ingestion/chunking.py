"""Chunking that respects the embedder's token window and the document's headings.

Each chunk is built from whole sentences of one section (never across a heading). The text
that is embedded is, in order: the document context, the canonical questions, the heading and
the chunk text (Contextual Retrieval, Anthropic, "Introducing Contextual Retrieval", 2024).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.text import sentences_split
from ingestion.connectors.base import DocumentRecord


@dataclass(frozen=True)
class ChunkDraft:
    """A chunk before it is stored. ``token_count`` counts ``embedded_text``."""

    position: int
    heading: str
    text: str
    questions: tuple[str, ...]
    embedded_text: str
    token_count: int


def chunk_source_text_compose(*, summary: str, position: int, text: str) -> str:
    """The text a chunk contributes as a source (quoted in answers, split into sentences by
    FILCO): its ``text``, after the document's ``summary`` when it is the document's first chunk
    (``position`` 0). Page summaries are shown this way, never embedded."""
    summary = summary.strip()
    return f"{summary}\n{text}" if summary and position == 0 else text


def chunk_sentences(*, summary: str, position: int, text: str) -> list[str]:
    """The sentences FILCO scores for one chunk, at ingestion (their stored vectors) and per
    request alike: :func:`core.text.sentences_split` of :func:`chunk_source_text_compose`."""
    return sentences_split(chunk_source_text_compose(summary=summary, position=position, text=text))


def sentences_digest(sentences: Sequence[str]) -> str:
    """SHA-256 hex digest (64 characters) of ``sentences`` joined by newlines: what stored
    sentence vectors were computed from, compared at query time so vectors of another split
    (a changed splitter or chunk text) are never used."""
    return hashlib.sha256("\n".join(sentences).encode("utf-8")).hexdigest()


def embedded_text_compose(*, context: str, questions: tuple[str, ...], heading: str, text: str) -> str:
    """The Contextual Retrieval text for one chunk: context, questions, heading, text, one per line."""
    parts = [context.strip(), *[q.strip() for q in questions], heading.strip(), text.strip()]
    return "\n".join(part for part in parts if part)


def _word_parts(word: str, budget: int, count: Callable[[str], int]) -> list[str]:
    """``word`` itself, or cut into the longest runs of ≤ ``budget`` tokens when it alone is
    over (a long URL, a ruler of dashes: each mark a token). Found by tests/proof: such a word
    made a chunk of 300 tokens for a window of 60."""
    if count(word) <= budget:
        return [word]
    parts: list[str] = []
    start = 0
    while start < len(word):
        low, high = start + 1, len(word)  # longest end with count(word[start:end]) ≤ budget, ≥ 1 char
        while low < high:
            middle = (low + high + 1) // 2
            if count(word[start:middle]) <= budget:
                low = middle
            else:
                high = middle - 1
        parts.append(word[start:low])
        start = low
    return parts


def _split_long(sentence: str, budget: int, count: Callable[[str], int]) -> list[str]:
    """Split one over-long sentence at word boundaries (inside a word only when that word alone
    is over the budget) into pieces of ≤ ``budget`` tokens."""
    pieces: list[str] = []
    current: list[str] = []
    for word in sentence.split():
        for part in _word_parts(word, budget, count):
            if current and count(" ".join([*current, part])) > budget:
                pieces.append(" ".join(current))
                current = []
            current.append(part)
    if current:
        pieces.append(" ".join(current))
    return pieces


def chunks_build(*, record: DocumentRecord, max_tokens: int, count_tokens: Callable[[str], int]) -> list[ChunkDraft]:
    """Cut ``record`` into chunks whose embedded text has at most ``max_tokens`` tokens.

    ``count_tokens`` is the active embedder's counter. The prefix (context, questions,
    heading) is charged against each chunk's budget; a budget below 32 tokens is raised to
    32 so a very long context cannot make chunking impossible. Sentences are greedily packed.
    Returns chunks with consecutive positions from 0; empty sections produce none.
    """
    drafts: list[ChunkDraft] = []
    for section in record.sections:
        prefix = embedded_text_compose(
            context=record.context, questions=record.questions, heading=section.heading, text=""
        )
        budget = max(32, max_tokens - count_tokens(prefix) - 2)
        sentences: list[str] = []
        for paragraph in section.text.split("\n"):
            for sentence in sentences_split(paragraph):
                sentences.extend(
                    [sentence] if count_tokens(sentence) <= budget else _split_long(sentence, budget, count_tokens)
                )
        current: list[str] = []
        current_tokens = 0
        groups: list[list[str]] = []
        for sentence in sentences:
            tokens = count_tokens(sentence)
            if current and current_tokens + tokens > budget:
                groups.append(current)
                current, current_tokens = [], 0
            current.append(sentence)
            current_tokens += tokens
        if current:
            groups.append(current)
        for group in groups:
            text = " ".join(group)
            embedded = embedded_text_compose(
                context=record.context, questions=record.questions, heading=section.heading, text=text
            )
            drafts.append(
                ChunkDraft(
                    position=len(drafts),
                    heading=section.heading,
                    text=text,
                    questions=record.questions,
                    embedded_text=embedded,
                    token_count=count_tokens(embedded),
                )
            )
    return drafts
