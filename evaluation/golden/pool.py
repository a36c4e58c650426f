"""Pooling for incomplete judgements (TREC's method: grade the pages systems rank high that no one
has graded yet), as a spreadsheet evaluators fill in.

``benchmarks.retrieval_quality --pool-out FILE.csv`` writes the unjudged pages among each
question's first pages; an evaluator fills the ``grade`` column (the set's scale: hospital-nl
3 answers directly, 1 related, 0 does not answer) and the filled file is read back as extra
judgements (``--qrels FILE.csv`` beside the set's TREC qrels).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from evaluation.metrics.retrieval import url_normalise

if TYPE_CHECKING:
    from zolsearch.search.stages.base import SearchState

POOL_COLUMNS = ("qid", "question", "rank", "url", "title", "grade")


@dataclass(frozen=True)
class PoolRow:
    """One unjudged page of one question: its ``rank`` (1-based, among distinct pages) in the
    run that pooled it, its ``url`` and ``title``; ``grade`` "" until an evaluator fills it."""

    qid: str
    question: str
    rank: int
    url: str
    title: str
    grade: str = ""


def pool_rows(qid: str, question: str, state: SearchState, judgements: dict[str, int], *, depth: int) -> list[PoolRow]:
    """The unjudged pages among the first ``depth`` distinct pages of ``state.fused`` (the
    pipeline's ranking), with their rank among distinct pages, address and title as the index
    has them. A page is judged when its :func:`evaluation.metrics.retrieval.url_normalise` form
    is that of a url of ``judgements`` (url → grade); two addresses of one page count once.
    Raises ``ValueError`` for ``depth < 1``."""
    if depth < 1:
        raise ValueError(f"pool depth must be ≥ 1, got {depth}")
    judged = {url_normalise(url) for url in judgements}
    pages: dict[str, tuple[str, str]] = {}
    for chunk_id, _ in state.fused:
        chunk = state.chunks.get(chunk_id)
        if chunk is None or not chunk.document.url:
            continue
        pages.setdefault(url_normalise(chunk.document.url), (chunk.document.url, chunk.document.title))
        if len(pages) >= depth:
            break
    return [
        PoolRow(qid=qid, question=question, rank=rank, url=url, title=title)
        for rank, (page, (url, title)) in enumerate(pages.items(), start=1)
        if page not in judged
    ]


def pool_write(rows: Iterable[PoolRow], path: Path) -> int:
    """Write ``rows`` as CSV (UTF-8 with a byte-order mark, so spreadsheet programs read the
    accents; header :data:`POOL_COLUMNS`); returns the number of rows. Raises ``OSError`` when
    the file cannot be written."""
    assert tuple(f.name for f in fields(PoolRow)) == POOL_COLUMNS
    count = 0
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=POOL_COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow(asdict(row))
            count += 1
    return count


def pool_judgements_read(path: Path) -> dict[str, dict[str, int]]:
    """The graded rows of a pool file as ``{qid: {url: grade}}``; rows with an empty grade are
    skipped (not graded yet). Raises ``ValueError`` naming the file and line when a column is
    missing or a grade is not a whole number ≥ 0."""
    judgements: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"qid", "url", "grade"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: no column {', '.join(sorted(missing))}")
        for row in reader:
            text = (row.get("grade") or "").strip()
            if not text:
                continue
            if not text.isdigit():
                raise ValueError(f"{path}:{reader.line_num}: grade must be a whole number ≥ 0, not {text!r}")
            judgements.setdefault(str(row["qid"]).strip(), {})[str(row["url"]).strip()] = int(text)
    return judgements
