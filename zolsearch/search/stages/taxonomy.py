"""Taxonomy resolution: the hospital graph's routing facts, pinned first (design step 3)."""

from __future__ import annotations

import re

from core.text import text_normalise
from taxonomy.resolver import Resolution, text_resolve
from taxonomy.selectors import RoutingFact, routing_facts
from zolsearch.search.contract import EntityTrace, FactTrace, Intent, TaxonomyTrace
from zolsearch.search.focus import question_sentences
from zolsearch.search.generation import fact_sentence
from zolsearch.search.stages.base import SearchState, Stage

# Words that ask where to go or who treats, in the languages of the region. A question with one
# of them, or a doctor lookup / department search, is a routing question: the graph answers it.
_ROUTING_CUES = re.compile(
    r"\b(waar|welke (dienst|afdeling|arts|dokter|campus|specialist)|bij wie|terecht|heen|wie behandelt"
    r"|where|which (department|doctor|clinic|ward|campus|specialist)|who treats|go to"
    r"|où|quel service|quelle clinique|nerede|hangi (bölüm|doktor)|unde|ce secție|la ce)\b",
    re.IGNORECASE,
)


def routing_question(*, question: str, intent: Intent) -> bool:
    """Whether the graph alone answers ``question``: a doctor lookup or department search, or a
    question with a routing cue ("waar", "welke dienst", "where", "which department", …)."""
    return intent in (Intent.DOCTOR_LOOKUP, Intent.DEPARTMENT_SEARCH) or bool(_ROUTING_CUES.search(question))


def facts_intent(facts: list[RoutingFact]) -> Intent:
    """The intent the graph's facts imply: a doctor fact → doctor lookup; condition facts →
    condition or symptom (treatment when every one is a treatment); department facts →
    department search; no fact → general."""
    kinds = {f.kind for f in facts}
    if "doctor" in kinds:
        return Intent.DOCTOR_LOOKUP
    if kinds & {"condition", "treatment"}:
        return Intent.TREATMENT if kinds & {"condition", "treatment"} == {"treatment"} else Intent.CONDITION_OR_SYMPTOM
    if "department" in kinds:
        return Intent.DEPARTMENT_SEARCH
    return Intent.GENERAL


# Words of an errand at a department (an appointment, a visit, a call, the way there), in the
# languages of the region: a message with one is about the department wherever it names it ("Ik
# wil een afspraak bij cardiologie. Hoe doe ik dat?"). Set by hand on 2026-12-07 (a review of
# :func:`named_in_story_only`).
_DEPARTMENT_ERRAND = re.compile(
    r"\b(afspraak|afspraken|raadpleging|consultatie|bezoek\w*|telefoon\w*|nummer|bellen|bereikbaar|openingsuren|"
    r"parkeren|parking|route|wachttijd|appointment|visit\w*|phone|call|opening hours|rendez-vous|visite)\b",
    re.IGNORECASE,
)


def named_in_story_only(*, question: str, resolution: Resolution) -> bool:
    """Whether every department ``resolution`` holds is named only in the story around the
    question sentences of ``question`` (:func:`zolsearch.search.focus.question_sentences`): "ze
    hebben voorkamerfibrillatie vastgesteld op de spoed. Welke behandelingen zijn er daarvoor?"
    asks about the condition, not the emergency department. False when the message has no
    sentence with a "?" beside another sentence, when it has a routing cue
    (:func:`routing_question`'s words: "waar", "welke dienst") or an errand at a department
    (:data:`_DEPARTMENT_ERRAND`: "Ik wil een afspraak bij cardiologie. Hoe doe ik dat?"), when a
    question sentence names a department, for a message without a department, and when a
    department was reached by a step that names no text (its words in the question cannot be
    told). Never raises."""
    departments = resolution.of_type("department")
    sentences = question_sentences(question)
    if not departments or not sentences or _ROUTING_CUES.search(question) or _DEPARTMENT_ERRAND.search(question):
        return False
    asked = " ".join(f" {text_normalise(s)} " for s in sentences)
    for resolved in departments:
        said = [str(step["text"]) for step in resolved.trail if step.get("text")]
        if not said or any(f" {text_normalise(text)} " in asked for text in said):
            return False
    return True


class TaxonomyStage(Stage):
    """Resolve the question against the hospital graph (aliases → SNOMED → IS_A → finding site)
    and keep the routing facts to pin first in the answer."""

    name = "taxonomy"
    reads = frozenset({"question", "language", "config"})
    adds = frozenset({"intent", "pinned", "routing", "resolution"})

    def run(self, state: SearchState) -> None:
        resolution = text_resolve(text=state.question, language=state.language, with_terms=False)
        state.resolution = resolution
        state.pinned = routing_facts(resolution=resolution, language=state.language)
        state.intent = facts_intent(state.pinned)
        if (
            state.intent == Intent.DEPARTMENT_SEARCH
            and state.config.department_intent_needs_question
            and named_in_story_only(question=state.question, resolution=resolution)
        ):
            # The department's facts stay pinned; the intent is left to the classifier.
            state.intent = Intent.GENERAL
        state.routing = bool(state.pinned) and routing_question(question=state.question, intent=state.intent)
        state.trace.taxonomy = TaxonomyTrace(
            intent=state.intent,
            routing_question=state.routing,
            entities=[EntityTrace(slug=r.entity.slug, type=r.entity.type, trail=r.trail) for r in resolution.entities],
            facts=[
                FactTrace(
                    kind=f.kind,
                    entity_ids=list(f.entity_ids),
                    title=f.title,
                    url=f.url,
                    text=fact_sentence(fact=f, language=state.language),
                )
                for f in state.pinned
            ],
        )
