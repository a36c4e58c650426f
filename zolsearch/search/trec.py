"""TREC run files (trec_eval's format): ``qid Q0 docno rank score tag``, one line per hit; and
qrels files, ``qid 0 docno grade``, one line per judgement.

Ranks start at 1 and scores decrease down each query's list, which is what trec_eval sorts on
(it reads the score, not the rank; ties are broken by docno, so :func:`ranked_documents`
makes scores strictly decreasing down each list).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TextIO

_NO_SPACE = re.compile(r"^\S+$")


class TrecFormatError(ValueError):
    """A field would break the whitespace-separated format, or a line cannot be parsed."""


@dataclass(frozen=True)
class TrecHit:
    """One line of a run: document ``docno`` at ``rank`` (1-based) with ``score`` for ``qid``."""

    qid: str
    docno: str
    rank: int
    score: float
    tag: str


def _fields_check(record: object, names: tuple[str, ...]) -> None:
    """Raise :class:`TrecFormatError` when a field of ``record`` named in ``names`` is empty or
    holds whitespace (the format splits on it)."""
    for name in names:
        if not _NO_SPACE.match(getattr(record, name)):
            raise TrecFormatError(f"TREC {name} must be non-empty without whitespace: {getattr(record, name)!r}")


def trec_run_write(hits: Iterable[TrecHit], handle: TextIO) -> int:
    """Write ``hits`` in order; returns the number of lines. Raises :class:`TrecFormatError`
    when a qid, docno or tag is empty or contains whitespace, or a rank is < 1."""
    lines = 0
    for hit in hits:
        _fields_check(hit, ("qid", "docno", "tag"))
        if hit.rank < 1:
            raise TrecFormatError(f"TREC rank must be ≥ 1, got {hit.rank}")
        handle.write(f"{hit.qid} Q0 {hit.docno} {hit.rank} {hit.score:.6f} {hit.tag}\n")
        lines += 1
    return lines


def trec_run_read(handle: TextIO) -> list[TrecHit]:
    """Parse a run file. Raises :class:`TrecFormatError` with the line number on a bad line."""
    hits = []
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6 or parts[1] != "Q0":
            raise TrecFormatError(f"line {number}: expected 'qid Q0 docno rank score tag', got {line.strip()!r}")
        try:
            hits.append(TrecHit(qid=parts[0], docno=parts[2], rank=int(parts[3]), score=float(parts[4]), tag=parts[5]))
        except ValueError as exc:
            raise TrecFormatError(f"line {number}: {exc}") from exc
    return hits


@dataclass(frozen=True)
class TrecQrel:
    """One judgement: document ``docno`` has integer ``grade`` (0 non-relevant) for ``qid``."""

    qid: str
    docno: str
    grade: int


def trec_qrels_write(qrels: Iterable[TrecQrel], handle: TextIO) -> int:
    """Write ``qrels`` as trec_eval reads them (``qid 0 docno grade``), in order; returns the
    number of lines. Raises :class:`TrecFormatError` when a qid or docno is empty or contains
    whitespace, or a grade is negative."""
    lines = 0
    for qrel in qrels:
        _fields_check(qrel, ("qid", "docno"))
        if qrel.grade < 0:
            raise TrecFormatError(f"TREC grade must be ≥ 0, got {qrel.grade}")
        handle.write(f"{qrel.qid} 0 {qrel.docno} {qrel.grade}\n")
        lines += 1
    return lines


def trec_qrels_read(handle: TextIO) -> dict[str, dict[str, int]]:
    """Parse a qrels file into ``{qid: {docno: grade}}`` (a repeated judgement: the last wins).
    Raises :class:`TrecFormatError` with the line number on a bad line."""
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise TrecFormatError(f"line {number}: expected 'qid iteration docno grade', got {line.strip()!r}")
        try:
            qrels.setdefault(parts[0], {})[parts[2]] = int(parts[3])
        except ValueError as exc:
            raise TrecFormatError(f"line {number}: {exc}") from exc
    return qrels


def ranked_documents(chunk_scores: Sequence[dict[str, object]], *, k: int) -> list[tuple[str, float]]:
    """Documents of a ranked chunk list, each at its best chunk's rank: ``[(external_id, score)]``.

    ``chunk_scores`` is ``Answer.chunk_scores`` (rank order, with ``external_id`` and ``rrf``).
    Returns at most ``k`` documents, best first, with strictly decreasing scores: RRF ties are
    common and trec_eval breaks score ties by docno, not by our rank, so a tied score is
    lowered by 1e-6 per position (scores are written with six decimals).
    """
    seen: dict[str, float] = {}
    previous = float("inf")
    for row in chunk_scores:
        external_id = row.get("external_id")
        if isinstance(external_id, str) and external_id not in seen:
            score = min(float(row.get("rrf") or 0.0), previous - 1e-6)  # type: ignore[arg-type]
            seen[external_id] = round(score, 6)
            previous = seen[external_id]
        if len(seen) >= k:
            break
    return list(seen.items())
