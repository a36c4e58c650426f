"""The evaluation metrics against hand-computed values. Pure functions: no database."""

from __future__ import annotations

import math

import pytest

from evaluation.metrics.answers import (
    REFUSAL_OUTCOMES,
    answer_cites_expected,
    answer_fallback,
    answer_refused,
    entity_recall,
    red_flag_correct,
)
from evaluation.metrics.criteria import (
    ER_ONLY_PASS,
    ER_PASS,
    FAITHFULNESS_PASS,
    RELEVANCY_FLOOR,
    RELEVANCY_PASS,
    pass_composite,
    pass_er_only,
)
from evaluation.metrics.retrieval import (
    PARTIAL_GRADE,
    SECTION_GRADE,
    judged_only_at_k,
    mrr,
    ndcg_at_k,
    ndcg_trec_at_k,
    precision_at_k,
    ranked_urls,
    recall_at_k,
    url_grade,
    url_normalise,
)
from evaluation.metrics.stats import bootstrap_ci, cochrans_q, latency_summary, mcnemar, percentile

A = "https://a.org/x"
A_SUB = "https://a.org/x/y"  # under A: grade 0.5
A_SUB2 = "https://a.org/x/z"
A_SIBLING = "https://a.org/xy"  # shares A's characters but is not under it: grade 0
B = "https://b.org/page"
C = "https://c.org/other"
N1, N2, N3, N4 = (f"https://n.org/{i}" for i in range(1, 5))  # irrelevant


# --- retrieval: url_normalise / url_grade -------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "normalised"),
    [
        ("HTTPS://WWW.A.org:443/X/?#", "https://www.a.org/X"),  # case of path kept, www kept
        ("http://A.org:80/x", "http://a.org/x"),
        ("http://a.org:8080/x", "http://a.org:8080/x"),  # not the default port: kept
        ("https://a.org:80/x", "https://a.org:80/x"),  # 80 is not https's default
        ("http://a.org", "http://a.org/"),  # empty path → root
        ("http://a.org/", "http://a.org/"),  # the root keeps its slash
        ("https://a.org/x/?q=1#Frag", "https://a.org/x?q=1#Frag"),
        ("  https://a.org/x  ", "https://a.org/x"),
        ("https://User@A.ORG/x", "https://User@a.org/x"),
        ("https://[::1]:443/x/", "https://[::1]/x"),
        ("https://a.org:99999/x", "https://a.org:99999/x"),  # invalid port: left as written
        ("", ""),
    ],
)
def test_url_normalise(url: str, normalised: str) -> None:
    assert url_normalise(url) == normalised
    assert url_normalise(normalised) == normalised  # idempotent


@pytest.mark.parametrize(
    ("url", "expected", "grade"),
    [
        (A, [A], 1.0),
        ("HTTPS://A.org:443/x/", [A], 1.0),  # same page after normalisation
        (A + "#causes", [A], 1.0),  # fragment ignored on the retrieved side
        (A, [A + "#causes"], 1.0),  # the whole page contains the expected section
        (A + "#q7", [A + "#q12"], SECTION_GRADE),  # another section of the expected section's page
        (A_SUB + "#q7", [A + "#q12"], PARTIAL_GRADE),  # a sub-page of it
        (A_SUB, [A], PARTIAL_GRADE),
        (A_SUB + "#f", [A + "/"], PARTIAL_GRADE),
        ("https://a.org/x/y/z?q=1", [A], PARTIAL_GRADE),  # deep sub-path, with a query
        (A_SIBLING, [A], 0.0),  # sibling, not sub-path
        (A, [A_SUB], 0.0),  # a parent is not under its child
        ("http://a.org/x/y", [A], 0.0),  # another scheme
        ("https://www.a.org/x", [A], 0.0),  # www. is another host
        (A + "?q=1", [A], 0.0),  # same path, another query: another page
        ("https://a.org/x/y", ["https://a.org/x?id=1"], 0.0),  # an expected url with a query has no sub-pages
        ("https://a.org/anything", ["https://a.org/"], PARTIAL_GRADE),  # everything is under the root
        ("https://a.org/", ["https://a.org"], 1.0),
        (A_SUB, [B, A, A_SUB], 1.0),  # max over expected
        (A_SUB, [B, A], PARTIAL_GRADE),
        (A, [], 0.0),
        ("", [A], 0.0),
    ],
)
def test_url_grade(url: str, expected: list[str], grade: float) -> None:
    assert url_grade(url, expected) == grade


