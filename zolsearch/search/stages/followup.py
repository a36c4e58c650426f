"""Follow-up resolution (issue 10 item 1): a short message of a conversation ("en in Maaseik?",
"and how is it treated?", "et à Genk ?") is searched as the question it continues.

Placed after the red-flag rules and before taxonomy. The rules run on the message as typed ("en
hij ademt niet meer!" is routed whatever came before); this stage then runs them again on the
resolved question, so an emergency that only the two turns together describe is routed too.
Taxonomy, the query vector (and with it the red-flag model, the input guard and the gate),
understanding, retrieval, keyword rescue, reranking, the semantic cache key and generation read
``state.question``; ``Answer.question`` keeps the message as typed.
"""

from __future__ import annotations

from django.conf import settings

from core.language import language_detect
from taxonomy.resolver import text_resolve
from zolsearch.search import selectors
from zolsearch.search.contract import FollowUpTrace
from zolsearch.search.followup import followup_resolve
from zolsearch.search.stages.base import SearchState, Stage
from zolsearch.search.stages.safety import red_flags_route

# Entity types that give a message a subject of its own (a campus is a place, not a subject).
FOCUS_TYPES = ("condition", "department", "doctor", "treatment")


def message_focus(*, text: str, language: str) -> bool:
    """Whether the hospital graph resolves a condition, department, doctor or treatment in
    ``text`` (:func:`taxonomy.resolver.text_resolve`; a fixed number of queries)."""
    return bool(text_resolve(text=text, language=language, with_terms=False).of_type(*FOCUS_TYPES))


class FollowUpStage(Stage):
    """Resolve the message against the previous turn of its conversation (the latest API answer
    with the same ``conversation_id`` within ``followup_max_age_s``;
    :mod:`zolsearch.search.followup`) and put the question to search on ``state.question``.

    The taxonomy is asked only when the word rules would take a message without a continuation
    cue as a follow-up: a message that names a condition, department or doctor of its own is a
    new question. For a follow-up whose language was not given, the language is detected again
    on the resolved question ("et à Genk ?" alone reads as Dutch). Records a
    :class:`FollowUpTrace` whenever a previous turn was found.
    """

    name = "followup"
    reads = frozenset({"request", "config", "language"})
    adds = frozenset({"question", "language", "red_flag", "emergency_notice"})

    def applies(self, state: SearchState) -> bool:
        return state.config.followup_enabled and bool(state.request.conversation_id)

    def run(self, state: SearchState) -> None:
        previous = selectors.answer_previous_turn(
            conversation_id=state.request.conversation_id[:64], max_age_s=state.config.followup_max_age_s
        )
        if previous is None:
            return
        earlier = selectors.answer_trace(answer=previous).followup
        previous_question = earlier.resolved if earlier is not None and earlier.is_followup else previous.question
        language = previous.language or state.language
        message = state.request.question
        result = followup_resolve(previous=previous_question, message=message, language=language)
        if result.is_followup and result.rule != "cue" and message_focus(text=message, language=state.language):
            result = followup_resolve(
                previous=previous_question, message=message, language=language, message_focus=True
            )
        state.trace.followup = FollowUpTrace(
            previous_trace_id=str(previous.trace_id),
            is_followup=result.is_followup,
            rule=result.rule,
            resolution=result.resolution,
            cue=result.cue,
            resolved=result.resolved,
        )
        if not result.is_followup:
            return
        state.question = result.resolved
        if not (state.request.language or "").strip():
            state.language = language_detect(result.resolved, default=language or settings.SEARCH_DEFAULT_LANGUAGE)
        if state.config.red_flags_enabled:  # the typed message passed the rules; the resolved one too?
            red_flags_route(state, text=state.question, via="followup")
