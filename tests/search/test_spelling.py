"""Spelling correction of medical words: symspellpy's real English word list, wordfreq's real
Dutch one and the SymSpell index, and the MedQuAD slice's focus lexicon and the project's Dutch
medical dictionary in the pipeline."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import unicodedata
from pathlib import Path

import pytest

from zolsearch.search.config import ConfigInvalid, PipelineConfig, pipeline_config_default
from zolsearch.search.contract import UnderstandingTrace
from zolsearch.search.focus import medquad_lexicon_clear, medquad_spelling
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.spelling import Correction, Speller, term_pairs, text_corrected, word_frequencies

MEDICAL = frozenset({"aneurysm", "scabies", "fatigue", "chronic", "syndrome", "diagnosis", "abscess", "acne"})


def test_a_misspelled_medical_word_is_corrected_and_everyday_words_are_left_alone() -> None:
    """GIVEN a few medical words WHEN words are checked THEN a misspelling one edit from a
    medical word is corrected (a substitution, a transposition, a doubled letter: "scabbies" is
    scabies, not the everyday "cabbies"); an everyday word ("daughter"), a medical word, a short
    word and a word with digits (also inside a message) are not; "diagnosd", two edits from diagnosis but
    one from the everyday "diagnosed", is not taken for diagnosis, nor "abcess", one edit from
    abscess and from the far more frequent "access"."""
    speller = Speller(MEDICAL)
    assert speller.correction("aneurism") == Correction(said="aneurism", word="aneurysm", distance=1)
    assert speller.correction("anuerysm") == Correction(said="anuerysm", word="aneurysm", distance=1)
    assert speller.correction("scabbies") == Correction(said="scabbies", word="scabies", distance=1)
    assert word_frequencies("en")["cabbies"] > 0  # the everyday neighbour exists, and is rarer
    assert speller.correction("daughter") is None
    assert speller.correction("aneurysm") is None
    # one edit from abscess, but also from the far more common "access": left alone, also when a
    # UMLS synonym makes "access" a medical word (it is among the list's 1,000 most frequent)
    assert speller.correction("abcess") is None
    assert Speller(MEDICAL | {"access"}).correction("abcess") is None
    assert speller.correction("abcesss") is None  # two edits in a word of fewer than 8 letters
    assert speller.correction("acen") is None  # fewer than 5 letters
    assert speller.correction("diagnosd") is None
    assert speller.correction("2fatique") is None
    assert [c.said for c in speller.corrections("2fatique fatique2 and fatique")] == ["fatique"]


def test_a_misspelled_dutch_medical_word_is_corrected_to_the_dictionary_s_dutch_word() -> None:
    """GIVEN Dutch medical words and the index's English ones as protected WHEN Dutch words are
    checked against wordfreq's Dutch list THEN misspellings one edit from a medical word (two
    from 8 letters) are corrected ("bloedruk", listed by wordfreq below the Zipf floor, among
    them); an everyday Dutch word ("ziekenhuis", "moeheid"), a medical word and an English
    medical word a Dutch patient writes ("nevus", one edit from "neus") are not; accents are
    normalised away as in the question."""
    dutch = frozenset({"aambeien", "bloeddruk", "osteoporose", "symptomen", "neus", "bloedarmoede"})
    speller = Speller(dutch, language="nl", protected=frozenset({"nevus", "leukemia"}))
    assert speller.correction("aambijen") == Correction(said="aambijen", word="aambeien", distance=2)
    assert speller.correction("bloedruk") == Correction(said="bloedruk", word="bloeddruk", distance=1)
    assert "bloedruk" not in word_frequencies("nl") and word_frequencies("nl")["bloeddruk"] > 1000
    assert speller.correction("osteoperose") == Correction(said="osteoperose", word="osteoporose", distance=1)
    assert speller.correction("symtomen") == Correction(said="symtomen", word="symptomen", distance=1)
    assert speller.correction("ziekenhuis") is None and speller.correction("moeheid") is None
    assert speller.correction("symptomen") is None
    assert speller.correction("nevus") is None
    assert Speller(dutch, language="nl").correction("nevus") == Correction(said="nevus", word="neus", distance=1)
    assert word_frequencies("nl")["ziekenhuis"] > word_frequencies("nl")["aambeien"] > 0
    assert all(w == w.lower() and w.isalpha() for w in list(word_frequencies("nl"))[:1000])


def test_a_neighbour_that_makes_a_medical_name_decides() -> None:
    """GIVEN medical names of several words WHEN a misspelled word makes one of them with its
    neighbour THEN it is corrected even to an everyday word among the list's 1,000 most frequent
    ("heafrt attack" → heart) and against a more frequent everyday rival ("whisple disease" →
    whipple, not "whistle"); alone, neither is corrected; a possessive's "s" is no neighbour."""
    names = ["heart attack", "whipple disease", "cushing s syndrome"]
    speller = Speller(frozenset(w for n in names for w in n.split()), pairs=term_pairs(names))
    assert term_pairs(["cushing s syndrome"]) == {("cushing", "syndrome")}
    assert speller.correction("heafrt", after="attack") == Correction(said="heafrt", word="heart", distance=1)
    assert speller.correction("heafrt") is None and speller.correction("heafrt", after="disease") is None
    assert speller.correction("whisple", after="disease") == Correction(said="whisple", word="whipple", distance=1)
    assert speller.correction("whisple") is None
    assert [(c.said, c.word) for c in speller.corrections("What causes Cshing's Syndrome?")] == [("cshing", "cushing")]


