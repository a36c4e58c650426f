"""Hypothesis property tests: text normalisation and stem sets, chunking, sentence splitting, FILCO's keep mask, Reciprocal Rank
Fusion, the retrieval metrics and the identifier stripper.

Each property is a statement the code's docstring makes (or that its callers rely on) checked
on generated inputs; a failure is shrunk to a small counterexample. Example counts are bounded
(``FAST`` for pure functions, ``SLOW`` for the Presidio-backed stripper) and derandomised, so a
run is repeatable and takes seconds. The counterexamples these tests found, and the fixes, are in
``docs/RELIABILITY.md``.

Rerun: ``.venv/bin/python -m pytest tests/proof/test_properties.py -q -p no:cacheprovider``
(add ``--hypothesis-show-statistics`` for the examples run per property).
"""

from __future__ import annotations

import re
import unicodedata

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.privacy import identifiers_find, identifiers_strip, insz_is_valid
from core.text import (
    _NON_WORD,
    sentences_split,
    terms_stem,
    terms_stem_set,
    terms_stem_set_held,
    text_normalise,
    tokens_estimate,
)
from evaluation.metrics.retrieval import mrr, ndcg_at_k, ndcg_trec_at_k, precision_at_k, recall_at_k, url_normalise
from ingestion.chunking import chunks_build
from ingestion.connectors.base import DocumentRecord, Section
from zolsearch.search.filco import filco_keep
from zolsearch.search.fusion import rrf_fuse

FAST = settings(max_examples=200, derandomize=True, deadline=None, database=None)
SLOW = settings(
    max_examples=60, derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

# --- text strategies ---------------------------------------------------------------------------

# Words that exercise the splitter: abbreviations, capitals, digits, closing quotes and brackets.
_WORDS = [
    "de", "patiënt", "Dr.", "dr.", "o.a.", "e.g.", "bv.", "Prof.", "Janssens", "Het", "The", "Zie",
    "ziekte.", "pijn!", "waarom?", "(zie", "bijlage).", '"Stop."', "'ja.'", "3", "12.5", "mg.",
    "A.", "x", "hart-falen", "St.", "nr.", "Genk:", "—", "...", "ÉÉN", "Über",
]  # fmt: skip
_SEPARATORS = [" ", " ", " ", "  ", "\n", "\n\n", "\t", ":\n"]

sentence_text = st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_SEPARATORS)), min_size=0, max_size=40).map(
    lambda pairs: "".join(word + sep for word, sep in pairs)
)
any_text = st.one_of(sentence_text, st.text(max_size=200))


def _non_space(text: str) -> str:
    return "".join(text.split())


# --- normalisation and stems (core.text) --------------------------------------------------------


def _normalise_per_character(text: str) -> str:
    """text_normalise as first written: every character of the NFKD form tested in Python."""
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return _NON_WORD.sub(" ", folded).replace("_", " ").strip()


@FAST
@given(any_text)
def test_normalisation_drops_combining_marks_only_in_non_ascii_runs_as_before(text: str) -> None:
    """The fast path (combining marks looked for only in runs of non-ASCII characters) gives
    exactly what testing every character gave: SNOMED terms, aliases and stored normalised
    columns depend on it."""
    assert text_normalise(text) == _normalise_per_character(text)


@FAST
@given(any_text, st.sampled_from(["nl", "en", "fr"]))
def test_the_stem_set_is_the_set_of_the_stems(text: str, language: str) -> None:
    assert terms_stem_set(text, language=language) == set(terms_stem(text, language=language))


@FAST
@given(any_text, st.sampled_from(["nl", "en", "fr"]))
def test_the_held_stem_set_is_the_stem_set_computed_or_held(text: str, language: str) -> None:
    """The reranker's per-process stem sets (core.text.terms_stem_set_held) equal the computed
    set, the first time (computed and held) and the second (served from what is held)."""
    expected = terms_stem_set(text, language=language)
    assert terms_stem_set_held(text, language) == expected
    assert terms_stem_set_held(text, language) == expected


