"""The fast quality gate (design brief, pipeline step 9).

``score = 0.7 · cos(answer, context) + 0.3 · cos(question, answer)``: an answer must stay close
to the context it claims to come from (context alignment, weight 0.7) and to the question
(semantic similarity, weight 0.3). The weights come from the anchor system's gate; thresholds are
per embedding model because cosine scales differ between models (e5 cosines cluster in 0.7–0.9).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

CONTEXT_WEIGHT = 0.7
QUESTION_WEIGHT = 0.3


@dataclass(frozen=True)
class GateResult:
    """Gate outcome; cosines and score in [-1, 1]."""

    score: float
    context_alignment: float
    semantic_similarity: float
    threshold: float
    passed: bool

    def as_dict(self) -> dict[str, float | bool]:
        return asdict(self)


def gate_score(*, answer: np.ndarray, context: np.ndarray, question: np.ndarray, threshold: float) -> GateResult:
    """Score an answer. Inputs are 1-D float vectors of one model (normalised here).

    Raises ``ValueError`` when the shapes differ (vectors of different models).
    """
    if not (answer.shape == context.shape == question.shape):
        raise ValueError(f"gate vectors differ in shape: {answer.shape}, {context.shape}, {question.shape}")

    def unit(v: np.ndarray) -> np.ndarray:
        norm = float(np.linalg.norm(v))
        return v / norm if norm else v

    a, c, q = unit(answer.astype(np.float64)), unit(context.astype(np.float64)), unit(question.astype(np.float64))
    alignment = float(np.clip(a @ c, -1.0, 1.0))
    similarity = float(np.clip(q @ a, -1.0, 1.0))
    score = CONTEXT_WEIGHT * alignment + QUESTION_WEIGHT * similarity
    return GateResult(
        score=round(score, 6),
        context_alignment=round(alignment, 6),
        semantic_similarity=round(similarity, 6),
        threshold=threshold,
        passed=score >= threshold,
    )