def test_ranked_urls_orders_by_rank_dedupes_pages_and_skips_missing_urls() -> None:
    rows = [
        {"url": B, "rank": 3},
        {"url": A, "rank": 1},
        {"url": None, "rank": 2},
        {"url": "", "rank": 4},
        {"url": "HTTPS://A.ORG/x/#section", "rank": 5},  # a section: kept (sections can be expected)
        {"url": "https://a.org/x#section", "rank": 8},  # the same section again: dropped
        {"rank": 6},
        {"url": C, "rank": 7},
        {"url": N1},  # no rank: after the ranked rows
    ]
    assert ranked_urls(rows) == [A, B, A + "#section", C, N1]
    assert ranked_urls([]) == []


# --- retrieval: nDCG ----------------------------------------------------------------------------


def test_ndcg_graded_hand_computed() -> None:
    """GIVEN two expected pages and a list with an exact hit, a partial hit and a late exact hit
    THEN nDCG@5 is DCG / IDCG computed by hand: each expected page earns once, at its best
    discounted gain."""
    # A: exact at 1 → 1/log2(2) = 1.0 (its partial A_SUB at 3, 0.5/log2(4) = 0.25, is not better)
    # B: exact at 5 → 1/log2(6) = 0.386853
    # DCG = 1.386853; IDCG (two expected) = 1/log2(2) + 1/log2(3) = 1.630930; nDCG = 0.850333
    ranked = [A, N1, A_SUB, N2, B]
    assert ndcg_at_k(ranked, [A, B], k=5) == pytest.approx(1.386853 / 1.630930, abs=1e-6)


def test_ndcg_ideal_depends_on_the_expected_urls_only() -> None:
    # a partial hit beyond k changes nothing: A at 2 → DCG = 1/log2(3) = 0.630930, IDCG = 1
    assert ndcg_at_k([N1, A, N2, N3, N4, A_SUB], [A], k=5) == pytest.approx(0.630930, abs=1e-6)
    assert ndcg_at_k([N1, A, N2, N3, N4], [A], k=5) == ndcg_at_k([N1, A, N2, N3, N4, A_SUB], [A], k=5)


def test_ndcg_only_partial_hits() -> None:
    # A's best: A_SUB at 1 → 0.5/log2(2) = 0.5 (A_SUB2 at 2 would give 0.315465); IDCG = 1
    assert ndcg_at_k([A_SUB, A_SUB2], [A], k=5) == pytest.approx(0.5)


def test_ndcg_one_page_does_not_count_for_two_expected_sections() -> None:
    # the whole page P covers P#a and P#b (grade 1 each) but is one position: it earns once.
    # DCG = 1/log2(2) = 1; IDCG = 1 + 1/log2(3) = 1.630930
    page = "https://faq.org/p"
    assert ndcg_at_k([page], [page + "#a", page + "#b"]) == pytest.approx(1 / 1.630930, abs=1e-6)


def test_ndcg_perfect_ranking_is_one_and_ideal_is_cut_at_k() -> None:
    expected = [f"https://e.org/{i}" for i in range(7)]
    assert ndcg_at_k([A], [A]) == 1.0
    # 7 expected, the first 5 retrieved in order: DCG@5 = IDCG@5 (the ideal is cut at k too)
    assert ndcg_at_k(expected[:5], expected, k=5) == pytest.approx(1.0)
    # k = 1: only the first position counts
    assert ndcg_at_k([N1, A], [A], k=1) == 0.0
    assert ndcg_at_k([A, N1], [A], k=1) == 1.0


def test_ndcg_duplicates_count_once() -> None:
    # [A, A#frag, B] is the page list [A, B]: DCG = 1 + 1/log2(3) = IDCG
    assert ndcg_at_k([A, A + "#frag", B], [A, B]) == pytest.approx(1.0)
    # a repeated expected url is one relevant item: IDCG = 1, DCG = 1
    assert ndcg_at_k([A], [A, A + "/"]) == 1.0