# --- sentence splitting (core.text.sentences_split) --------------------------------------------


@FAST
@given(any_text)
def test_sentence_split_keeps_every_character_but_whitespace(text: str) -> None:
    """The sentences, concatenated, hold exactly the input's non-whitespace characters in order
    (nothing dropped: closing quotes and brackets after a full stop included)."""
    sentences = sentences_split(text)
    assert _non_space("".join(sentences)) == _non_space(text)


@FAST
@given(any_text)
def test_sentences_are_stripped_non_empty_and_single_spaced(text: str) -> None:
    for sentence in sentences_split(text):
        assert sentence and sentence == sentence.strip()
        assert sentence == " ".join(sentence.split())


@FAST
@given(sentence_text)
def test_a_sentence_splits_into_itself(text: str) -> None:
    """Splitting is idempotent: each sentence, split again, is that one sentence."""
    for sentence in sentences_split(text):
        assert sentences_split(sentence) == [sentence]


@FAST
@given(st.sampled_from(["Dr.", "Prof.", "o.a.", "e.g.", "bv.", "nr.", "St."]), sentence_text)
def test_no_sentence_ends_in_a_protected_abbreviation(abbreviation: str, tail: str) -> None:
    """A known abbreviation followed by a capitalised word never ends a sentence."""
    text = f"Vraag aan {abbreviation} Janssens over {tail}"
    for sentence in sentences_split(text)[:-1]:
        assert not sentence.endswith(f" {abbreviation}")


# --- chunking (ingestion.chunking.chunks_build) ------------------------------------------------

section = st.builds(Section, heading=st.sampled_from(["", "Symptomen", "What causes it?"]), text=any_text)
record = st.builds(
    DocumentRecord,
    external_id=st.just("doc"),
    url=st.just("https://example.org/doc"),
    title=st.just("Doc"),
    sections=st.lists(section, min_size=0, max_size=4).map(tuple),
    context=st.sampled_from(["", "Hartfalen — ZOL"]),
    questions=st.sampled_from([(), ("Wat is hartfalen?",)]),
)


@FAST
@given(record, st.integers(min_value=48, max_value=200))
def test_chunks_fit_the_window_keep_every_word_and_number_positions(doc: DocumentRecord, max_tokens: int) -> None:
    """Chunk positions run 0, 1, 2, …; every chunk's embedded text has at most ``max_tokens``
    tokens (the prefix is short here, so the 32-token floor never applies) and its
    ``token_count`` says so; the chunks of a section hold its words in order; empty sections
    give no chunk."""
    chunks = chunks_build(record=doc, max_tokens=max_tokens, count_tokens=tokens_estimate)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.text.strip()
        assert chunk.token_count == tokens_estimate(chunk.embedded_text) <= max_tokens
        assert chunk.embedded_text.endswith(chunk.text)
    for heading in {s.heading for s in doc.sections}:
        expected = _non_space("".join(s.text for s in doc.sections if s.heading == heading))
        assert _non_space("".join(c.text for c in chunks if c.heading == heading)) == expected


@FAST
@given(st.text(alphabet="-./=+", min_size=100, max_size=400), st.integers(min_value=48, max_value=120))
def test_a_long_run_without_spaces_is_cut_to_the_window(run: str, max_tokens: int) -> None:
    """A "word" of many punctuation tokens (a long URL, a ruler of dashes) is cut too."""
    chunks = chunks_build(
        record=DocumentRecord(external_id="d", url="u", title="t", sections=(Section("", run),)),
        max_tokens=max_tokens,
        count_tokens=tokens_estimate,
    )
    assert all(c.token_count <= max_tokens for c in chunks)
    assert _non_space("".join(c.text for c in chunks)) == run


# --- FILCO (zolsearch.search.filco.filco_keep) -------------------------------------------------

