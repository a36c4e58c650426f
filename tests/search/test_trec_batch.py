"""TREC run writer/reader and the search_batch command."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from zolsearch.search.models import Answer
from zolsearch.search.trec import (
    TrecFormatError,
    TrecHit,
    TrecQrel,
    ranked_documents,
    trec_qrels_read,
    trec_qrels_write,
    trec_run_read,
    trec_run_write,
)


def test_trec_round_trip_and_format() -> None:
    hits = [TrecHit("q1", "medquad:GARD:0000004:1", 1, 0.0325, "run"), TrecHit("q1", "doc2", 2, 0.01, "run")]
    buffer = io.StringIO()
    assert trec_run_write(hits, buffer) == 2
    assert buffer.getvalue().splitlines()[0] == "q1 Q0 medquad:GARD:0000004:1 1 0.032500 run"
    buffer.seek(0)
    assert trec_run_read(buffer) == [
        TrecHit("q1", "medquad:GARD:0000004:1", 1, 0.0325, "run"),
        TrecHit("q1", "doc2", 2, 0.01, "run"),
    ]


@pytest.mark.parametrize(
    "bad", [TrecHit("q 1", "d", 1, 1.0, "t"), TrecHit("q", "", 1, 1.0, "t"), TrecHit("q", "d", 0, 1.0, "t")]
)
def test_trec_writer_refuses_fields_that_break_the_format(bad: TrecHit) -> None:
    with pytest.raises(TrecFormatError):
        trec_run_write([bad], io.StringIO())


def test_trec_reader_names_the_bad_line() -> None:
    with pytest.raises(TrecFormatError, match="line 2"):
        trec_run_read(io.StringIO("q1 Q0 d 1 0.5 t\nq1 d 2 0.4 t\n"))


def test_trec_qrels_round_trip_and_format() -> None:
    qrels = [TrecQrel("hospital-nl:h001", "https://www.uzgent.be/parkeren", 3), TrecQrel("hospital-nl:h001", "d2", 0)]
    buffer = io.StringIO()
    assert trec_qrels_write(qrels, buffer) == 2
    assert buffer.getvalue().splitlines()[0] == "hospital-nl:h001 0 https://www.uzgent.be/parkeren 3"
    buffer.seek(0)
    assert trec_qrels_read(buffer) == {"hospital-nl:h001": {"https://www.uzgent.be/parkeren": 3, "d2": 0}}
    for bad in (TrecQrel("q 1", "d", 1), TrecQrel("q", "", 1), TrecQrel("q", "d", -1)):
        with pytest.raises(TrecFormatError):
            trec_qrels_write([bad], io.StringIO())
    with pytest.raises(TrecFormatError, match="line 2"):
        trec_qrels_read(io.StringIO("q1 0 d 1\nq1 0 d\n"))
    with pytest.raises(TrecFormatError, match="line 1"):
        trec_qrels_read(io.StringIO("q1 0 d high\n"))


def test_ranked_documents_keeps_each_document_at_its_best_rank() -> None:
    rows = [
        {"external_id": "a", "rrf": 0.03},
        {"external_id": "b", "rrf": 0.02},
        {"external_id": "a", "rrf": 0.01},
        {"external_id": "c", "rrf": 0.005},
    ]
    assert ranked_documents(rows, k=2) == [("a", 0.03), ("b", 0.02)]
    assert ranked_documents(rows, k=10) == [("a", 0.03), ("b", 0.02), ("c", 0.005)]


def test_ranked_documents_breaks_rrf_ties_in_rank_order() -> None:
    """GIVEN two documents with the same RRF score (1/62 each) THEN the first keeps it and the
    second is lowered by 1e-6, so trec_eval (which sorts by score) sees our order."""
    rows = [{"external_id": "zeta", "rrf": 1 / 62}, {"external_id": "alpha", "rrf": 1 / 62}]
    (first, s1), (second, s2) = ranked_documents(rows, k=10)
    assert (first, second) == ("zeta", "alpha") and s1 - s2 == pytest.approx(1e-6, abs=1e-9)


@pytest.mark.django_db
def test_search_batch_writes_a_valid_run(tmp_path: Path) -> None:
    """GIVEN three MedQuAD questions WHEN search_batch runs with --k 5
    THEN a valid TREC run: per query ≤ 5 distinct documents, ranks 1..n, scores non-increasing,
    the ABCD question's own pair at rank 1, and one Answer stored per query."""
    queries = tmp_path / "queries.tsv"
    queries.write_text(
        "q1\tWhat are the symptoms of ABCD syndrome?\nq2\tWhat is Holmes-Adie syndrome?\n\nq3\tflu vaccine\n",
        encoding="utf-8",
    )
    out = tmp_path / "run.trec"
    call_command("search_batch", str(queries), "--out", str(out), "--k", "5", "--tag", "test", verbosity=0)
    with out.open() as handle:
        hits = trec_run_read(handle)
    by_query: dict[str, list[TrecHit]] = {}
    for hit in hits:
        by_query.setdefault(hit.qid, []).append(hit)
    assert set(by_query) == {"q1", "q2", "q3"}
    for qid, rows in by_query.items():
        assert [h.rank for h in rows] == list(range(1, len(rows) + 1)) and len(rows) <= 5
        assert len({h.docno for h in rows}) == len(rows)
        assert [h.score for h in rows] == sorted((h.score for h in rows), reverse=True)
        assert all(h.tag == "test" for h in rows), qid
    assert by_query["q1"][0].docno == "medquad:GARD:0000004:1"
    assert by_query["q2"][0].docno.startswith("medquad:NINDS:0000007:")
    assert Answer.objects.count() == 3


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("content", "message"), [("q1 no tab here\n", "queries.tsv:1"), ("q 1\tWhat?\n", "whitespace")]
)
def test_search_batch_rejects_a_malformed_queries_file(tmp_path: Path, content: str, message: str) -> None:
    queries = tmp_path / "queries.tsv"
    queries.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=message):
        call_command("search_batch", str(queries), "--out", str(tmp_path / "r.trec"), verbosity=0)