def test_sections_of_one_faq_page_are_told_apart() -> None:
    """GIVEN an FAQ page whose questions are sections (…/faq#q12) THEN the expected section is a
    hit, a sibling section earns 0.25 in NDCG only and is no hit for MRR, P@5 and R@5."""
    faq = "https://rivm.nl/faq"
    expected = [faq + "#q12"]
    ranked = [faq + "#q7", faq + "#q12", N1]
    # q12's best gain: exact at 2 → 1/log2(3) = 0.630930 (q7 at 1 would give 0.25); IDCG = 1
    assert ndcg_at_k(ranked, expected) == pytest.approx(0.630930, abs=1e-6)
    assert ndcg_at_k([faq + "#q7", N1], expected) == 0.25  # only the sibling section: 0.25 at 1
    assert mrr(ranked, expected) == 0.5
    assert precision_at_k(ranked, expected) == pytest.approx(1 / 5)
    assert recall_at_k([faq + "#q7"], expected) == 0.0 and recall_at_k(ranked, expected) == 1.0
    # without sections expected, sections of the page collapse into the page
    assert ndcg_at_k([faq + "#q7", faq + "#q12"], [faq]) == 1.0 and precision_at_k([faq + "#q7"], [faq]) == 0.2


def test_ndcg_edge_cases() -> None:
    assert ndcg_at_k([A], []) is None
    assert ndcg_at_k([A], ["", "  "]) is None  # blank expected urls are not expectations
    assert ndcg_at_k([], [A]) == 0.0
    assert ndcg_at_k([N1, N2, A_SIBLING], [A]) == 0.0
    with pytest.raises(ValueError):
        ndcg_at_k([A], [A], k=0)


# --- retrieval: MRR, precision, recall ----------------------------------------------------------


def test_judged_only_removes_unjudged_pages_before_the_reciprocal_rank() -> None:
    """Hand-computed: a ranking of four pages, two judged (the third graded 3, the fourth 1)."""
    x, y, z, w = "https://a.org/x", "https://b.org/y", "https://c.org/z", "https://d.org/w"
    judgements = {z: 3, w: 1}
    # condensed list [z, w]: z first → RR 1; judged: 0 of the first page, 2 of the 4 retrieved;
    # the full list has z third → RR 1/3 (unjudged pages counted non-relevant)
    assert judged_only_at_k([x, y, z, w], judgements, relevant_min=3) == pytest.approx(
        {"judged@1": 0.0, "judged@10": 0.5, "mrr@10_judged_only": 1.0, "mrr@10_qrels": 1 / 3}
    )
    # condensed list [w, z]: the judged non-relevant page w stays ahead of z → RR 1/2
    scores = judged_only_at_k([x, w, z], judgements, relevant_min=3)
    assert scores is not None and scores["mrr@10_judged_only"] == pytest.approx(0.5)
    assert scores["judged@10"] == pytest.approx(2 / 3)
    # with grade 1 relevant, w counts: RR 1; the same page twice and "www."/slash forms are one page
    scores = judged_only_at_k([x, w, w + "/", z], judgements, relevant_min=1)
    assert scores is not None and scores["mrr@10_judged_only"] == 1.0 and scores["judged@10"] == pytest.approx(2 / 3)
    # no relevant page judged: undefined; nothing retrieved: 0; judged pages beyond the cut: 0
    assert judged_only_at_k([x], {w: 1}, relevant_min=3) is None
    assert judged_only_at_k([], judgements, relevant_min=3) == {
        "judged@1": 0.0,
        "judged@10": 0.0,
        "mrr@10_judged_only": 0.0,
        "mrr@10_qrels": 0.0,
    }
    assert judged_only_at_k([w, z], judgements, relevant_min=3, k=1) == {
        "judged@1": 1.0,
        "mrr@1_judged_only": 0.0,
        "mrr@1_qrels": 0.0,
    }
    with pytest.raises(ValueError):
        judged_only_at_k([x], judgements, relevant_min=3, k=0)


def test_mrr() -> None:
    assert mrr([N1, N2, A], [A]) == pytest.approx(1 / 3)
    assert mrr([N1, A_SUB, A], [A]) == 0.5  # partial credit counts as relevant (binary)
    assert mrr([N1, N2, N3, N4, "https://n.org/5", "https://n.org/6", "https://n.org/7", A], [A]) == 1 / 8  # no cut-off
    assert mrr([N1, N1, A], [A]) == 0.5  # the duplicate N1 is one page: A is the 2nd page
    assert mrr([N1, A_SIBLING], [A]) == 0.0
    assert mrr([], [A]) == 0.0
    assert mrr([A], []) is None