scores = st.lists(st.floats(min_value=-1, max_value=1, allow_nan=False), max_size=30)


@FAST
@given(
    scores,
    st.floats(min_value=-1, max_value=1, allow_nan=False),
    st.floats(min_value=0, max_value=1, allow_nan=False),
    st.integers(min_value=0, max_value=10),
)
def test_filco_removes_only_low_sentences_lowest_first_within_its_limits(
    values: list[float], threshold: float, max_removed: float, min_kept: int
) -> None:
    mask = filco_keep(values, threshold=threshold, max_removed=max_removed, min_kept=min_kept)
    n = len(values)
    removed = [i for i, keep in enumerate(mask) if not keep]
    assert len(mask) == n
    assert len(removed) <= int(max_removed * n)
    assert n - len(removed) >= min(min_kept, n)
    assert all(values[i] < threshold for i in removed)
    kept_below = [values[i] for i, keep in enumerate(mask) if keep and values[i] < threshold]
    assert all(values[i] <= low for i in removed for low in kept_below)
    # As many as allowed go: nothing below the threshold is kept while budget remains.
    assert not kept_below or len(removed) == min(int(max_removed * n), max(n - min_kept, 0))


# --- Reciprocal Rank Fusion (zolsearch.search.fusion.rrf_fuse) ----------------------------------

rankings = st.lists(st.lists(st.integers(min_value=0, max_value=15), max_size=12), max_size=4)


@FAST
@given(rankings, st.integers(min_value=0, max_value=100))
def test_rrf_scores_follow_the_formula_and_stay_in_bounds(lists: list[list[int]], k: int) -> None:
    """Each id once, its score Σ 1 / (k + best rank in each list), in (0, len / (k + 1)],
    best first."""
    fused = rrf_fuse(lists, k=k)
    ids = [item for item, _ in fused]
    assert len(ids) == len(set(ids)) and set(ids) == {i for ranking in lists for i in ranking}
    for item, score in fused:
        expected = sum(1 / (k + ranking.index(item) + 1) for ranking in lists if item in ranking)
        assert abs(score - expected) < 1e-12
        assert 0 < score <= len(lists) / (k + 1) + 1e-12
    assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)


@FAST
@given(rankings, st.randoms(use_true_random=False))
def test_rrf_scores_do_not_depend_on_the_order_of_the_lists(lists: list[list[int]], rnd) -> None:
    shuffled = list(lists)
    rnd.shuffle(shuffled)
    assert {i: round(s, 12) for i, s in rrf_fuse(lists)} == {i: round(s, 12) for i, s in rrf_fuse(shuffled)}


@FAST
@given(st.lists(st.integers(), unique=True, max_size=20))
def test_rrf_of_one_list_or_of_a_list_twice_keeps_its_order(ranking: list[int]) -> None:
    assert [i for i, _ in rrf_fuse([ranking])] == ranking
    assert [i for i, _ in rrf_fuse([ranking, ranking])] == ranking


# --- retrieval metrics (evaluation.metrics.retrieval) ------------------------------------------

url = st.builds(
    lambda scheme, host, path, fragment: f"{scheme}://{host}{path}{fragment}",
    st.sampled_from(["https", "http"]),
    st.sampled_from(["a.org", "b.org", "A.org:443"]),
    st.sampled_from(["", "/", "/x", "/x/", "/x/y", "/x/y/z", "/xy", "/z"]),
    st.sampled_from(["", "", "#a", "#b"]),
)
urls = st.lists(url, max_size=12)
expected_urls = st.lists(url, min_size=1, max_size=5)
cutoff = st.integers(min_value=1, max_value=10)


