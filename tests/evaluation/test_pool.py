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