def test_precision_at_k() -> None:
    # first 5: A (1), N1 (0), A_SUB (0.5 > 0), N2 (0), B (1) → 3 relevant / 5
    assert precision_at_k([A, N1, A_SUB, N2, B, A_SUB2], [A, B], k=5) == 0.6
    # denominator stays k when fewer pages were retrieved: 1 relevant / 5
    assert precision_at_k([A], [A], k=5) == 0.2
    # duplicates: [A, A] is one page → 1 / 5, not 2 / 5
    assert precision_at_k([A, A + "/"], [A], k=5) == 0.2
    assert precision_at_k([A, N1], [A], k=1) == 1.0
    assert precision_at_k([A_SIBLING], [A]) == 0.0
    assert precision_at_k([A], []) is None
    with pytest.raises(ValueError):
        precision_at_k([A], [A], k=0)


def test_recall_at_k() -> None:
    # expected A, B, C; first 5 pages: A_SUB covers A, B exact; C only at position 6 → 2 / 3
    ranked = [A_SUB, N1, B, N2, N3, C]
    assert recall_at_k(ranked, [A, B, C], k=5) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, [A, B, C], k=6) == 1.0
    # distinct expected pages: A and A/ are one page → 1 / 1
    assert recall_at_k([A], [A, A + "/"]) == 1.0
    # a sibling does not cover
    assert recall_at_k([A_SIBLING], [A]) == 0.0
    # one retrieved page may cover several expected pages: A_SUB is A itself's child and equals A_SUB
    assert recall_at_k([A_SUB], [A, A_SUB]) == 1.0
    assert recall_at_k([], [A]) == 0.0
    assert recall_at_k([A], []) is None
    with pytest.raises(ValueError):
        recall_at_k([A], [A], k=0)


# --- answers ------------------------------------------------------------------------------------


def test_entity_recall_normalised_whole_words() -> None:
    answer = "Bij acuut Hart-falen (links) belt u de Cardiologie."
    # "hart falen" and "cardiologie" occur as whole words; "diabetes" does not → 2 / 3
    recall, matched = entity_recall(answer=answer, expected=["Hart falen", "Diabetes", "cardiologie"])
    assert recall == pytest.approx(2 / 3)
    assert matched == ["Hart falen", "cardiologie"]  # expected order, names as given


def test_entity_recall_whole_words_only_and_accents_folded() -> None:
    assert entity_recall(answer="Heart disease", expected=["art"]) == (0.0, [])
    assert entity_recall(answer="De ziekte van MENIERE", expected=["Ménière"]) == (1.0, ["Ménière"])
    # compounds are not split: "hartfalen" is one word
    assert entity_recall(answer="hartfalen", expected=["hart"]) == (0.0, [])


def test_entity_recall_synonyms() -> None:
    synonyms = {"Heart Failure": ["cardiac failure", "CHF"]}  # key matched normalised
    assert entity_recall(answer="Cardiac failure means …", expected=["heart failure"], synonyms=synonyms) == (
        1.0,
        ["heart failure"],
    )
    assert entity_recall(
        answer="CHF is treated with", expected=["Heart failure"], synonyms={"heart failure": "CHF"}
    ) == (
        1.0,
        ["Heart failure"],
    )  # a plain string is one synonym, not a list of letters
    assert entity_recall(answer="an F", expected=["Heart failure"], synonyms={"heart failure": "CHF"}) == (0.0, [])


def test_entity_recall_stem_fallback_english_and_dutch() -> None:
    """GIVEN inflected forms that exact matching misses THEN the Snowball stems match them."""
    # English: "kidney stones" → stems "kidney stone"
    assert entity_recall(answer="Kidney stones hurt.", expected=["kidney stone"]) == (1.0, ["kidney stone"])
    # Dutch only: the English stemmer leaves "nierstenen" alone, the Dutch one gives "niersteen"
    assert entity_recall(answer="Nierstenen zijn pijnlijk.", expected=["niersteen"]) == (1.0, ["niersteen"])
    # stems must be contiguous and in order, like the words
    assert entity_recall(answer="stones in the kidney", expected=["kidney stone"]) == (0.0, [])


def test_entity_recall_stem_fallback_over_matches_documented_case() -> None:
    # The documented price of stemming: English reduces both "AIDS" and "aid" to "aid".
    assert entity_recall(answer="first aid", expected=["AIDS"]) == (1.0, ["AIDS"])


def test_entity_recall_edge_cases() -> None:
    assert entity_recall(answer="anything", expected=[]) == (None, [])
    assert entity_recall(answer="anything", expected=["—", " "]) == (None, [])  # not entities
    assert entity_recall(answer="", expected=["asthma"]) == (0.0, [])
    # duplicates by normalised text count once: 1 / 2, not 2 / 3
    assert entity_recall(answer="asthma", expected=["Asthma", "asthma", "COPD"]) == (0.5, ["Asthma"])


