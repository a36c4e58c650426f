"""Pooling for incomplete judgements (TREC's method: grade the pages systems rank high that no one
has graded yet), as a spreadsheet evaluators fill in.

``benchmarks.retrieval_quality --pool-out FILE.csv`` writes the unjudged pages among each
question's first pages; an evaluator fills the ``grade`` column (the set's scale: hospital-nl
3 answers directly, 1 related, 0 does not answer) and the filled file is read back as extra
judgements (``--qrels FILE.csv`` beside the set's TREC qrels).
"""

from __future__ import annotations

import argparse
import csv
import random
from collections.abc import Iterable, Iterator
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
    for line, row in _rows(path, required={"qid", "url", "grade"}):
        text = (row.get("grade") or "").strip()
        if not text:
            continue
        if not text.isdigit():
            raise ValueError(f"{path}:{line}: grade must be a whole number ≥ 0, not {text!r}")
        judgements.setdefault(str(row["qid"]).strip(), {})[str(row["url"]).strip()] = int(text)
    return judgements


def _rows(path: Path, *, required: set[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, row)`` of a pool CSV (UTF-8, with or without a byte-order mark); raises
    ``ValueError`` naming the file when a ``required`` column is missing."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = required - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: no column {', '.join(sorted(missing))}")
        for row in reader:
            yield reader.line_num, row


@dataclass(frozen=True)
class PoolAgreement:
    """Agreement of two assessors over the (qid, url) pairs both graded: ``pairs`` (count),
    ``observed`` (share of equal grades, [0, 1]), ``kappa`` (Cohen's kappa over the grades as
    categories) and ``kappa_relevant`` (over grade ≥ ``relevant_grade`` or not), each in [−1, 1]
    or ``None`` when undefined (:func:`evaluation.calibration.cohen_kappa`)."""

    pairs: int
    observed: float
    kappa: float | None
    kappa_relevant: float | None
    relevant_grade: int


def pool_agreement(first: Path, second: Path, *, relevant_grade: int = 3) -> PoolAgreement:
    """How far two graded pool files (:func:`pool_judgements_read`) agree on the pairs both
    graded; addresses compared after :func:`evaluation.metrics.retrieval.url_normalise`. Raises
    ``ValueError`` when they share no graded pair (or as :func:`pool_judgements_read`)."""
    from evaluation.calibration import cohen_kappa

    def grades(path: Path) -> dict[tuple[str, str], int]:
        return {
            (qid, url_normalise(url)): grade
            for qid, by_url in pool_judgements_read(path).items()
            for url, grade in by_url.items()
        }

    a, b = grades(first), grades(second)
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ValueError(f"{first} and {second} share no graded (qid, url) pair")
    x, y = [a[k] for k in shared], [b[k] for k in shared]
    return PoolAgreement(
        pairs=len(shared),
        observed=sum(p == q for p, q in zip(x, y, strict=True)) / len(shared),
        kappa=cohen_kappa(x, y),
        kappa_relevant=cohen_kappa([int(p >= relevant_grade) for p in x], [int(q >= relevant_grade) for q in y]),
        relevant_grade=relevant_grade,
    )


def pool_merge(paths: Iterable[Path], *, seed: int = 27) -> list[PoolRow]:
    """The rows of several pool files (:func:`pool_write`'s columns; e.g. one per run, TREC's
    pooling over systems) as one pool to grade blind: each (qid, page) once (first file wins;
    pages compared after :func:`evaluation.metrics.retrieval.url_normalise`), the grade kept
    when a file has one, ``rank`` 0 (an assessor should not see how high a run put a page) and
    the rows in a random order (``random.Random(seed)``: the same files and seed give the same
    file). Raises ``ValueError`` naming a file without the columns qid, url and question."""
    merged: dict[tuple[str, str], PoolRow] = {}
    for path in paths:
        for _, row in _rows(path, required={"qid", "question", "url"}):
            qid, url = str(row["qid"]).strip(), str(row["url"]).strip()
            merged.setdefault(
                (qid, url_normalise(url)),
                PoolRow(
                    qid=qid,
                    question=row["question"],
                    rank=0,
                    url=url,
                    title=row.get("title") or "",
                    grade=(row.get("grade") or "").strip(),
                ),
            )
    rows = list(merged.values())
    random.Random(seed).shuffle(rows)
    return rows


def main(argv: list[str] | None = None) -> None:
    """``python -m evaluation.golden.pool agreement FIRST.csv SECOND.csv [--relevant-grade 3]``:
    print :func:`pool_agreement` of two assessors' graded pool files; ``python -m
    evaluation.golden.pool merge RUN.csv … --out POOL.csv [--seed 27]``: write :func:`pool_merge`
    of several runs' pool files (``benchmarks.retrieval_quality --pool-out``)."""
    parser = argparse.ArgumentParser(prog="python -m evaluation.golden.pool", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    agree = sub.add_parser("agreement", help="Cohen's kappa of two assessors on the pairs both graded.")
    agree.add_argument("first", type=Path)
    agree.add_argument("second", type=Path)
    agree.add_argument("--relevant-grade", type=int, default=3)
    merge = sub.add_parser(
        "merge", help="One blind pool (each page once, no ranks, shuffled) from several runs' pools."
    )
    merge.add_argument("pools", type=Path, nargs="+")
    merge.add_argument("--out", type=Path, required=True)
    merge.add_argument("--seed", type=int, default=27)
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            count = pool_write(pool_merge(args.pools, seed=args.seed), args.out)
            print(f"{count} (question, page) pairs from {len(args.pools)} pool files written to {args.out}")
            return
        result = pool_agreement(args.first, args.second, relevant_grade=args.relevant_grade)
    except (OSError, ValueError) as exc:
        parser.exit(2, f"error: {exc}\n")

    def shown(value: float | None) -> str:
        return "undefined" if value is None else f"{value:.3f}"

    print(
        f"{result.pairs} pairs graded by both: {result.observed:.1%} equal grades, Cohen's kappa "
        f"{shown(result.kappa)}; relevant (grade ≥ {result.relevant_grade}) or not: kappa {shown(result.kappa_relevant)}"
    )


if __name__ == "__main__":
    main()
