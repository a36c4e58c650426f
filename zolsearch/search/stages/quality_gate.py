"""The fast quality gate stage (design step 9)."""

from __future__ import annotations

import numpy as np

from zolsearch.search import selectors
from zolsearch.search.contract import Outcome
from zolsearch.search.gate import gate_score
from zolsearch.search.generation import answer_plain
from zolsearch.search.stages.base import SearchState, Stage, StopPipeline


def draft_gate_vectors(state: SearchState) -> tuple[np.ndarray, np.ndarray]:
    """``(answer, context)`` vectors (``(d,)`` float32) the gate compares for ``state``'s draft:
    its retrieved part (before graph facts were pinned) embedded as a passage, and the mean of
    the context it was written from: FILCO's text of a filtered chunk (embedded now), else the
    chunk's stored vector (computed at ingestion). Gate calibration uses it too, so it scores
    what the gate scores."""
    assert state.draft is not None
    cited = state.draft.cited_chunk_ids
    filtered = [i for i in cited if i in state.filtered]
    # One encoder call for the answer and the filtered passages.
    embedded = state.provider.embed_passages(
        [answer_plain(state.documents_text or state.draft.text), *(state.filtered[i] for i in filtered)]
    )
    answer_vector, fresh = embedded[0], embedded[1:]
    stored = selectors.chunk_vectors(ids=[i for i in cited if i not in state.filtered], model_key=state.provider.key)
    if len(fresh):
        stored = np.vstack([fresh, stored]) if len(stored) else fresh
    return answer_vector, (stored.mean(axis=0) if len(stored) else answer_vector * 0)


class GateStage(Stage):
    """Fast quality gate: 0.7·cos(answer, context) + 0.3·cos(question, answer) ≥ threshold.

    Threshold: the calibrated one of the question's language, else the model's.
    Context vector: the mean of the stored vectors of the chunks the answer cites (computed at
    ingestion, so the gate embeds only the answer). Scores the retrieved part of the draft (the
    text before graph facts were pinned).
    """

    name = "gate"
    cached = True
    reads = frozenset({"draft", "documents_text", "query_vector", "provider", "config", "language", "filtered"})
    adds = frozenset({"gate"})

    def applies(self, state: SearchState) -> bool:
        return state.config.gate_enabled

    def run(self, state: SearchState) -> None:
        assert state.draft is not None and state.query_vector is not None
        answer, context = draft_gate_vectors(state)
        state.gate = gate_score(
            answer=answer,
            context=context,
            question=state.query_vector,
            threshold=state.config.gate_thresholds_by_language.get(state.language, state.config.gate_threshold),
        )
        if not state.gate.passed:
            state.trace.rejected_answer = state.draft.text
            raise StopPipeline(Outcome.GATE_REJECTED, "the answer did not pass the quality gate")