@FAST
@given(urls, expected_urls, cutoff)
def test_every_metric_is_in_the_unit_interval(ranked: list[str], expected: list[str], k: int) -> None:
    for value in (
        ndcg_at_k(ranked, expected, k=k),
        mrr(ranked, expected),
        precision_at_k(ranked, expected, k=k),
        recall_at_k(ranked, expected, k=k),
        ndcg_trec_at_k(ranked, expected, k=k),
    ):
        assert value is not None and 0.0 <= value <= 1.0 + 1e-12


@FAST
@given(st.lists(st.sampled_from(["/p1", "/p2", "/p3", "/p4", "/p5", "/p6"]), min_size=1, unique=True), cutoff)
def test_the_expected_pages_in_any_order_are_a_perfect_ranking(paths: list[str], k: int) -> None:
    """Retrieving exactly the expected (distinct, whole) pages scores 1 on NDCG, MRR and
    R@k (when they fit in k), and P@k = min(|E|, k) / k."""
    expected = [f"https://a.org{p}" for p in paths]
    ranked = list(reversed(expected))
    assert abs(ndcg_at_k(ranked, expected, k=k) - 1.0) < 1e-9  # type: ignore[operator]
    assert abs(ndcg_trec_at_k(ranked, expected, k=k) - 1.0) < 1e-9  # type: ignore[operator]
    assert mrr(ranked, expected) == 1.0
    assert precision_at_k(ranked, expected, k=k) == min(len(expected), k) / k
    assert recall_at_k(ranked, expected, k=k) == min(len(expected), k) / len(expected)


@FAST
@given(urls, expected_urls, cutoff, st.randoms(use_true_random=False))
def test_metrics_ignore_the_order_of_the_expected_urls(ranked: list[str], expected: list[str], k: int, rnd) -> None:
    shuffled = list(expected)
    rnd.shuffle(shuffled)
    for metric in (ndcg_at_k, precision_at_k, recall_at_k, ndcg_trec_at_k):
        assert abs(metric(ranked, expected, k=k) - metric(ranked, shuffled, k=k)) < 1e-9  # type: ignore[operator]
    assert mrr(ranked, expected) == mrr(ranked, shuffled)


@FAST
@given(urls, expected_urls, cutoff)
def test_repeating_a_retrieved_url_changes_nothing(ranked: list[str], expected: list[str], k: int) -> None:
    doubled = [u for u in ranked for _ in (0, 1)]
    for metric in (ndcg_at_k, precision_at_k, recall_at_k):
        assert metric(ranked, expected, k=k) == metric(doubled, expected, k=k)
    assert mrr(ranked, expected) == mrr(doubled, expected)


@FAST
@given(urls, expected_urls, cutoff, urls)
def test_what_comes_after_the_cutoff_does_not_count(
    ranked: list[str], expected: list[str], k: int, tail: list[str]
) -> None:
    head = ranked[:k]
    # k distinct pages, so that the tail starts after the cut-off
    assume(len(head) == k and len({url_normalise(u).split("#")[0] for u in head}) == k)
    for metric in (ndcg_at_k, precision_at_k, recall_at_k):
        assert metric(head, expected, k=k) == metric(head + tail, expected, k=k)


@FAST
@given(urls, expected_urls, cutoff)
def test_an_expected_url_retrieved_first_gives_mrr_one_and_a_hit_at_one(
    ranked: list[str], expected: list[str], k: int
) -> None:
    boosted = [expected[0], *ranked]
    assert mrr(boosted, expected) == 1.0
    assert precision_at_k(boosted, expected, k=1) == 1.0
    assert (recall_at_k(boosted, expected, k=k) or 0.0) > 0


# --- the identifier stripper (core.privacy) ----------------------------------------------------


def _insz(born: int, month: int, day: int, serial: int, *, after_2000: bool) -> str:
    """A valid INSZ: YYMMDD + serial, check digits by the rule of the century (IBZ)."""
    base = f"{born % 100:02d}{month:02d}{day:02d}{serial:03d}"
    check = 97 - int(("2" if after_2000 else "") + base) % 97
    return base + f"{check:02d}"


