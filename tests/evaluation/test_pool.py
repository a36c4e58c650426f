"""Pooling unjudged pages for evaluators to grade (evaluation.golden.pool)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.golden.pool import PoolRow, pool_judgements_read, pool_rows, pool_write
from evaluation.metrics.retrieval import url_normalise
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import SearchRequest, pipeline_run


def test_a_pool_file_reads_back_the_grades_evaluators_filled_in(tmp_path: Path) -> None:
    """GIVEN a written pool with accented text WHEN an evaluator grades two rows and leaves one
    empty THEN the graded rows come back as judgements and the empty one is not a judgement."""
    path = tmp_path / "pool.csv"
    rows = [
        PoolRow("hospital-nl:h001", "tot hoe laat mag ik op bezoek", 1, "https://a.be/bezoek", "Bezoekuren é"),
        PoolRow("hospital-nl:h001", "tot hoe laat mag ik op bezoek", 2, "https://b.be/x", "Opname"),
        PoolRow("hospital-nl:h002", "mogen we bloemen meebrengen", 1, "https://c.nl/y", "Bloemen"),
    ]
    assert pool_write(rows, path) == 3
    text = path.read_text(encoding="utf-8-sig")
    assert text.splitlines()[0] == "qid,question,rank,url,title,grade" and "Bezoekuren é" in text
    lines = text.splitlines()
    lines[1] += "3"
    lines[3] += " 0 "
    path.write_text("\n".join(lines) + "\n", encoding="utf-8-sig")
    assert pool_judgements_read(path) == {
        "hospital-nl:h001": {"https://a.be/bezoek": 3},
        "hospital-nl:h002": {"https://c.nl/y": 0},
    }


def test_a_pool_file_with_a_bad_grade_or_no_grade_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "pool.csv"
    path.write_text("qid,question,rank,url,title,grade\nq1,v,1,https://a.be/x,T,drie\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"pool.csv:2: grade must be a whole number"):
        pool_judgements_read(path)
    path.write_text("qid,url\nq1,https://a.be/x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no column grade"):
        pool_judgements_read(path)


@pytest.mark.django_db
def test_the_pool_holds_the_unjudged_first_pages_of_a_real_ranking() -> None:
    """GIVEN the pipeline's ranking of a question over the bundled MedQuAD slice WHEN its first
    page is judged THEN the pool of depth 3 holds the other distinct pages among the first three
    (ranks 2 and 3), each once; with nothing judged it starts at rank 1; depth 0 is refused."""
    state = pipeline_run(
        request=SearchRequest(question="What are the symptoms of glaucoma?", language="en"),
        config=pipeline_config_default(),
    )
    urls: list[str] = []
    for chunk_id, _ in state.fused:
        url = state.chunks[chunk_id].document.url
        if url_normalise(url) not in {url_normalise(u) for u in urls}:
            urls.append(url)
    assert len(urls) >= 3, urls
    pooled = pool_rows("q1", "glaucoma", state, {urls[0]: 3}, depth=3)
    assert [(r.rank, r.url) for r in pooled] == [(2, urls[1]), (3, urls[2])]
    assert all(r.title and r.grade == "" for r in pooled)
    assert [r.rank for r in pool_rows("q1", "glaucoma", state, {}, depth=2)] == [1, 2]
    with pytest.raises(ValueError):
        pool_rows("q1", "glaucoma", state, {}, depth=0)


def test_two_assessors_agreement_is_cohens_kappa_on_the_pairs_both_graded(tmp_path: Path) -> None:
    """GIVEN two graded pool files sharing four pairs (one written with a trailing slash), each
    with a pair the other lacks WHEN compared THEN only the shared pairs count: 3 of 4 equal,
    kappa 0.636 over the grades (p_o 0.75, p_e 5/16: Cohen 1960), 1.0 for grade 3 or not and 0.5
    for grade ≥ 1 or not; files sharing nothing are refused."""
    from evaluation.golden.pool import main, pool_agreement

    first, second, other = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    first.write_text(
        "qid,url,grade\nq1,https://a.be/x,3\nq1,https://a.be/y,0\nq2,https://b.nl/z,1\nq2,https://b.nl/w,0\n"
        "q3,https://c.be/v,3\n",
        encoding="utf-8",
    )
    second.write_text(
        "qid,url,grade,reason\nq1,https://a.be/x/,3,ok\nq1,https://a.be/y,1,topic\nq2,https://b.nl/z,1,\n"
        "q2,https://b.nl/w,0,\nq4,https://d.nl/u,0,\n",
        encoding="utf-8",
    )
    result = pool_agreement(first, second)
    assert (result.pairs, result.observed, result.kappa_relevant) == (4, 0.75, 1.0)
    assert result.kappa == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16))
    assert pool_agreement(first, second, relevant_grade=1).kappa_relevant == pytest.approx(0.5)
    other.write_text("qid,url,grade\nq9,https://e.be/t,3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="share no graded"):
        pool_agreement(first, other)
    with pytest.raises(SystemExit):
        main(["agreement", str(first), str(other)])


def test_pools_of_several_runs_merge_into_one_blind_pool(tmp_path: Path) -> None:
    """GIVEN two runs' pool files sharing a page (one writing it with a trailing slash), one row
    already graded WHEN merged THEN each (question, page) is there once with the first file's
    address, the grade is kept, no rank is shown, the same seed gives the same order, and a file
    without a url column is refused."""
    from evaluation.golden.pool import main, pool_merge

    first, second = tmp_path / "bm25.csv", tmp_path / "dense.csv"
    pool_write(
        [
            PoolRow("h1", "tot hoe laat bezoek", 1, "https://a.be/bezoek", "Bezoek"),
            PoolRow("h1", "tot hoe laat bezoek", 2, "https://b.nl/x", "Opname", grade="0"),
        ],
        first,
    )
    pool_write(
        [
            PoolRow("h1", "tot hoe laat bezoek", 1, "https://a.be/bezoek/", "Bezoek"),
            PoolRow("h2", "parking", 3, "https://c.be/p", "Parking"),
        ],
        second,
    )
    rows = pool_merge([first, second], seed=1)
    assert sorted((r.qid, r.url, r.grade, r.rank) for r in rows) == [
        ("h1", "https://a.be/bezoek", "", 0),
        ("h1", "https://b.nl/x", "0", 0),
        ("h2", "https://c.be/p", "", 0),
    ]
    assert rows == pool_merge([first, second], seed=1)
    out = tmp_path / "pool.csv"
    main(["merge", str(first), str(second), "--out", str(out)])
    assert pool_judgements_read(out) == {"h1": {"https://b.nl/x": 0}}
    bad = tmp_path / "bad.csv"
    bad.write_text("qid,question\nh1,x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no column url"):
        pool_merge([bad])
