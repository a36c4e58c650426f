"""Request and response schemas of the search API."""

from __future__ import annotations

from uuid import UUID

from ninja import Schema
from pydantic import Field, field_validator

from zolsearch.search.contract import Generator, Outcome, RedFlagCategory, RefusalReason
from zolsearch.search.pipeline import MAX_QUESTION_CHARS

FEEDBACK_COMMENT_MAX_CHARS = 1000


class SearchIn(Schema):
    """``POST /api/v1/search`` body."""

    question: str = Field(
        min_length=1, max_length=MAX_QUESTION_CHARS, description=f"The question, 1–{MAX_QUESTION_CHARS} characters."
    )
    language: str | None = Field(default=None, description="ISO 639-1 code of the question; detected when absent.")
    conversation_id: str | None = Field(default=None, max_length=64)
    sources: list[str] = Field(default_factory=list, description="Only search these source keys (e.g. 'medquad').")
    document_languages: list[str] = Field(default_factory=list, description="Only search documents in these languages.")
    think_harder: bool = Field(
        default=False, description="Rerank a deeper pool (100 candidates per retriever → 20) for a harder question."
    )

    @field_validator("question", mode="before")
    @classmethod
    def question_valid(cls, value: object) -> object:
        if not isinstance(value, str):
            return value  # pydantic reports the type error
        text = value.strip()
        if not text:
            raise ValueError("question is empty: type a question")
        if len(text) > MAX_QUESTION_CHARS:
            raise ValueError(f"question is too long: {len(text)} characters, the maximum is {MAX_QUESTION_CHARS}")
        return text

    @field_validator("language")
    @classmethod
    def language_valid(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        code = value.strip().lower()
        if not (len(code) == 2 and code.isalpha()):
            raise ValueError("language must be a two-letter ISO 639-1 code such as 'nl' or 'en'")
        return code


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
    helpful: bool = Field(description="Was this answer helpful?")
    comment: str = Field(
        default="",
        max_length=FEEDBACK_COMMENT_MAX_CHARS,
        description=f"Optional, up to {FEEDBACK_COMMENT_MAX_CHARS} characters; names, phone numbers, "
        "national register numbers, e-mail and postal addresses and birth dates are removed before storing.",
    )


class FeedbackOut(Schema):
    trace_id: UUID
    helpful: bool
    comment_stored: str = Field(description="The comment as stored, personal identifiers replaced.")
    identifiers_removed: list[str] = Field(description="Kinds of identifiers removed (never their values).")
