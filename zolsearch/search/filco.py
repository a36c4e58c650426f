"""FILCO: sentence-level filtering of the retrieved context before the answer is written (Wang et
al., "Learning to Filter Context for Retrieval-Augmented Generation", 2023; seed 004's rules).

Each sentence of an answer chunk (abbreviation-safe splitting, :func:`core.text.sentences_split`)
is scored by the cosine of its embedding with the question's; sentences below the threshold are
dropped, lowest first, while at most ``max_removed`` of the chunk's sentences go and at least
``min_kept`` stay. Seed 004 bypassed short and cross-lingual queries (one-word or translated
questions score every sentence low); the stage does the same.
"""

from __future__ import annotations

from collections.abc import Sequence


def filco_keep(scores: Sequence[float], *, threshold: float, max_removed: float, min_kept: int) -> list[bool]:
    """Keep mask over sentences with ``scores`` (cosines in [-1, 1], in reading order).

    Sentences scoring below ``threshold`` are removed lowest first, up to ⌊``max_removed`` · n⌋
    (``max_removed`` in [0, 1]) and never below ``min_kept`` kept (≥ 0). Ties keep the earlier
    sentence. Raises ``ValueError`` for ``max_removed`` outside [0, 1] or ``min_kept`` < 0.
    """
    if not 0.0 <= max_removed <= 1.0 or min_kept < 0:
        raise ValueError("max_removed must be in [0, 1] and min_kept ≥ 0")
    n = len(scores)
    budget = min(int(max_removed * n), max(n - min_kept, 0))
    below = sorted((s, -i, i) for i, s in enumerate(scores) if s < threshold)
    removed = {i for _, _, i in below[:budget]}
    return [i not in removed for i in range(n)]