def test_lookups_are_right_from_many_threads_and_ties_do_not_depend_on_the_process() -> None:
    """GIVEN one speller shared by threads (as a gunicorn worker's threads share it) WHEN four
    threads correct words for a second with a very short thread switch interval THEN every
    answer is the single-threaded one (symspellpy's edit distance keeps its working row on the
    index: without the lock, 5 of such answers were wrong in 6 s); GIVEN two medical words at the
    same distance and frequency WHEN a word between them is corrected in processes with different
    hash seeds THEN the same word is taken (the alphabetically first)."""
    speller = Speller(MEDICAL)
    words = ["aneurism", "anuerysm", "scabbies", "scabeis", "fatique", "abcesss", "daughter"]
    expected = {w: speller.correction(w) for w in words}
    wrong: list[str] = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:

        def work() -> None:
            stop = time.monotonic() + 1.0
            while time.monotonic() < stop:
                for w in words:
                    if speller.correction(w) != expected[w]:
                        wrong.append(w)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []
    code = (
        "from zolsearch.search.spelling import Speller; "
        "print(Speller(frozenset({'kallmann', 'kallmaan', 'hartnup', 'hartnop'})).correction('kallmamn').word)"
    )
    chosen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent.parent.parent,
        ).stdout.strip()
        for seed in ("1", "2", "3", "4")
    }
    assert chosen == {"kallmaan"}


def test_corrections_of_a_message_keep_its_words_and_punctuation() -> None:
    """GIVEN a message with two misspellings, one twice WHEN corrected THEN each is listed once in
    order, and the corrected text keeps the message's other words, capitals and punctuation (its
    question sentence is still a sentence)."""
    speller = Speller(MEDICAL)
    message = "What causes Chronic Fatique Syndrome? The fatique and an aneurism scare me."
    corrections = speller.corrections(message)
    assert [(c.said, c.word) for c in corrections] == [("fatique", "fatigue"), ("aneurism", "aneurysm")]
    assert text_corrected(message, corrections) == (
        "What causes Chronic fatigue Syndrome? The fatigue and an aneurysm scare me."
    )
    decomposed = unicodedata.normalize("NFD", "Is fatique common with Sjögren?")
    assert text_corrected(decomposed, speller.corrections(decomposed)) == "Is fatigue common with Sjögren?"
    # a repeat is tried again where its neighbours make a medical name
    names = ["common cold"]
    cold = Speller(frozenset({"common", "cold"}), pairs=term_pairs(names))
    assert [(c.said, c.word) for c in cold.corrections("cosmon question: is a cosmon cold serious?")] == [
        ("cosmon", "common")
    ]


def _understood(question: str, language: str, **overrides: object) -> tuple[UnderstandingTrace, list[str]]:
    """The understanding trace and the searched words of ``question`` run through the pipeline in
    the default configuration with ``overrides``."""
    state = pipeline_run(
        request=SearchRequest(question=question, language=language),
        config=pipeline_config_default().with_overrides(**overrides),
    )
    assert state.trace.understanding is not None
    return state.trace.understanding, state.search_query.split()


