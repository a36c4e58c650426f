"""The answer to a question naming a hospital is written from that hospital's pages only
(``answer_same_site``), on shared/data/hospital-nl's real pages and the real encoder."""

from __future__ import annotations

import pytest

from zolsearch.search.config import MEASUREMENT_OVERRIDES, pipeline_config_default
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.sites import site_labels


def _cited_sites(question: str, *, same_site: bool) -> list[tuple[str, ...]]:
    config = pipeline_config_default().with_overrides(**{**MEASUREMENT_OVERRIDES, "answer_same_site": same_site})
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    assert state.draft is not None
    return [site_labels(state.chunks[i].document.url) for i in state.draft.cited_chunk_ids]


@pytest.mark.parametrize(
    ("question", "site"),
    [
        ("hoeveel mensen mogen er tegelijk bij de patient in het antonius ziekenhuis", ("antoniusziekenhuis",)),
        ("hoeveel mensen mogen er direct na de geboorte komen kijken bij bravis", ("bravismoederenkindcentrum",)),
    ],
)
def test_other_hospitals_pages_leave_the_answer_when_the_named_ones_is_there(
    hospital_pages: None, question: str, site: tuple[str, ...]
) -> None:
    """GIVEN the 100 hospital pages (several hospitals' visiting rules)
    WHEN a question names one hospital whose visiting page is among the answer's passages
    THEN without ``answer_same_site`` the answer also quotes another hospital's page, and with
    it only the named hospital's."""
    mixed = _cited_sites(question, same_site=False)
    assert site in mixed and any(s != site for s in mixed), mixed
    assert set(_cited_sites(question, same_site=True)) == {site}


def test_a_question_naming_no_hospital_keeps_every_page(hospital_pages: None) -> None:
    """A question that names no hospital is answered from the same pages either way."""
    question = "moet ik een voorschot betalen als ik binnenkom voor een opname"
    cited = _cited_sites(question, same_site=False)
    assert len(set(cited)) > 1, cited  # several hospitals' pages, which the flag could have cut
    assert _cited_sites(question, same_site=True) == cited