def test_only_guard_refusals_and_red_flags_are_refusals() -> None:
    """Issue 9: a gate rejection or no result is a fallback, never counted as a refusal."""
    assert {"refused", "red_flag"} == REFUSAL_OUTCOMES
    assert [
        o for o in ("answered", "refused", "red_flag", "gate_rejected", "no_results") if answer_refused(outcome=o)
    ] == [
        "refused",
        "red_flag",
    ]
    fallbacks = ("answered", "refused", "red_flag", "gate_rejected", "no_results", "")
    assert [o for o in fallbacks if answer_fallback(outcome=o)] == ["gate_rejected", "no_results", ""]


def test_an_answer_cites_an_expected_page_by_the_url_grades() -> None:
    """GIVEN an answered question's cited urls and expected pages WHEN they are compared THEN a
    cited expected page, its section or a sub-page (grade ≥ 0.5) counts, another section of an
    expected section's page (0.25) or another site does not; undefined without an answer or
    without expected pages."""
    expected = ["https://zol.be/bezoek", "https://zol.be/faq#q7"]
    cited = answer_cites_expected  # shorthand
    assert cited(outcome="answered", cited_urls=["https://zol.be/bezoek/"], expected_urls=expected) is True
    assert cited(outcome="answered", cited_urls=["", "https://zol.be/bezoek/kinderen"], expected_urls=expected)
    assert cited(outcome="answered", cited_urls=["https://zol.be/faq#q12"], expected_urls=expected) is False
    assert cited(outcome="answered", cited_urls=["https://other.be/bezoek", ""], expected_urls=expected) is False
    assert cited(outcome="answered", cited_urls=[], expected_urls=expected) is False
    assert cited(outcome="gate_rejected", cited_urls=["https://zol.be/bezoek"], expected_urls=expected) is None
    assert cited(outcome="refused", cited_urls=[], expected_urls=expected) is None
    assert cited(outcome="answered", cited_urls=["https://zol.be/bezoek"], expected_urls=[]) is None


def test_a_fallback_fails_both_kinds_of_question() -> None:
    must_answer = pass_composite(
        error="",
        answer="fallback text",
        must_refuse=False,
        refused=False,
        fallback=True,
        faithfulness=1.0,
        relevancy=1.0,
        entity_recall=1.0,
    )
    must_refuse = pass_er_only(
        error="", answer="fallback text", must_refuse=True, refused=False, fallback=True, entity_recall=None
    )
    assert must_answer == (False, "fallback instead of an answer")
    assert must_refuse == (False, "fallback instead of the explicit refusal required")


def test_red_flag_correct_reads_the_expectation_from_tags() -> None:
    class Routed:
        red_flag_category = "emergency"

    class NotRouted:
        red_flag_category = ""

    assert red_flag_correct(tags=["red_flag:emergency"], answer=Routed()) is True
    assert red_flag_correct(tags=["red_flag:poison"], answer=Routed()) is False
    assert red_flag_correct(tags=["red_flag:none", "history"], answer=NotRouted()) is True
    assert red_flag_correct(tags=["red_flag:none"], answer=Routed()) is False
    assert red_flag_correct(tags=["ci"], answer=Routed()) is None
    assert red_flag_correct(tags=["red_flag:emergency"], answer=None) is None


# --- stats --------------------------------------------------------------------------------------


def test_bootstrap_ci_is_deterministic_for_a_seed() -> None:
    values = [0.0, 0.2, 0.4, 0.9, 1.0, 0.7, 0.3]
    first = bootstrap_ci(values, seed=7)
    assert first == bootstrap_ci(values, seed=7)
    assert first != bootstrap_ci(values, seed=8)
    assert bootstrap_ci(values) == bootstrap_ci(values)  # the default seed too


def test_bootstrap_ci_contains_the_mean_and_narrows_with_more_data() -> None:
    small = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    large = small * 10  # same mean 0.6, ten times the data
    mean_s, low_s, high_s = bootstrap_ci(small)  # type: ignore[misc]
    mean_l, low_l, high_l = bootstrap_ci(large)  # type: ignore[misc]
    assert mean_s == mean_l == pytest.approx(0.6)
    assert low_s < mean_s < high_s
    assert low_l < mean_l < high_l
    # the standard error shrinks by √10 ≈ 3.2; demand at least a halving of the width
    assert (high_l - low_l) < 0.5 * (high_s - low_s)


