"""Request and response schemas of the search API."""

from __future__ import annotations

import re
from uuid import UUID

from ninja import Schema
from pydantic import Field, StrictBool, field_validator

from zolsearch.search.contract import Generator, Outcome, RedFlagCategory, RefusalReason
from zolsearch.search.pipeline import MAX_QUESTION_CHARS

FEEDBACK_COMMENT_MAX_CHARS = 1000
# Whitespace as Python's ``str.strip()`` sees it (what the pipeline strips), spelled out as
# \uXXXX escapes: ``\s`` means different sets in Python's re, the Rust regex pydantic-core
# validates with and ECMA regular expressions (OpenAPI readers'); U+001C, for one, is whitespace
# only to Python. The escapes read the same in all three.
_WHITESPACE = "".join(f"\\u{code:04x}" for code in range(0x3001) if chr(code).isspace())
# A question must hold at least one character that is not whitespace.
QUESTION_PATTERN = f"[^{_WHITESPACE}]"
# Two ASCII letters, or nothing (language detected), with any whitespace around.
LANGUAGE_PATTERN = f"^[{_WHITESPACE}]*([A-Za-z]{{2}})?[{_WHITESPACE}]*$"


def text_storable(value: str) -> str:
    """``value`` with every NUL character replaced by U+FFFD (the replacement character).

    PostgreSQL text cannot hold NUL (psycopg raises ``DataError`` for it, a 500 before this
    existed: schemathesis sent ``"question": "\x00"``); every other character is kept, so the
    schema's length limits still count what the client sent.
    """
    return value.replace("\x00", "\ufffd")


class SearchIn(Schema):
    """``POST /api/v1/search`` body."""

    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        pattern=QUESTION_PATTERN,
        description=f"The question, 1–{MAX_QUESTION_CHARS} characters, not only spaces.",
    )
    language: str | None = Field(
        default=None,
        pattern=LANGUAGE_PATTERN,
        description="ISO 639-1 code of the question (two letters); detected when absent or empty.",
    )
    conversation_id: str | None = Field(default=None, max_length=64)
    sources: list[str] = Field(default_factory=list, description="Only search these source keys (e.g. 'medquad').")
    document_languages: list[str] = Field(default_factory=list, description="Only search documents in these languages.")
    think_harder: StrictBool = Field(
        default=False, description="Rerank a deeper pool (100 candidates per retriever → 20) for a harder question."
    )

    @field_validator("question", mode="before")
    @classmethod
    def question_valid(cls, value: object) -> object:
        """Reasons a person can act on, checked on the question as sent (the schema's limits),
        before pydantic's own checks; returns it stripped."""
        if not isinstance(value, str):
            return value  # pydantic reports the type error
        if len(value) > MAX_QUESTION_CHARS:
            raise ValueError(f"question is too long: {len(value)} characters, the maximum is {MAX_QUESTION_CHARS}")
        text = text_storable(value.strip())
        if not text:
            raise ValueError("question is empty: type a question")
        return text

    @field_validator("conversation_id")
    @classmethod
    def conversation_id_storable(cls, value: str | None) -> str | None:
        return None if value is None else text_storable(value)

    @field_validator("sources", "document_languages")
    @classmethod
    def keys_storable(cls, value: list[str]) -> list[str]:
        return [text_storable(item) for item in value]

    @field_validator("language", mode="before")
    @classmethod
    def language_valid(cls, value: object) -> object:
        """The lower-cased code, or None when absent or empty; a clear reason (before pydantic
        checks the same ``LANGUAGE_PATTERN``) for anything but two ASCII letters."""
        if not isinstance(value, str):
            return value  # None, or a type error pydantic reports
        if not re.match(LANGUAGE_PATTERN, value):
            raise ValueError("language must be a two-letter ISO 639-1 code such as 'nl' or 'en'")
        return value.strip().lower() or None


class CitationOut(Schema):
    n: int
    title: str
    url: str
    snippet: str
    source: str = Field(default="document", description="document (retrieved text) or taxonomy (the hospital's graph)")


class GateOut(Schema):
    score: float | None
    context_alignment: float | None
    semantic_similarity: float | None
    threshold: float | None
    passed: bool


class RedFlagOut(Schema):
    category: RedFlagCategory = Field(
        description="emergency (112), urgent (1733), poison (070 245 245), suicide (1813)"
    )
    number: str = Field(description="The Belgian number to call, e.g. '112'.")
    message: str = Field(description="The routing message, in the answer's language.")


class SearchOut(Schema):
    answer: str
    citations: list[CitationOut]
    gate: GateOut
    generator: Generator = Field(description="Who wrote the answer text.")
    generator_model: str = Field(description="The generator's model and version, e.g. 'zolsearch-extractive/1'.")
    ai_generated: bool = Field(default=True, description="Always true: the answer is composed by an AI system.")
    disclosure: str = Field(
        description="The standing AI disclosure line (EU AI Act art. 50), in the answer's language."
    )
    outcome: Outcome = Field(
        description="answered; refused or red_flag (explicit refusals); gate_rejected or no_results (fallbacks)"
    )
    refusal_reason: RefusalReason | None = Field(
        default=None, description="Why the question was refused (outcome refused)."
    )
    red_flag: RedFlagOut | None = Field(default=None, description="The route to a phone number (outcome red_flag).")
    language: str
    trace_id: str
    timings_ms: dict[str, float]


class ErrorOut(Schema):
    detail: str


class FeedbackIn(Schema):
    """``POST /api/v1/feedback`` body."""

    trace_id: UUID = Field(description="The trace_id of the answer the feedback is about.")
    helpful: StrictBool = Field(description="Was this answer helpful?")
    comment: str = Field(
        default="",
        max_length=FEEDBACK_COMMENT_MAX_CHARS,
        description=f"Optional, up to {FEEDBACK_COMMENT_MAX_CHARS} characters; names, phone numbers, "
        "national register numbers, e-mail and postal addresses and birth dates are removed before storing.",
    )

    @field_validator("comment")
    @classmethod
    def comment_storable(cls, value: str) -> str:
        return text_storable(value)


class FeedbackOut(Schema):
    trace_id: UUID
    helpful: bool
    comment_stored: str = Field(description="The comment as stored, personal identifiers replaced.")
    identifiers_removed: list[str] = Field(description="Kinds of identifiers removed (never their values).")
