"""The pipeline's contract: the enums every layer above shares, and the versioned answer trace.

The enums are Django ``TextChoices`` (``str`` enums with labels), so the same values serve the
pipeline, the ``Answer`` model's choices and admin filters, the API schemas and the evaluation
metrics. :class:`AnswerTrace` is what the pipeline stores in ``Answer.trace``; readers go through
:func:`zolsearch.search.selectors.answer_trace`, never through JSON keys.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _
from pydantic import BaseModel, ConfigDict, Field


class Outcome(models.TextChoices):
    """How a request ended. Only ``refused`` and ``red_flag`` are explicit refusals; a gate
    rejection or no result is a fallback (an honest "I don't know, here is who can help")."""

    ANSWERED = "answered", _("Answered")
    GATE_REJECTED = "gate_rejected", _("Fallback: rejected by the quality gate")
    NO_RESULTS = "no_results", _("Fallback: no results")
    REFUSED = "refused", _("Refused (guard)")
    RED_FLAG = "red_flag", _("Red flag: routed to an emergency or help line")


EXPLICIT_REFUSALS = frozenset({Outcome.REFUSED, Outcome.RED_FLAG})
FALLBACKS = frozenset({Outcome.GATE_REJECTED, Outcome.NO_RESULTS})


class Intent(models.TextChoices):
    """What the question wants (design step 2)."""

    DOCTOR_LOOKUP = "doctor_lookup", _("Doctor lookup")
    DEPARTMENT_SEARCH = "department_search", _("Department search")
    CONDITION_OR_SYMPTOM = "condition_or_symptom", _("Condition or symptom")
    TREATMENT = "treatment", _("Treatment")
    PRACTICAL_INFO = "practical_info", _("Practical information")
    COMPLAINT = "complaint", _("Complaint")
    GENERAL = "general", _("General")
    MEDICAL_ADVICE_REQUEST = "medical_advice_request", _("Individual medical advice request")


class Generator(models.TextChoices):
    """Who wrote the answer text."""

    EXTRACTIVE = "extractive", _("Extractive (copied sentences)")
    LLM = "llm", _("LLM")
    TAXONOMY = "taxonomy", _("Hospital graph (taxonomy)")
    FALLBACK = "fallback", _("Fallback message")
    REFUSAL = "refusal", _("Refusal message")
    RED_FLAG = "red_flag", _("Red-flag routing message")


class RefusalReason(models.TextChoices):
    """Why a request was refused explicitly (``Outcome.REFUSED``)."""

    MEDICAL_ADVICE = "medical_advice", _("Individual medical advice")
    HARMFUL = "harmful", _("Harmful medical request")
    OUT_OF_SCOPE = "out_of_scope", _("Outside the search's purpose")
    PROMPT_INJECTION = "prompt_injection", _("Prompt injection")
    UNSAFE_OUTPUT = "unsafe_output", _("Draft addressed the asker with a dose or diagnosis")
    GUARD_UNAVAILABLE = "guard_unavailable", _("Safety model unavailable (fail-closed)")


class RedFlagCategory(models.TextChoices):
    """Red-flag routes and their Belgian numbers (:data:`RED_FLAG_NUMBERS`)."""

    EMERGENCY = "emergency", _("Emergency (112)")
    URGENT = "urgent", _("Urgent, out of hours (1733)")
    POISON = "poison", _("Poisoning (Antigifcentrum 070 245 245)")
    SUICIDE = "suicide", _("Suicidal thoughts or self-harm (1813)")


# Belgian numbers (facts, not style): 112 emergency; 1733 huisarts van wacht / wachtpost;
# 070 245 245 Antigifcentrum; 1813 Zelfmoordlijn (106 Tele-Onthaal to talk).
RED_FLAG_NUMBERS: dict[str, str] = {
    RedFlagCategory.EMERGENCY: "112",
    RedFlagCategory.URGENT: "1733",
    RedFlagCategory.POISON: "070 245 245",
    RedFlagCategory.SUICIDE: "1813",
}
TELE_ONTHAAL = "106"

TRACE_VERSION = 1


class _Trace(BaseModel):
    model_config = ConfigDict(extra="ignore")


class EntityTrace(_Trace):
    slug: str
    type: str
    trail: list[dict[str, object]] = Field(default_factory=list)


class FactTrace(_Trace):
    """One pinned graph fact: its structure and the sentence generation wrote from it."""

    kind: str  # doctor | condition | treatment | department
    entity_ids: list[int] = Field(default_factory=list)
    title: str = ""
    url: str = ""
    text: str = ""


class TaxonomyTrace(_Trace):
    intent: Intent = Intent.GENERAL
    routing_question: bool = False
    entities: list[EntityTrace] = Field(default_factory=list)
    facts: list[FactTrace] = Field(default_factory=list)


class GuardTrace(_Trace):
    """What a guard decided: ``label`` (allowed or a :class:`RefusalReason`), the classifier's
    probabilities (label → [0, 1]), the rule that fired, the backend (``offline`` or
    ``llm:<model>``) and, when an endpoint failed, its error."""

    stage: str  # input_guard | output_guard
    label: str = "allowed"
    probabilities: dict[str, float] = Field(default_factory=dict)
    rule: str = ""
    backend: str = "offline"
    error: str = ""


class RedFlagTrace(_Trace):
    category: RedFlagCategory
    number: str
    rule: str = ""
    notice_only: bool = False  # an informational question about an emergency condition


class UnderstandingTrace(_Trace):
    """Query understanding: the classifier's (or chat model's) ``intent`` and MedQuAD ``qtype`` with
    their probabilities in [0, 1], the ``reduced`` query retrieval searched with ("" when
    the question was used as it is), and the linked focus (:mod:`zolsearch.search.focus`:
    ``focus`` as its source names it, ``focus_kind`` condition/drug/procedure/department/doctor,
    ``focus_source`` taxonomy/snomed/medquad, ``focus_id`` entity slug, SNOMED CT concept id or
    UMLS CUI; all "" when none was found); ``expanded``: what was added to the searched text,
    "; "-separated: the focus name when the question spells it differently, SNOMED CT synonyms,
    the glossary's Dutch words for an English or French practical question, the English of a
    Dutch question's medical words ("" none); ``focus_translated``: the focus was linked from
    that English (``stages/understand._medical_english``); ``corrected``: the question's
    misspelled words and what they were taken for, "said → word" "; "-separated: medical
    words, and in Dutch the everyday words of the hospital's pages
    (:mod:`zolsearch.search.spelling`, :func:`zolsearch.search.focus.page_spelling`; "" none;
    read back by the gate's term agreement, :func:`zolsearch.search.spelling.corrected_words`); ``backend``: what gave the intent, type and
    reduced query, "offline" (the classifiers), "llm:<model>"
    (:mod:`zolsearch.search.understanding_llm`) or "" (neither could: the question was searched
    as typed); ``backend_error``: why the configured chat model's understanding was not used
    ("" none)."""

    intent: str = ""
    intent_confidence: float | None = None
    qtype: str = ""
    qtype_confidence: float | None = None
    reduced: str = ""
    focus: str = ""
    focus_kind: str = ""
    focus_source: str = ""
    focus_id: str = ""
    expanded: str = ""
    focus_translated: bool = False
    corrected: str = ""
    backend: str = "offline"
    backend_error: str = ""


class RetrievalTrace(_Trace):
    """How the candidates were ranked: ``reranker`` (model key, "" when off), ``rerank_error``
    (the reranker failed: fused order kept), ``rescued_terms`` (keyword rescue: terms no
    candidate contained, searched on their own), ``focus_rescued`` (chunks of the linked
    focus's answers to the question type that joined the candidates, focus rescue),
    ``think_harder`` (deeper pools), and CRAG's
    ``crag_confidence`` (0.5·top + 0.3·mean(top 3) + 0.2·gap of the rerank scores, [0, 1]),
    ``crag_action`` (correct, ambiguous, incorrect, bypass, off), ``crag_refined`` (the
    ambiguous case retrieved again with deeper, relaxed pools) and ``crag_refined_confidence``;
    ``filco_removed``: sentences FILCO dropped from the answer chunks (None: FILCO did not run);
    ``cache_hit_id``: the semantic cache entry the answer was served from (None: computed)."""

    reranker: str = ""
    rerank_error: str = ""
    rescued_terms: list[str] = Field(default_factory=list)
    focus_rescued: int = 0
    think_harder: bool = False
    crag_confidence: float | None = None
    crag_action: str = ""
    crag_refined: bool = False
    crag_refined_confidence: float | None = None
    filco_removed: int | None = None
    cache_hit_id: int | None = None


class FollowUpTrace(_Trace):
    """Follow-up resolution against the previous turn of the same conversation
    (:mod:`zolsearch.search.followup`): ``previous_trace_id`` (that turn's ``Answer.trace_id``),
    ``is_followup``, ``rule`` (the decision rule that fired), ``resolution`` (how the question
    was written, "" when not a follow-up), ``cue`` (the continuation cue, "" without) and
    ``resolved``: the question taxonomy, retrieval, understanding and generation searched with
    (the message as typed when not a follow-up; ``Answer.question`` always keeps it as typed)."""

    previous_trace_id: str = ""
    is_followup: bool = False
    rule: str = ""
    resolution: str = ""
    cue: str = ""
    resolved: str = ""


class AnswerTrace(_Trace):
    """Version :data:`TRACE_VERSION` of ``Answer.trace``.

    - ``cited_chunk_ids``: the chunks the (served or rejected) draft's sentences come from: the
      gate's and the judge's context.
    - ``rejected_answer``: the draft the gate (or the output guard) refused, kept for review.
    - ``draft_citations`` / ``fallback_citations``: ``{n, title, url, snippet, source}`` of the
      refused draft and of the graph facts leading a fallback.
    - ``stop_stage`` / ``stop_reason``: which stage ended the run early, and why.
    - ``followup``: the previous turn of the conversation and what it made of the message; None
      when the request had no ``conversation_id``, the conversation no recent turn, or the
      follow-up stage is off. Added without changing a field's meaning: still version 1, and
      traces written before it read with ``followup`` None.
    """

    version: int = TRACE_VERSION
    taxonomy: TaxonomyTrace = Field(default_factory=TaxonomyTrace)
    lexical_backend: str = ""
    cited_chunk_ids: list[int] = Field(default_factory=list)
    rejected_answer: str = ""
    draft_citations: list[dict[str, object]] = Field(default_factory=list)
    fallback_citations: list[dict[str, object]] = Field(default_factory=list)
    graph_excluded_departments: list[str] = Field(default_factory=list)
    graph_answer: str = ""
    llm_error: str = ""
    stop_stage: str = ""
    stop_reason: str = ""
    guards: list[GuardTrace] = Field(default_factory=list)
    red_flag: RedFlagTrace | None = None
    retrieval: RetrievalTrace = Field(default_factory=RetrievalTrace)
    understanding: UnderstandingTrace = Field(default_factory=UnderstandingTrace)
    followup: FollowUpTrace | None = None
