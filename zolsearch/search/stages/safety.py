"""Safety stages: red flags first, the input guard before retrieval, the output guard after
generation (issue 9)."""

from __future__ import annotations

from core.observability import RED_FLAGS_TOTAL
from zolsearch.search.contract import GuardTrace, Outcome, RedFlagCategory, RedFlagTrace, RefusalReason
from zolsearch.search.safety.guard import input_guard_decide, output_guard_decide
from zolsearch.search.safety.redflag_model import red_flag_classify
from zolsearch.search.safety.redflags import RedFlagHit, red_flag_detect
from zolsearch.search.stages.base import SearchState, Stage, StopPipeline


def red_flags_route(state: SearchState, *, text: str, via: str = "") -> None:
    """The red-flag rules on ``text``: a route stops the run with outcome ``red_flag`` (counted in
    ``zolsearch_red_flags_total``); an informational hit sets ``emergency_notice``. The first hit
    of a request is recorded on the trace, its rule prefixed with ``via`` ("followup") when the
    text is not the message as typed. Raises :class:`StopPipeline`."""
    hit = red_flag_detect(text)
    if hit is None:
        return
    rule = f"{via}: {hit.rule}" if via else hit.rule
    if state.trace.red_flag is None:
        state.trace.red_flag = RedFlagTrace(
            category=hit.category, number=hit.number, rule=rule, notice_only=hit.notice_only
        )
    if hit.notice_only:
        state.emergency_notice = True
        return
    _red_flag_stop(state, hit, rule=rule)


def _red_flag_stop(state: SearchState, hit: RedFlagHit, *, rule: str) -> None:
    """Route ``hit``: the state keeps it, the metric counts it, the run stops."""
    state.red_flag = hit
    RED_FLAGS_TOTAL.labels(category=hit.category.value).inc()
    raise StopPipeline(Outcome.RED_FLAG, f"red flag {hit.category.value} ({rule})")


class RedFlagStage(Stage):
    """Emergency, poisoning, suicide and out-of-hours cues → the number to call, nothing else.

    Runs before retrieval on every request (rules, well under a millisecond). An informational
    question about an emergency condition is not routed: it sets ``emergency_notice`` and the
    answer gets the one-line 112 notice.
    """

    name = "red_flags"
    reads = frozenset({"request", "config"})
    adds = frozenset({"red_flag", "emergency_notice"})

    def applies(self, state: SearchState) -> bool:
        return state.config.red_flags_enabled

    def run(self, state: SearchState) -> None:
        red_flags_route(state, text=state.request.question)


class RedFlagModelStage(Stage):
    """The second red-flag detector (a classifier over the query vector) for messages the rules
    did not route and did not mark informational; routes like the rules do."""

    name = "red_flags_model"
    reads = frozenset({"request", "config", "query_vector", "provider", "emergency_notice"})
    adds = frozenset({"red_flag"})

    def applies(self, state: SearchState) -> bool:
        return state.config.red_flags_enabled and state.config.red_flag_model_enabled and not state.emergency_notice

    def run(self, state: SearchState) -> None:
        assert state.query_vector is not None
        hit, _ = red_flag_classify(
            text=state.request.question,
            vector=state.query_vector,
            provider=state.provider,
            threshold=state.config.red_flag_model_threshold,
        )
        if hit is None:
            return
        state.trace.red_flag = RedFlagTrace(category=hit.category, number=hit.number, rule=hit.rule)
        _red_flag_stop(state, hit, rule=hit.rule)


class InputGuardStage(Stage):
    """Refuse individual medical advice, harmful and out-of-purpose requests before retrieval.

    Reads the question's query vector (embedded once for retrieval too) for the offline
    classifier, or asks the configured safety model. A question classified as individual advice
    that is a routing question the graph answers ("ik heb X, waar moet ik heen?") is allowed.
    """

    name = "input_guard"
    reads = frozenset({"request", "config", "query_vector", "provider", "routing"})
    adds = frozenset({"refusal"})

    def applies(self, state: SearchState) -> bool:
        return state.config.input_guard_enabled

    def run(self, state: SearchState) -> None:
        assert state.query_vector is not None
        decision = input_guard_decide(
            text=state.request.question,
            vector=state.query_vector,
            provider=state.provider,
            threshold=state.config.guard_threshold,
            guard_model=state.config.guard_model,
            fail_open=state.config.guard_fail_open,
        )
        state.trace.guards.append(
            GuardTrace(
                stage=self.name,
                label=decision.label,
                probabilities=decision.probabilities,
                rule=decision.rule,
                backend=decision.backend,
                error=decision.error,
            )
        )
        if decision.label == RefusalReason.MEDICAL_ADVICE and state.routing:
            # "Ik heb suikerziekte, waar moet ik heen?" asks where to go, and the graph knows:
            # routing is the product's purpose, not individual advice.
            state.trace.guards[-1].rule = "allowed: a routing question the graph answers"
            return
        if decision.refused:
            state.refusal = RefusalReason(decision.label)
            raise StopPipeline(Outcome.REFUSED, f"input guard: {decision.label}")


class OutputGuardStage(Stage):
    """Refuse a draft that addresses the asker with a dose or a diagnosis; re-check the question
    for red flags the input check missed (a disabled red-flag stage, a new phrasing) and add the
    112 notice to drafts with another country's emergency instructions."""

    name = "output_guard"
    cached = True
    reads = frozenset({"draft", "request", "config"})
    adds = frozenset({"refusal", "emergency_notice", "red_flag"})

    def applies(self, state: SearchState) -> bool:
        return state.config.output_guard_enabled and state.draft is not None

    def run(self, state: SearchState) -> None:
        assert state.draft is not None
        if not state.config.red_flags_enabled:
            hit = red_flag_detect(state.request.question)
            if hit is not None and not hit.notice_only:
                self._route(state, hit)
        decision = output_guard_decide(draft=state.draft.text)
        state.trace.guards.append(
            GuardTrace(stage=self.name, label="unsafe_output" if decision.refused else "allowed", rule=decision.rule)
        )
        if decision.refused:
            state.trace.rejected_answer = state.draft.text
            state.refusal = RefusalReason.UNSAFE_OUTPUT
            raise StopPipeline(Outcome.REFUSED, f"output guard: {decision.rule}")
        state.emergency_notice = state.emergency_notice or decision.emergency_notice

    @staticmethod
    def _route(state: SearchState, hit: RedFlagHit) -> None:
        state.red_flag = hit
        state.trace.red_flag = RedFlagTrace(category=hit.category, number=hit.number, rule=f"output: {hit.rule}")
        RED_FLAGS_TOTAL.labels(category=RedFlagCategory(hit.category).value).inc()
        raise StopPipeline(Outcome.RED_FLAG, f"red flag found after generation ({hit.rule})")
