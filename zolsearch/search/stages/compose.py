"""Composition of the reply (always runs): the answer, a graph-only routing answer, a fallback,
a refusal or a red-flag route, each entirely in the answer's language."""

from __future__ import annotations

from zolsearch.search.contract import Generator, Outcome, RefusalReason
from zolsearch.search.generation import Draft, draft_pin
from zolsearch.search.messages import emergency_notice, fallback_message, red_flag_message, refusal_message
from zolsearch.search.stages.base import SearchState, Stage

MESSAGES_MODEL = "zolsearch-messages/1"  # fixed texts of zolsearch/search/messages.py
TAXONOMY_MODEL = "zolsearch-taxonomy/1"  # sentences written from the graph's facts


class ComposeStage(Stage):
    """Turn the state into the reply.

    - no stop: the draft (with the one-line 112 notice first when the question is informational
      about an emergency condition);
    - ``red_flag``: the routing message only (no retrieved content, never gated);
    - ``refused``: the refusal with a route to a human; for individual medical advice the graph's
      department facts lead it (page and phone of the relevant department);
    - ``gate_rejected`` / ``no_results``: a routing question is answered by the graph alone
      (outcome ``answered``, generator ``taxonomy``); anything else gets the fallback, led by the
      graph's facts when it has some. The refused draft stays in the trace for review.
    """

    name = "compose"
    always = True
    reads = frozenset({"stop", "draft", "pinned", "routing", "red_flag", "refusal", "emergency_notice", "language"})
    adds = frozenset({"outcome", "answer", "citations", "generator", "generator_model", "draft"})

    def run(self, state: SearchState) -> None:
        stop, draft, language = state.stop, state.draft, state.language
        if draft is not None:
            state.trace.cited_chunk_ids = list(draft.cited_chunk_ids)
        if stop is None:
            assert draft is not None
            state.outcome, state.citations = Outcome.ANSWERED, list(draft.citations)
            state.generator, state.generator_model = draft.generator, draft.model
            state.answer = f"{emergency_notice(language)} {draft.text}" if state.emergency_notice else draft.text
            return
        if draft is not None:
            state.trace.draft_citations = [c.public() for c in draft.citations]
        graph = draft_pin(
            draft=Draft(text="", citations=[], cited_chunk_ids=[], generator=Generator.TAXONOMY, model=TAXONOMY_MODEL),
            facts=state.pinned,
            language=language,
        )
        state.generator, state.generator_model = Generator.FALLBACK, MESSAGES_MODEL
        if stop.outcome == Outcome.RED_FLAG:
            assert state.red_flag is not None
            state.outcome, state.citations = Outcome.RED_FLAG, []
            state.generator = Generator.RED_FLAG
            state.answer = red_flag_message(state.red_flag.category, language)
            return
        if stop.outcome == Outcome.REFUSED:
            assert state.refusal is not None
            state.outcome, state.generator = Outcome.REFUSED, Generator.REFUSAL
            state.answer = refusal_message(state.refusal, language)
            if state.refusal == RefusalReason.MEDICAL_ADVICE and state.pinned:
                state.answer = f"{state.answer} {graph.text}"
                state.citations = list(graph.citations)
                state.trace.fallback_citations = [c.public() for c in graph.citations]
            return
        if state.routing:
            # The graph is the authority for routing: it answers "where / which department /
            # which doctor" by itself when the retrieved text was rejected or found nothing.
            state.draft = graph
            state.trace.cited_chunk_ids = []
            state.outcome, state.answer, state.citations = Outcome.ANSWERED, graph.text, list(graph.citations)
            state.generator, state.generator_model = Generator.TAXONOMY, TAXONOMY_MODEL
            state.trace.graph_answer = f"{stop.outcome}: the graph answers the routing question alone"
            return
        state.outcome = stop.outcome
        state.answer = fallback_message(language)
        if state.pinned:
            # The graph still knows who can help: its facts lead the fallback, cited.
            state.answer = f"{graph.text} {state.answer}"
            state.citations = list(graph.citations)
            state.trace.fallback_citations = [c.public() for c in graph.citations]