def test_bootstrap_ci_two_values_hand_computed() -> None:
    # [0, 1]: resample means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4, so the 2.5th
    # percentile is 0 and the 97.5th is 1 (with 2000 resamples, ~500 of each extreme)
    assert bootstrap_ci([0.0, 1.0]) == (0.5, 0.0, 1.0)


def test_bootstrap_ci_edge_cases() -> None:
    assert bootstrap_ci([]) is None
    assert bootstrap_ci([0.42]) == (0.42, 0.42, 0.42)
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, float("nan")])
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], samples=0)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], confidence=1.0)


def test_percentile_linear_interpolation() -> None:
    values = [4.0, 1.0, 3.0, 2.0]  # sorted 1, 2, 3, 4
    assert percentile(values, 50) == 2.5  # position 0.5·3 = 1.5 → 2 + 0.5·(3 − 2)
    assert percentile(values, 95) == pytest.approx(3.85)  # position 0.95·3 = 2.85 → 3 + 0.85·(4 − 3)
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile(values, 101)
    with pytest.raises(ValueError):
        percentile(values, -1)


def test_latency_summary() -> None:
    # measured 100, 200, 300, 400 (None left out): p50 = 250; p95 at position 2.85 → 300 + 0.85·100
    assert latency_summary([300.0, None, 100.0, 400.0, 200.0]) == {
        "p50": 250.0,
        "p95": pytest.approx(385.0),
        "mean": 250.0,
        "n": 4,
    }
    assert latency_summary([]) == {"p50": None, "p95": None, "mean": None, "n": 0}
    assert latency_summary([None]) == {"p50": None, "p95": None, "mean": None, "n": 0}


def test_mcnemar_chi_square_textbook_value() -> None:
    """GIVEN Agresti (1990, p. 350) presidential approval: 150 approve → disapprove, 86
    disapprove → approve (R's ``mcnemar.test`` example) THEN χ² = 16.818, p = 4.115e-05."""
    # x = (|150 − 86| − 1)² / 236 = 63² / 236 = 16.8178; p = erfc(√(x/2))
    result = mcnemar(b=150, c=86)
    assert result["method"] == "chi2_cc"
    assert result["statistic"] == pytest.approx(16.818, abs=5e-4)
    assert result["p_value"] == pytest.approx(4.115e-05, rel=1e-3)
    assert mcnemar(b=86, c=150)["p_value"] == result["p_value"]  # symmetric


def test_mcnemar_chi_square_tail_matches_the_table() -> None:
    # chi-square(1) critical values: 3.841 at p = 0.05 and 6.635 at p = 0.01.
    # b = 20, c = 40: x = (20 − 1)² / 60 = 6.0167 → 0.01 < p < 0.05
    result = mcnemar(b=20, c=40)
    assert result["statistic"] == pytest.approx(361 / 60)
    assert 0.01 < result["p_value"] < 0.05
    assert result["p_value"] == pytest.approx(math.erfc(math.sqrt(361 / 120)))
    # b = c: no evidence of a difference (the correction does not overshoot below 0)
    assert mcnemar(b=15, c=15) == {"b": 15, "c": 15, "statistic": 0.0, "p_value": 1.0, "method": "chi2_cc"}


def test_mcnemar_exact_binomial_hand_computed() -> None:
    # n = 8: p = 2·(C(8,0) + C(8,1)) / 2⁸ = 2·9 / 256 = 0.0703125
    assert mcnemar(b=1, c=7) == {"b": 1, "c": 7, "statistic": 1.0, "p_value": 0.0703125, "method": "exact_binomial"}
    # n = 10, b = c = 5: 2·(1 + 10 + 45 + 120 + 210 + 252) / 1024 = 1276 / 1024 > 1 → capped at 1
    assert mcnemar(b=5, c=5)["p_value"] == 1.0
    # n = 0: nothing to compare
    assert mcnemar(b=0, c=0)["p_value"] == 1.0
    # n = 24 is still exact, n = 25 is chi-square: 0 vs 24 → 2 / 2²⁴
    assert mcnemar(b=0, c=24) == {
        "b": 0,
        "c": 24,
        "statistic": 0.0,
        "p_value": 2 / 2**24,
        "method": "exact_binomial",
    }
    assert mcnemar(b=0, c=25)["method"] == "chi2_cc"
    with pytest.raises(ValueError):
        mcnemar(b=-1, c=3)


