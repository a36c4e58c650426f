"""Prometheus figures of served answers (the metric objects live in ``core.observability``)."""

from __future__ import annotations

import logging

from core.observability import ANSWERS_TOTAL, GATE_DECISIONS_TOTAL, GATE_SCORE, REFUSALS_TOTAL, SEARCH_STAGE_SECONDS
from zolsearch.search.models import Answer

logger = logging.getLogger(__name__)


def search_observe(*, answer: Answer) -> None:
    """Record the search metrics of one stored ``answer``; never raises.

    Observes every ``answer.timings_ms`` entry (stage name → ms, ``total`` included) in
    ``zolsearch_search_stage_seconds`` (converted to seconds), the gate decision (``passed`` /
    ``rejected`` from ``answer.gate["passed"]``, ``not_run`` when the gate did not score) and its
    score (cosine scale, [-1, 1]), ``zolsearch_answers_total`` by outcome and channel, and
    ``zolsearch_refusals_total`` by outcome for every outcome other than ``answered``. Answers of
    evaluation runs count in ``zolsearch_answers_total`` only, so a run never shifts the live
    latency, gate and refusal figures. A failure is logged: metrics must not fail the request
    that served the answer.
    """
    try:
        ANSWERS_TOTAL.labels(outcome=answer.outcome, channel=answer.channel).inc()
        if answer.channel == answer.Channel.EVALUATION:
            return
        for stage, elapsed_ms in (answer.timings_ms or {}).items():
            SEARCH_STAGE_SECONDS.labels(stage=str(stage)).observe(float(elapsed_ms) / 1000.0)
        gate = answer.gate or {}
        if "passed" in gate:
            GATE_DECISIONS_TOTAL.labels(decision="passed" if gate["passed"] else "rejected").inc()
        else:
            GATE_DECISIONS_TOTAL.labels(decision="not_run").inc()
        if gate.get("score") is not None:
            GATE_SCORE.observe(float(gate["score"]))
        if answer.outcome != answer.Outcome.ANSWERED:
            REFUSALS_TOTAL.labels(reason=answer.outcome).inc()
    except Exception:
        logger.exception("recording the search metrics of answer %s failed", getattr(answer, "trace_id", "?"))