insz_digits = st.builds(
    _insz,
    st.integers(min_value=0, max_value=99),
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=28),
    st.integers(min_value=1, max_value=998),
    after_2000=st.booleans(),
)


def _insz_format(digits: str, style: int) -> str:
    yy, mm, dd, serial, cc = digits[:2], digits[2:4], digits[4:6], digits[6:9], digits[9:]
    return [
        digits,
        f"{yy}.{mm}.{dd}-{serial}.{cc}",
        f"{yy}{mm}{dd} {serial} {cc}",
        f"{yy}{mm}{dd}-{serial}-{cc}",
        f"{yy} {mm} {dd} {serial} {cc}",
    ][style]


_FILLER = [
    "mijn", "rijksregisternummer", "is", "Mijn", "nummer", "graag", "bellen", "over", "de", "afspraak",
    "in", "Genk", "hartfalen", "?", ",", ".", ":", "(", ")", "INSZ", "dank", "u", "vraag",
]  # fmt: skip
filler = st.lists(st.sampled_from(_FILLER), max_size=8).map(" ".join)


def _valid_insz_left(text: str) -> list[str]:
    """Every 11-digit run of ``text`` (allowing the separators people type) that validates."""
    found = []
    for match in re.finditer(r"\d(?:[ .\-/]?\d){10}", text):
        if insz_is_valid(match.group()):
            found.append(match.group())
    return found


@SLOW
@given(filler, insz_digits, st.integers(min_value=0, max_value=4), filler, st.sampled_from(["nl", "fr", "en"]))
def test_no_valid_insz_survives_stripping(before: str, digits: str, style: int, after: str, language: str) -> None:
    text = f"{before} {_insz_format(digits, style)} {after}"
    stripped, kinds = identifiers_strip(text, language=language)
    assert "INSZ" in kinds
    assert _valid_insz_left(stripped) == []


@SLOW
@given(st.text(max_size=300), st.sampled_from(["nl", "fr", "en", "tr", ""]))
def test_stripping_never_raises_and_places_one_placeholder_per_kind(text: str, language: str) -> None:
    stripped, kinds = identifiers_strip(text, language=language)
    findings = identifiers_find(text, language=language)
    assert kinds == [f.kind for f in findings]
    for kind in set(kinds):
        assert stripped.count(f"[{kind}]") - text.count(f"[{kind}]") == kinds.count(kind)
    assert not kinds or stripped != text


@SLOW
@given(st.one_of(st.text(max_size=200), st.tuples(filler, insz_digits, filler).map(" ".join)))
def test_findings_are_ordered_disjoint_and_point_into_the_text(text: str) -> None:
    findings = identifiers_find(text)
    for f in findings:
        assert 0 <= f.start < f.end <= len(text) and text[f.start : f.end] == f.text
    for a, b in zip(findings, findings[1:], strict=False):
        assert a.end <= b.start


_QUESTION_WORDS = [
    "Mevrouw", "Peeters", "belde", "0471", "12", "34", "56", "op", "12/03/1956", "geboren", "Kerkstraat",
    "3600", "Genk", "jan.peeters@example.be", "mijn", "dochter", "Lotte", "heeft", "koorts", "en", "?",
    "85.07.30-033.28", "dokter", "Janssens", "[PERSON]", "[PHONE]", "Groeten,", "Omer", "Simoens",
]  # fmt: skip


@SLOW
@given(st.lists(st.sampled_from(_QUESTION_WORDS), max_size=16).map(" ".join), st.sampled_from(["nl", "fr", "en"]))
def test_stripping_is_idempotent(text: str, language: str) -> None:
    """Stripping a stripped text changes nothing: the placeholders are not identifiers and the
    rest was already clean."""
    once, _ = identifiers_strip(text, language=language)
    twice, kinds = identifiers_strip(once, language=language)
    assert twice == once, (text, kinds)
