"""Golden set builder: hospital-nl (real Dutch hospital pages with patient questions).

Source: ``shared/data/hospital-nl`` (see its README): 111 patient questions over 100 public
patient-information pages of Belgian and Dutch hospitals, graded 3 (answers directly) or 1
(related). The pages belong to their hospitals: they are read in place, for development and tests
only, and never committed; the built set is written outside the repository
(``.data/golden/hospital-nl.jsonl``) for the same reason.
"""

from __future__ import annotations

from pathlib import Path

from core.jsonl import jsonl_objects
from evaluation.golden.builders.common import _hash_int
from evaluation.golden.io import GoldenItem
from zolsearch.search.trec import TrecQrel

# Share of questions (by hash of the qid) in the dev split, in percent; the rest is held out.
HOSPITAL_NL_DEV_PERCENT = 50
HOSPITAL_NL_DIRECT_GRADE = 3


def hospital_nl_split_of(qid: str) -> str:
    """``"dev"`` or ``"heldout"`` for a hospital-nl ``qid`` (stable hash, 50 / 50)."""
    return "dev" if _hash_int(f"hospital-nl:{qid}") % 100 < HOSPITAL_NL_DEV_PERCENT else "heldout"


def _questions_file(path: Path) -> Path:
    """``path/questions.jsonl``, or ``path`` itself when it is a file; raises ``ValueError``
    when there is none."""
    questions = path / "questions.jsonl" if path.is_dir() else path
    if not questions.is_file():
        raise ValueError(f"no questions.jsonl at {path}")
    return questions


def hospital_nl_golden(*, path: Path) -> list[GoldenItem]:
    """One item per question of ``path/questions.jsonl``, in file order.

    ``qid`` = ``hospital-nl:<qid>``; ``expected_urls`` = the pages graded 3 (they answer the
    question directly; the README's grade 1 pages are only related and are named in ``notes``);
    ``category`` = the set's category; language as given; tags ``[split, "hospital-nl"]`` with the
    split of :func:`hospital_nl_split_of`; no expected entities (the set judges pages).
    Raises ``ValueError`` when the file is missing or a line lacks a field.
    """
    questions = _questions_file(path)
    items = []
    for number, row in jsonl_objects(questions):
        try:
            qid, grades = str(row["qid"]), dict(row["grades"])  # type: ignore[call-overload]
            expected = [str(url) for url in row["expected_urls"]]  # type: ignore[attr-defined]
            direct = [url for url in expected if grades.get(url) == HOSPITAL_NL_DIRECT_GRADE]
            related = [url for url in expected if grades.get(url) != HOSPITAL_NL_DIRECT_GRADE]
            items.append(
                GoldenItem(
                    qid=f"hospital-nl:{qid}",
                    question=str(row["question"]),
                    language=str(row["language"]),
                    category=str(row["category"]),
                    expected_urls=tuple(direct),
                    tags=(hospital_nl_split_of(qid), "hospital-nl"),
                    notes="related (grade 1): " + ", ".join(related) if related else "",
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{questions}:{number}: {exc}") from exc
    return items


def hospital_nl_qrels(*, path: Path) -> list[TrecQrel]:
    """Every judgement of ``path/questions.jsonl`` (or that file) as TREC qrels, in file order:
    ``qid`` = ``hospital-nl:<qid>`` (as :func:`hospital_nl_golden` names the items), ``docno``
    = the page's url as the set gives it, ``grade`` = its grade (3 answers directly, 1 related).
    A page without a grade is unjudged (the README: judgements are not exhaustive), so it has no
    line. Raises ``ValueError`` when the file is missing or a line lacks a field."""
    questions = _questions_file(path)
    qrels = []
    for number, row in jsonl_objects(questions):
        try:
            grades = dict(row["grades"])  # type: ignore[call-overload]
            qrels += [TrecQrel(f"hospital-nl:{row['qid']}", str(url), int(grade)) for url, grade in grades.items()]
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{questions}:{number}: {exc}") from exc
    return qrels
