"""Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms
Condorcet and individual Rank Learning Methods", SIGIR 2009)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def rrf_fuse[K: Hashable](rankings: Sequence[Sequence[K]], *, k: int = 60) -> list[tuple[K, float]]:
    """Fuse ranked lists: ``score(d) = Σ_i 1 / (k + rank_i(d))`` with ranks starting at 1.

    ``rankings``: each a list of ids, best first (an id absent from a list adds nothing; an id
    repeated in one list counts once, at its best rank there). Returns ``(id, score)`` pairs,
    best first; ties keep the order of first appearance (earliest best rank, then earlier list).
    Scores are in (0, len(rankings) / (k + 1)]. Raises ``ValueError`` when ``k`` < 0.
    """
    if k < 0:
        raise ValueError("RRF k must be ≥ 0")
    scores: dict[K, float] = {}
    first_seen: dict[K, tuple[int, int]] = {}
    for list_index, ranking in enumerate(rankings):
        seen: set[K] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:  # a repeat would count the id twice and break the bound above
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(item, (rank, list_index))
            if (rank, list_index) < first_seen[item]:
                first_seen[item] = (rank, list_index)
    return sorted(scores.items(), key=lambda pair: (-pair[1], first_seen[pair[0]]))


def fused_boost[K: Hashable](fused: Sequence[tuple[K, float]], multipliers: dict[K, float]) -> list[tuple[K, float]]:
    """Multiply fused scores by per-id ``multipliers`` (missing: 1.0) and re-sort, best first.

    Metadata boosting after fusion (design step 4: source authority, the question's language):
    a multiplier keeps RRF's scale and its ordering among equally boosted ids. The sort is
    stable, so ties keep the fused order.
    """
    boosted = [(item, score * multipliers.get(item, 1.0)) for item, score in fused]
    return sorted(boosted, key=lambda pair: -pair[1])
