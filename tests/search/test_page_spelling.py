"""A Dutch question's misspelled everyday words are corrected to the words of the hospital's own
pages (``spelling_page_words``), on shared/data/hospital-nl's real pages, the real encoder and
wordfreq's real Dutch word list."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ingestion.models import Document, Source
from ingestion.selectors import chunk_word_counts, heading_words
from tests.search import HOSPITAL_NL, medquad_focus_add
from zolsearch.search.config import MEASUREMENT_OVERRIDES, pipeline_config_default
from zolsearch.search.focus import (
    PAGE_SPELL_MAX_DISTANCE,
    PAGE_WORD_MIN_CHARS,
    medquad_lexicon_clear,
    page_spelling,
    pages_lack_words,
)
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.understanding import routing_share


def test_the_words_of_one_languages_chunks_are_counted_as_written(hospital_pages: None) -> None:
    """GIVEN the 100 Dutch hospital pages WHEN their words of at least 4 letters are counted
    THEN the pages' practical words are there, lower-cased, accents kept ("röntgenfoto", cut
    from "röntgenfoto's" in Python, whatever the database's character classes), several times
    over, none shorter than 4 letters, and not among the words of the English chunks."""
    counts = chunk_word_counts("nl", min_chars=4)
    assert counts["factuur"] > 1 and counts["ombudsdienst"] >= 1 and counts["röntgenfoto"] >= 1
    assert "rontgenfoto" not in counts
    assert all(len(w) >= 4 and w == w.lower() for w in counts)
    assert not {"factuur", "ombudsdienst"} & set(chunk_word_counts("en", min_chars=4))


@pytest.mark.parametrize(
    ("question", "said", "word"),
    [
        ("wanneer krijg ik de faktuur van het ziekenhuis", "faktuur", "factuur"),
        ("hoe dien ik een klacht in bij de ombusdienst van az groeninge", "ombusdienst", "ombudsdienst"),
        ("waarom moet ik eerst een vragenlijst invullen voor de anestesist", "anestesist", "anesthesist"),
        # as the pages write it, accent kept: the Dutch stemmer and BM25 do not fold it
        ("rontgenfotos op cd ophalen maastricht", "rontgenfotos", "röntgenfoto"),
    ],
)
def test_a_word_one_letter_off_a_pages_word_is_corrected(
    hospital_pages: None, question: str, said: str, word: str
) -> None:
    """A word that is no Dutch word (under wordfreq's Zipf 1.5) and one edit from an everyday
    word of the pages is taken for that word; the question's other words are left alone."""
    corrections = page_spelling(question, "nl")
    assert [(c.said, c.word, c.distance) for c in corrections] == [(said, word, 1)]


def test_two_edits_another_language_and_right_words_are_left_alone(hospital_pages: None) -> None:
    """At two edits the nearest page word is another word ("vaatlijden", a patient's word for
    vascular disease, is two edits from the pages' "maaltijden"): not corrected. A question in
    another language, a word spelled right, a word the medical speller already corrected
    (``skip``) and a word of the Dutch medical dictionary are not corrected either."""
    assert PAGE_SPELL_MAX_DISTANCE == 1
    assert page_spelling("wat is het risico op vaatlijden bij diabetes", "nl") == []
    assert page_spelling("when will I get the faktuur", "en") == []
    assert page_spelling("wanneer krijg ik de factuur van het ziekenhuis", "nl") == []
    assert page_spelling("wanneer krijg ik de faktuur", "nl", skip={"faktuur"}) == []
    # a word of the Dutch medical dictionary is meant as written ("brandwonden" is a page word)
    assert "brandwonden" in chunk_word_counts("nl", min_chars=4)
    assert page_spelling("wat doe ik bij een brandwonde", "nl") == []


def _asked(qid: str) -> dict[str, Any]:
    """hospital-nl's question ``qid`` (its text, expected pages) as shared/data holds it."""
    lines = (HOSPITAL_NL / "questions.jsonl").read_text().splitlines()
    return next(q for q in map(json.loads, lines) if q["qid"] == qid)


def _expected(qid: str) -> set[str]:
    """The pages hospital-nl expects for question ``qid``."""
    return set(_asked(qid)["expected_urls"])


def _ranked(question: str, *, page_words: bool) -> tuple[list[str], str, str]:
    config = pipeline_config_default().with_overrides(**{**MEASUREMENT_OVERRIDES, "spelling_page_words": page_words})
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    ranked = [state.chunks[i].document.url for i, _ in state.fused if i in state.chunks]
    return ranked, state.trace.understanding.corrected, state.trace.understanding.expanded


def test_the_corrected_word_finds_the_pages_that_answer(hospital_pages: None) -> None:
    """GIVEN the 100 hospital pages and hospital-nl's question h071 as a patient typed it
    ("faktuur"), whose six expected pages are invoice pages
    WHEN it is searched without and with ``spelling_page_words``
    THEN without, no expected page is first and nothing is corrected; with, the trace says
    "faktuur → factuur", "factuur" is searched too and an expected page is first."""
    asked = _asked("h071")
    expected = _expected("h071")
    before, corrected, expanded = _ranked(asked["question"], page_words=False)
    assert before[0] not in expected and corrected == "" and "factuur" not in expanded
    after, corrected, expanded = _ranked(asked["question"], page_words=True)
    assert corrected == "faktuur → factuur"
    assert "factuur" in expanded.split("; ")
    assert after[0] in expected, after[:3]


def test_the_corrected_question_is_answered_past_the_term_agreement(hospital_pages: None) -> None:
    """GIVEN the same question with the gate on (the product's configuration, cache off)
    WHEN it is answered with ``spelling_page_words`` THEN the draft from the invoice pages is not
    refused by the gate's term agreement (it reads "factuur", the word the question was corrected
    to, which the page shares)."""
    question = "wanneer krijg ik de faktuur van het ziekenhuis"
    config = pipeline_config_default().with_overrides(semantic_cache_enabled=False)
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    assert state.trace.understanding.corrected == "faktuur → factuur"
    assert state.draft is not None and state.gate is not None
    cited = {state.chunks[i].document.url for i in state.draft.cited_chunk_ids}
    assert cited & _expected("h071"), cited
    assert "factuur" in state.draft.text.lower()
    assert not state.gate.term_mismatch, state.gate


def test_the_warm_up_reads_the_pages_words_and_builds_the_index(hospital_pages: None) -> None:
    """GIVEN a worker that has not yet read the pages' words WHEN it warms up (what gunicorn's
    ``post_worker_init`` runs before the worker takes requests) THEN the pages' speller exists with its
    SymSpell index built, so no request pays for either; the corrections are the same."""
    from zolsearch.search import focus

    focus.medquad_lexicon_clear()
    focus.spelling_warm()
    pages = focus._PAGE_WORDS.get()
    assert pages is not None and pages.speller._index is not None
    assert "factuur" in pages.speller.words and pages.written["rontgenfoto"] == "röntgenfoto"
    assert [c.word for c in page_spelling("wanneer krijg ik de faktuur", "nl")] == ["factuur"]


def test_the_pages_lack_a_word_none_of_them_has_nor_begins(hospital_pages: None) -> None:
    """GIVEN the 100 Dutch hospital pages WHEN a phrase's words are looked up THEN a word none
    of them holds is lacked ("galgangatresie", "porokeratose"), also beside a word they hold; a
    word they hold, as written with accents and an apostrophe, by its stem, or as the beginning
    of a longer word of theirs ("chemo" of "chemotherapie") is not, but a four-letter word is
    not known from a longer word it begins; a phrase whose words are all shorter than four
    letters, or an empty one, lacks nothing."""
    assert pages_lack_words("galgangatresie") and pages_lack_words("porokeratose van mibeli")
    assert pages_lack_words("factuur galgangatresie")  # one word lacked is enough
    assert not pages_lack_words("factuur") and not pages_lack_words("Röntgenfoto's")
    assert not pages_lack_words("chemo")
    assert "chemo" not in chunk_word_counts("nl", min_chars=PAGE_WORD_MIN_CHARS)  # the start of a longer word
    assert "facturen" not in chunk_word_counts("nl", min_chars=PAGE_WORD_MIN_CHARS)
    assert not pages_lack_words("facturen")  # the stem of "factuur"
    words = chunk_word_counts("nl", min_chars=PAGE_WORD_MIN_CHARS)
    four = next(w[:4] for w in sorted(words) if len(w) > 6 and w.isalpha() and w.isascii() and w[:4] not in words)
    assert pages_lack_words(four), four  # begins a page word, but too short to be known from it
    assert not pages_lack_words("in de") and not pages_lack_words("")


def test_what_the_pages_are_about_is_read_from_their_titles_and_headings(hospital_pages: None) -> None:
    """GIVEN the 100 Dutch hospital pages and one English page WHEN the words of the Dutch
    titles and headings are read THEN the subjects of the pages are there ("slaaponderzoek",
    "coloscopie", "chemotherapie"), a word their text mentions in passing is not ("kunstgebit",
    in a page on preparing for an operation; "slaapapneusyndroom" in a sleep study page's text),
    nor the English page's title; so, counted ``about``, those words are lacked though the
    pages' text holds them, and the subjects (and "chemo", the beginning of "chemotherapie")
    are not."""
    source = Source.objects.create(key="medquad-nhlbi", name="MedQuAD NHLBI")
    Document.objects.create(source=source, external_id="medquad:test-apnea", title="Sleep Apnea", language="en")
    about = heading_words("nl", min_chars=PAGE_WORD_MIN_CHARS)
    text = chunk_word_counts("nl", min_chars=PAGE_WORD_MIN_CHARS)
    assert {"slaaponderzoek", "coloscopie", "chemotherapie"} <= about
    assert {"kunstgebit", "slaapapneusyndroom"} <= set(text) and not {"kunstgebit", "slaapapneusyndroom"} & about
    assert "apnea" not in about and "sleep" not in about  # the English page's title is not read
    assert all(w == w.lower() and w.isalpha() and len(w) >= PAGE_WORD_MIN_CHARS for w in about)
    for word in ("kunstgebit", "slaapapneu"):
        assert not pages_lack_words(word) and pages_lack_words(word, about=True), word
    for word in ("slaaponderzoek", "coloscopie", "chemo"):
        assert not pages_lack_words(word, about=True), word


@pytest.mark.django_db
def test_without_pages_in_the_hospitals_language_nothing_is_lacked() -> None:
    """GIVEN an index without Dutch pages WHEN a phrase is looked up THEN nothing is known about
    the pages, so nothing is lacked: the routing share alone decides translation, as before."""

    medquad_lexicon_clear()
    assert chunk_word_counts("nl", min_chars=PAGE_WORD_MIN_CHARS) == {}
    assert heading_words("nl", min_chars=PAGE_WORD_MIN_CHARS) == frozenset()
    assert not pages_lack_words("galgangatresie") and not pages_lack_words("galgangatresie", about=True)


def _understood(question: str, **overrides: object) -> tuple[str, str, str]:
    """(focus, expanded, intent) of ``question`` in Dutch under the measurement configuration
    with ``overrides``."""
    config = pipeline_config_default().with_overrides(**{**MEASUREMENT_OVERRIDES, **overrides})
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    understood = state.trace.understanding
    return understood.focus, understood.expanded, state.intent.value


def _leans_to_the_hospital(question: str) -> None:
    """Assert what keeps the Dutch ``question`` in Dutch without the pages-lack check: a routing
    share of at least ``medical_translation_max_authority`` and an unsure question type."""
    config = pipeline_config_default().with_overrides(**MEASUREMENT_OVERRIDES)
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    share = routing_share(state.intent.value, state.intent_probabilities, config.source_authority_intents)
    assert share >= config.medical_translation_max_authority
    assert (state.trace.understanding.qtype_confidence or 0.0) < config.medical_translation_qtype_min


def _english_only_with(question: str, flag: str, *, focus: str, english: str) -> None:
    """Assert that the Dutch ``question``, which leans to the hospital's pages
    (:func:`_leans_to_the_hospital`), is searched in ``english`` and links ``focus`` under the
    default configuration, and neither with ``flag`` off."""
    _leans_to_the_hospital(question)
    linked, expanded, _intent = _understood(question, **{flag: False})
    assert linked == "" and english not in expanded
    linked, expanded, _intent = _understood(question)
    assert linked == focus and english in expanded.split("; ")


def test_a_medical_word_the_pages_lack_is_searched_in_english(hospital_pages: None) -> None:
    """GIVEN the hospital pages and NIDDK's "Biliary Atresia" focus (stored as the MedQuAD
    connector stores it) WHEN "Wat is galgangatresie bij baby's?" is understood THEN without
    ``medical_translation_pages_lack`` it stays in Dutch (its routing share is at least
    ``medical_translation_max_authority`` and its question type is unsure: nothing English is
    searched), and with it (the default) "biliary atresia" is searched too and links the focus,
    since no hospital page has the word; a question whose intent names a place to go
    ("pijnkliniek voor chronische rugpijn bornem", whose "rugpijn" the pages lack too) is left
    in Dutch."""
    medquad_focus_add("Biliary Atresia", cui="C0005411", subset="NIDDK")
    _english_only_with(
        "Wat is galgangatresie bij baby's?",
        "medical_translation_pages_lack",
        focus="Biliary Atresia",
        english="biliary atresia",
    )
    assert pages_lack_words("rugpijn")
    focus, expanded, intent = _understood("pijnkliniek voor chronische rugpijn bornem")
    assert intent == "department_search" and "back" not in expanded and focus == ""


def test_a_medical_word_no_page_is_about_is_searched_in_english(hospital_pages: None) -> None:
    """GIVEN the hospital pages and MedlinePlus's "Dentures" focus WHEN "Mijn moeder krijgt een
    kunstgebit. Wat is dat juist, en hoe werkt dat?" is understood THEN with
    ``medical_translation_pages_about`` off it stays in Dutch (a page mentions "kunstgebit",
    its routing share is at least ``medical_translation_max_authority``, its question type
    unsure), and on (the default) "dentures" is searched too and links the focus: no page is
    about dentures. A subject of the pages ("coloscopie", a page's title) is not lacked."""
    medquad_focus_add("Dentures", cui="C2266651")
    _english_only_with(
        "Mijn moeder krijgt een kunstgebit. Wat is dat juist, en hoe werkt dat?",
        "medical_translation_pages_about",
        focus="Dentures",
        english="dentures",
    )
    assert not pages_lack_words("coloscopie", about=True)