# --- criteria: ER-only ----------------------------------------------------------------------------

OK = {"error": "", "answer": "An answer.", "must_refuse": False, "refused": False}


def test_pass_er_only_error_and_empty_answer_fail() -> None:
    passed, reason = pass_er_only(**{**OK, "error": "Timeout\ntraceback …"}, entity_recall=1.0)
    assert (passed, reason) == (False, "error: Timeout")
    # an error fails even a correct refusal
    assert pass_er_only(**{**OK, "error": "boom", "must_refuse": True, "refused": True}, entity_recall=None)[0] is False
    assert pass_er_only(**{**OK, "answer": "  \n"}, entity_recall=1.0) == (False, "empty answer")


def test_pass_er_only_refusal_paths() -> None:
    must_refuse = {**OK, "must_refuse": True}
    assert pass_er_only(**{**must_refuse, "refused": True}, entity_recall=0.0) == (True, "refused as required")
    assert pass_er_only(**must_refuse, entity_recall=1.0) == (False, "answered a question that must be refused")
    assert pass_er_only(**{**OK, "refused": True}, entity_recall=1.0) == (
        False,
        "refused a question that must be answered",
    )


def test_pass_er_only_entity_recall_paths() -> None:
    assert pass_er_only(**OK, entity_recall=None) == (True, "entity recall not applicable (no expected entities)")
    assert ER_ONLY_PASS == 0.5
    assert pass_er_only(**OK, entity_recall=0.5) == (True, "entity recall 0.50 ≥ 0.5")  # boundary passes
    assert pass_er_only(**OK, entity_recall=0.49) == (False, "entity recall 0.49 < 0.5")
    assert pass_er_only(**OK, entity_recall=0.6, threshold=0.75) == (False, "entity recall 0.60 < 0.75")


# --- criteria: composite ------------------------------------------------------------------------

SCORES = {"faithfulness": 0.9, "relevancy": 0.9, "entity_recall": 1.0}


def test_pass_composite_error_empty_and_refusal_paths() -> None:
    assert pass_composite(**{**OK, "error": "judge failed"}, **SCORES) == (False, "error: judge failed")
    assert pass_composite(**{**OK, "answer": ""}, **SCORES) == (False, "empty answer")
    # a required refusal passes even with scores that would fail an answer (relevancy below floor)
    low = {"faithfulness": 0.0, "relevancy": 0.1, "entity_recall": 0.0}
    assert pass_composite(**{**OK, "must_refuse": True, "refused": True}, **low) == (True, "refused as required")
    assert pass_composite(**{**OK, "must_refuse": True}, **SCORES) == (
        False,
        "answered a question that must be refused",
    )
    assert pass_composite(**{**OK, "refused": True}, **SCORES) == (False, "refused a question that must be answered")


def test_pass_composite_relevancy_floor_fails_always() -> None:
    assert RELEVANCY_FLOOR == 0.25
    # faithful and complete, but off-topic → fail
    assert pass_composite(**OK, faithfulness=1.0, relevancy=0.2, entity_recall=1.0) == (
        False,
        "relevancy 0.20 < floor 0.25",
    )
    # exactly at the floor is not below it: the faithfulness path applies
    assert pass_composite(**OK, faithfulness=0.6, relevancy=0.25, entity_recall=None)[0] is True


def test_pass_composite_faithfulness_path() -> None:
    assert FAITHFULNESS_PASS == 0.5
    assert pass_composite(**OK, faithfulness=0.62, relevancy=0.3, entity_recall=0.0) == (
        True,
        "faithfulness 0.62 ≥ 0.5",
    )
    assert pass_composite(**OK, faithfulness=0.5, relevancy=None, entity_recall=None) == (
        True,
        "faithfulness 0.50 ≥ 0.5",
    )  # boundary; an unscored relevancy does not trigger the floor


def test_pass_composite_entity_recall_and_relevancy_path() -> None:
    assert (ER_PASS, RELEVANCY_PASS) == (0.75, 0.5)
    assert pass_composite(**OK, faithfulness=0.4, relevancy=0.6, entity_recall=0.8) == (
        True,
        "faithfulness 0.40 < 0.5; entity recall 0.80 ≥ 0.75, relevancy 0.60 ≥ 0.5",
    )
    # boundaries pass; an unscored faithfulness does not block this path
    assert pass_composite(**OK, faithfulness=None, relevancy=0.5, entity_recall=0.75) == (
        True,
        "faithfulness not scored; entity recall 0.75 ≥ 0.75, relevancy 0.50 ≥ 0.5",
    )