@pytest.mark.django_db
def test_the_pipeline_links_the_corrected_focus_and_searches_the_corrected_word() -> None:
    """GIVEN the MedQuAD slice (Botulism and Aphasia are foci) WHEN an English message misspells
    the condition its question sentence asks about ("botulsm", too short for the fuzzy match) and
    its story names another exactly ("aphasia") THEN the focus is Botulism, the corrected word is
    searched beside the question and the trace says what was corrected; with the languages
    emptied, or in French (no everyday word list), nothing is corrected and the story's Aphasia
    is the focus."""
    medquad_lexicon_clear()
    question = "how is botulsm treated? my uncle also has aphasia since last year"
    understanding, searched = _understood(question, "en")
    assert understanding.corrected == "botulsm → botulism"
    assert understanding.focus == "Botulism"
    assert searched[-1] == "botulism"
    off, searched_off = _understood(question, "en", spelling_correction_languages=())
    assert off.corrected == ""
    assert off.focus == "Aphasia" and "botulism" not in searched_off
    assert medquad_spelling(question, "fr") == []


@pytest.mark.django_db
def test_a_dutch_message_s_misspelled_condition_is_corrected_and_searched_in_dutch_and_english() -> None:
    """GIVEN the test corpus (GARD's Adolescent idiopathic scoliosis) and the Dutch medical
    dictionary ("scoliose" → scoliosis) WHEN a Dutch message misspells it ("scolliose") THEN, in
    the default configuration, the correction is traced and the Dutch and the English word are
    both searched, not the misspelling's cognate; with Dutch left
    out of the languages nothing is corrected and only the misspelling's cognate ("scolliosis")
    is searched."""
    medquad_lexicon_clear()
    question = "wat is scolliose bij tieners?"
    understanding, searched = _understood(question, "nl")
    assert understanding.corrected == "scolliose → scoliose"
    assert "scoliose" in searched and "scoliosis" in searched
    assert "scolliosis" not in searched  # the misspelling's cognate is not rendered
    off, searched_off = _understood(question, "nl", spelling_correction_languages=("en",))
    assert off.corrected == ""
    assert "scoliosis" not in searched_off and "scolliosis" in searched_off


@pytest.mark.django_db
def test_the_languages_are_checked_and_old_configurations_correct_nothing() -> None:
    """GIVEN a stored configuration from before the field WHEN read THEN it corrects nothing (what
    the pipeline did then); a language without a word list is refused with the lists named."""
    values = pipeline_config_default().as_dict()
    del values["spelling_correction_languages"]
    assert PipelineConfig.from_values(values).spelling_correction_languages == ()
    with pytest.raises(ConfigInvalid, match="no everyday word list for \\['fr'\\]; lists: en, nl"):
        PipelineConfig.from_values({**values, "spelling_correction_languages": ["fr"]})


def test_a_dutch_compound_of_everyday_words_is_not_taken_for_a_medical_word_two_edits_away() -> None:
    """GIVEN the Dutch medical words "rugproblemen", "hartziekte", "hartproblemen",
    "borstkanker" and "suikerziekte" and wordfreq's real Dutch list WHEN a Dutch word is two
    edits from one of them but is a compound of everyday Dutch words ("reuk" + "problemen",
    "hart" + "zwakte") THEN it is left as written; a misspelling two edits away whose first
    "part" is short or an English word of the Dutch web list ("han", "cost") is still corrected;
    one edit away the medical word wins ("suikerzieke", though "suiker" and "zieke" are words)."""
    from zolsearch.search.spelling import everyday_compound

    speller = Speller(
        frozenset({"rugproblemen", "hartziekte", "hartproblemen", "borstkanker", "suikerziekte"}), language="nl"
    )
    assert everyday_compound("reukproblemen", language="nl") and everyday_compound("hartzwakte", language="nl")
    assert speller.correction("reukproblemen") is None
    assert speller.correction("hartzwakte") is None
    # two edits, and no compound of Dutch words: corrected as before the rule
    assert not everyday_compound("hanproblemen", language="nl")  # "han": three letters
    assert speller.correction("hanproblemen") == Correction(said="hanproblemen", word="hartproblemen", distance=2)
    assert not everyday_compound("costkanker", language="nl")  # "cost": more English than Dutch
    assert speller.correction("costkanker") == Correction(said="costkanker", word="borstkanker", distance=2)
    assert speller.correction("suikerzieke") == Correction(said="suikerzieke", word="suikerziekte", distance=1)
    assert not everyday_compound("reukproblemen", language="en")  # English writes its compounds apart