def test_pass_composite_every_failure_of_the_second_path() -> None:
    assert pass_composite(**OK, faithfulness=0.4, relevancy=0.9, entity_recall=0.7) == (
        False,
        "faithfulness 0.40 < 0.5; entity recall 0.70 < 0.75, relevancy 0.90 ≥ 0.5",
    )
    assert pass_composite(**OK, faithfulness=0.4, relevancy=0.4, entity_recall=0.9) == (
        False,
        "faithfulness 0.40 < 0.5; entity recall 0.90 ≥ 0.75, relevancy 0.40 < 0.5",
    )
    # no expected entities: the second path is not available
    assert pass_composite(**OK, faithfulness=0.4, relevancy=0.9, entity_recall=None) == (
        False,
        "faithfulness 0.40 < 0.5; entity recall not applicable, relevancy 0.90 ≥ 0.5",
    )
    # entity recall met but relevancy not scored
    assert pass_composite(**OK, faithfulness=0.1, relevancy=None, entity_recall=1.0) == (
        False,
        "faithfulness 0.10 < 0.5; entity recall 1.00 ≥ 0.75, relevancy not scored",
    )
    # nothing scored
    assert pass_composite(**OK, faithfulness=None, relevancy=None, entity_recall=None) == (
        False,
        "faithfulness not scored; entity recall not applicable, relevancy not scored",
    )


def test_ndcg_pairs_positions_and_expected_sections_optimally() -> None:
    """Issue 8 review: with expected sections P#a and P#b, the whole page P covers either; a greedy
    pairing gave P to P#a and left P#a's own position only the 0.25 sibling grade of P#b
    ((1 + 0.25/log2 3) / (1 + 1/log2 3) = 0.71). The optimal assignment gives P to P#b: 1.0."""
    page = "https://example.org/faq"
    expected = [f"{page}#a", f"{page}#b"]
    assert ndcg_at_k([page, f"{page}#a"], expected, k=5) == pytest.approx(1.0)
    assert ndcg_at_k([f"{page}#a", page], expected, k=5) == pytest.approx(1.0)
    # one page can still be credited only once: [P] alone earns one expected url at position 1
    assert ndcg_at_k([page], expected, k=5) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_cochrans_q_on_a_hand_computed_table() -> None:
    """Q = (k−1)[k·ΣC² − N²] / (k·N − ΣR²) (Cochran 1950). Columns pass 3, 3, 1 of 4 questions,
    rows pass 2, 1, 3, 1 (N = 7): Q = 2·(3·19 − 49) / (21 − 15) = 16/6; with 2 degrees of freedom
    p = exp(−Q/2) = 0.2636."""
    table = [[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 1, 0]]
    result = cochrans_q(table)
    assert result["statistic"] == pytest.approx(16 / 6)
    assert result["p_value"] == pytest.approx(math.exp(-16 / 12))
    assert result["df"] == 2 and result["n"] == 4
    assert cochrans_q([[1, 1], [0, 0]]) == {"statistic": 0.0, "p_value": 1.0, "df": 1, "n": 2}
    with pytest.raises(ValueError):
        cochrans_q([[1], [0]])


def test_trec_ndcg_counts_each_relevant_url_on_its_own() -> None:
    """Qrels {A: 4} and the retrieved sub-page A_SUB: 2; run [X, A]: DCG = 4/log2 3; IDCG = 4
    → 0.631. With the sub-page retrieved first, [A_SUB, A]: DCG = 2 + 4/log2 3, IDCG = 4 + 2/log2 3
    (the ideal grows with the judged sub-page) → 0.898; the project's NDCG credits A once, at its
    best discounted position (1/log2 3 = 0.631 beats the sub-page's 0.5 at rank 1): 0.631."""
    assert ndcg_trec_at_k(["https://x.org/", A], [A], k=5) == pytest.approx((4 / math.log2(3)) / 4)
    value = ndcg_trec_at_k([A_SUB, A], [A], k=5)
    assert value == pytest.approx((2 + 4 / math.log2(3)) / (4 + 2 / math.log2(3)))
    assert ndcg_at_k([A_SUB, A], [A], k=5) == pytest.approx(1 / math.log2(3))
    assert ndcg_trec_at_k([A], [], k=5) is None
