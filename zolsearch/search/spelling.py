"""Spelling correction of medical words in a patient's question (issue 10 item 1: patients
misspell the condition they ask about: "aneurism", "chronic fatique syndrome", "rheumatiod
arthritis", "scabbies").

A question word is corrected to a **medical word** (a word of MedQuAD's foci and UMLS synonyms
in the index, :func:`zolsearch.search.focus.medquad_words`) when all of these hold:

- it has at least :data:`SPELL_MIN_CHARS` letters, only letters (a word with a digit, "2fatique",
  is left alone), and is neither a medical word nor a stop word;
- it is not an everyday word of the question's language: absent from the language's word
  frequency list (:data:`SPELLING_LANGUAGES`; for English the list symspellpy ships,
  ``frequency_dictionary_en_82_765.txt``: 82,834 words with their counts in Google Books Ngrams,
  MIT licence; for Dutch wordfreq's large Dutch list, Speer 2022, Apache 2.0 code and CC BY-SA
  4.0 data, from Zipf :data:`SPELL_NL_MIN_ZIPF` up; other languages have no list here and are
  not corrected), and not one of the speller's ``protected`` words (for Dutch the index's
  English medical words: a Dutch patient writes "nevus" or "leukemia" as the pages do);
- a medical word is within Damerau–Levenshtein (optimal string alignment) distance 1, or 2 for a
  word of :data:`SPELL_DISTANCE_2_CHARS` letters or more (SymSpell's symmetric-delete lookup,
  Garbe 2012, through ``symspellpy``; the limits are the usual ones of SymSpell and of Norvig's
  corrector: most misspellings are one edit, long words carry two), the closest one and among
  those the most frequent in the frequency list;
- the medical word is not one of the :data:`SPELL_EVERYDAY_TOP` most frequent words of the list
  (UMLS synonyms hold everyday words: "access", "changes"), unless with the word before or after
  it, it makes two neighbouring words of a medical name ("heafrt attack" → heart attack, "cosmon
  cold" → common cold; the context of a noisy channel, read from the index's names);
- unless it makes such a pair of a medical name ("whisple disease" → Whipple disease, not
  "whistle"; "cshing's syndrome" → Cushing's syndrome), no everyday word (of the list and not a
  medical word, or among its most frequent) explains the spelling as well: none is one edit
  away when the medical word is two, none one edit away and more frequent when it is one (the
  noisy-channel choice of Kernighan, Church & Gale, COLING 1990, with the word's frequency as
  the prior and every edit equally likely): "diagnosd" is "diagnosed" (one edit, not a medical
  word), not "diagnosis" (two); "scabbies" is "scabies" (250,864) rather than "cabbies" (60,411).

The medical words are MedQuAD's foci and synonyms for an English question and the Dutch words
of the project's Dutch–English medical dictionary (``data/understanding/medical-nl-en.jsonl``)
for a Dutch one ("aambijen" → "aambeien", "osteoperose" → "osteoporose"), which the pipeline
then also renders in English.

The corrected words are what the question says, not instead of it: the pipeline links the focus
of the corrected question unless the question as written matched more words, and searches the
corrected words beside the question's own
(:class:`zolsearch.search.stages.understand.QueryUnderstandingStage`).
"""

from __future__ import annotations

import re
import string
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files

from symspellpy import SymSpell, Verbosity
from symspellpy.suggest_item import SuggestItem

from core.text import STOPWORDS, text_normalise

# language → its everyday word list: a file symspellpy ships, or wordfreq's list of that language
SPELLING_LANGUAGES = {"en": "symspellpy:frequency_dictionary_en_82_765.txt", "nl": "wordfreq:nl"}
# wordfreq's large lists reach down to Zipf 1 (one in a billion words), where the web's own
# misspellings are listed as words ("bloedruk", Zipf 1.34, beside "bloeddruk", 3.92); from 1.5
# up, 172,755 Dutch words of letters only (of 311,278 entries). Set by hand on 2026-11-27 knowing "bloedruk", one of the
# held-out noisy Dutch messages' misspellings the twenty-first session read (docs/EVALUATION.md).
SPELL_NL_MIN_ZIPF = 1.5
SPELL_MIN_CHARS = 5
# The list's most frequent words are everyday words even when a UMLS synonym has them ("access"
# of "vascular access", "changes", "baby"): a correction only within a medical name, always a
# rival one. 1,000: the usual size of a core vocabulary (the first thousand words cover most
# running text); with them as medical words the full MedQuAD's lexicon took "abcess" for
# "access" (2026-11-26).
SPELL_EVERYDAY_TOP = 1000
SPELL_DISTANCE_2_CHARS = 8
# Dutch writes a compound as one word ("reukproblemen", "hartzwakte"), and no word list holds
# every compound: a word that splits into everyday Dutch words is one, not a misspelling two
# edits from a medical word ("reukproblemen" is not "rugproblemen", "hartzwakte" not
# "hartziekte"). Each part: at least 4 letters (the first with or without a linking "s",
# "levensverwachting"; the last may itself be such a compound), at least Zipf
# :data:`COMPOUND_PART_MIN_ZIPF` in wordfreq's Dutch list and no more frequent in its English one:
# the Dutch web list holds English and other words ("cost", "all", "han"), and with them and
# 3-letter first parts 4.1 % of random two-edit misspellings of the dictionary's 1,695 Dutch
# words of 8 letters or more split into "words" ("dortkanker", "hanproblemen"); with these rules
# 0.6 % (measured 2026-12-07, a review of the change). 2.5: below "reuk" (2.98), the rarest part
# of the misspelling that prompted the rule, the third Dutch noisy dev set's "reukproblemen" →
# "rugproblemen". At one edit the medical word still wins ("suikerzieke" → "suikerziekte", though
# "suiker" and "zieke" are both words): a letter dropped is the commoner slip.
COMPOUND_LANGUAGES = frozenset({"nl"})
COMPOUND_PART_MIN_ZIPF = 2.5
COMPOUND_PART_MIN_CHARS = 4
_PREFIX_LENGTH = 7  # symspellpy's default: deletes of the first 7 characters only
_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # letters and digits: a word with a digit is not corrected
_LETTERS = string.ascii_lowercase


@dataclass(frozen=True)
class Correction:
    """One corrected word: ``said`` as the question wrote it (normalised), ``word`` the word it
    is taken for (a medical word, normalised; or an everyday word of the hospital's pages as
    they write it, accents kept: :func:`zolsearch.search.focus.page_spelling`), ``distance``
    the edits between them (1 or 2)."""

    said: str
    word: str
    distance: int


@lru_cache(maxsize=len(SPELLING_LANGUAGES))
def word_frequencies(language: str) -> dict[str, int]:
    """Word → count of the everyday word list of ``language`` (:data:`SPELLING_LANGUAGES`; read
    once per process: about 10 MB for English; 0.5 s for Dutch, whose wordfreq list and dict
    are then dropped from wordfreq's own unbounded caches). wordfreq gives
    frequencies; they are counts per billion words here (``round(f · 1e9)``, ≥ 32 at the floor), from Zipf
    :data:`SPELL_NL_MIN_ZIPF` up, so that both lists order words the same way. Words are
    normalised (:func:`core.text.text_normalise`: lower case, no accents) as the question's are.
    Raises ``KeyError`` for a language without a list."""
    package, _, name = SPELLING_LANGUAGES[language].partition(":")
    counts: dict[str, int] = {}
    if package == "wordfreq":
        import wordfreq  # only where a language's list comes from it

        least = 10 ** (SPELL_NL_MIN_ZIPF - 9)
        for word, frequency in wordfreq.get_frequency_dict(name, wordlist="large").items():
            if frequency >= least and word.isalpha():
                key = text_normalise(word)
                counts[key] = max(counts.get(key, 0), round(frequency * 1e9))
        # wordfreq holds every list it read in lru_caches without bound (tens of MB for Dutch);
        # this process needs only the counts above.
        wordfreq.get_frequency_dict.cache_clear()
        wordfreq.get_frequency_list.cache_clear()
        return counts
    text = files(package).joinpath(name).read_text(encoding="utf-8")
    for line in text.splitlines():
        word, _, count = line.partition(" ")
        if word and count.isdigit():
            counts[word] = int(count)
    return counts


@lru_cache(maxsize=4)
def most_frequent_words(language: str, top: int) -> frozenset[str]:
    """The ``top`` most frequent words of :func:`word_frequencies` of ``language`` (ties in the
    list's order), read once per language and size. Raises ``KeyError`` for a language without
    a list."""
    counts = word_frequencies(language)
    return frozenset(sorted(counts, key=lambda w: -counts[w])[:top])


@lru_cache(maxsize=4096)
def _compound_part(text: str, language: str) -> bool:
    """Whether ``text`` may be a part of an everyday compound of ``language``
    (:func:`everyday_compound`; the rules beside :data:`COMPOUND_PART_MIN_ZIPF`)."""
    import wordfreq  # the language's list is read once per process (the spellers read it too)

    return (
        len(text) >= COMPOUND_PART_MIN_CHARS
        and word_frequencies(language).get(text, 0) >= 10**COMPOUND_PART_MIN_ZIPF  # per billion: Zipf z ⇔ 10^z
        and wordfreq.zipf_frequency(text, language) >= wordfreq.zipf_frequency(text, "en")
    )


def everyday_compound(word: str, *, language: str, depth: int = 2) -> bool:
    """True when ``word`` (normalised, letters only) is a compound of everyday words of
    ``language`` (:data:`COMPOUND_LANGUAGES`; the rules and their source beside
    :data:`COMPOUND_PART_MIN_ZIPF`): a first part, with or without a linking "s", then a last
    part that is a word or, ``depth`` > 1, such a compound itself ("kattenkrabziekte"). False
    for a language not in :data:`COMPOUND_LANGUAGES`, never raises for one in it."""
    if language not in COMPOUND_LANGUAGES:
        return False
    for cut in range(COMPOUND_PART_MIN_CHARS, len(word) - COMPOUND_PART_MIN_CHARS + 1):
        head, tail = word[:cut], word[cut:]
        if not (_compound_part(head, language) or (head.endswith("s") and _compound_part(head[:-1], language))):
            continue
        if _compound_part(tail, language) or (
            depth > 1 and everyday_compound(tail, language=language, depth=depth - 1)
        ):
            return True
    return False


def _edits1(word: str) -> set[str]:
    """Every string one deletion, transposition, substitution or insertion (a–z) from ``word``
    (Norvig, "How to Write a Spelling Corrector", 2007): 54·n + 25 strings for n letters."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    transposes = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in _LETTERS]
    inserts = [a + c + b for a, b in splits for c in _LETTERS]
    return set(deletes + transposes + replaces + inserts)


def term_pairs(terms: Iterable[str]) -> frozenset[tuple[str, str]]:
    """The pairs of neighbouring words of ``terms`` (normalised names of several words), a
    possessive's lone "s" skipped ("cushing s syndrome" gives ``("cushing", "syndrome")``)."""
    pairs: set[tuple[str, str]] = set()
    for term in terms:
        words = [w for w in term.split() if w != "s"]
        pairs.update(zip(words, words[1:], strict=False))
    return frozenset(pairs)


@dataclass
class Speller:
    """The medical words of one index version (``words``: normalised, one word each), the pairs
    of neighbouring words of its medical names (``pairs``, :func:`term_pairs`), words never
    corrected though no medical word of ``language`` (``protected``) and their SymSpell
    index (distance ≤ 2, built at first use: about 0.3 s and 30 MB for the 10,000 words of the
    full MedQuAD). Thread-safe: symspellpy's edit distance keeps its working row on the index
    object, so every lookup holds ``lock`` (about 1 ms a word that gets that far). Deterministic:
    words are indexed in sorted order and ties are broken by the word. ``max_distance`` (1 or 2)
    caps the edits a correction may take below the length rule (:data:`SPELL_DISTANCE_2_CHARS`):
    the hospital pages' everyday words are corrected at one edit only
    (:func:`zolsearch.search.focus.page_spelling`). ``everyday_targets``: ``words`` are
    everyday words, so the list's most frequent ones (:data:`SPELL_EVERYDAY_TOP`) are targets
    like the others (for medical words they are targets only within a medical name)."""

    words: frozenset[str]
    pairs: frozenset[tuple[str, str]] = frozenset()
    language: str = "en"
    protected: frozenset[str] = frozenset()
    max_distance: int = 2
    everyday_targets: bool = False
    _index: SymSpell | None = field(default=None, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _index_built(self) -> SymSpell:
        """The SymSpell index of ``words``, built at the first call; the caller holds ``lock``."""
        if self._index is None:
            everyday = word_frequencies(self.language)
            self._index = SymSpell(max_dictionary_edit_distance=2, prefix_length=_PREFIX_LENGTH)
            for word in sorted(self.words):
                if len(word) >= SPELL_MIN_CHARS - 1 and word.isalpha():
                    self._index.create_dictionary_entry(word, everyday.get(word, 0) + 1)
        return self._index

    def warm(self) -> None:
        """Build the index now (a worker's warm-up), not at the first misspelled word of a request
        (0.3–1.5 s)."""
        with self.lock:
            self._index_built()

    def _lookup(self, said: str, limit: int) -> list[SuggestItem]:
        """SymSpell's closest medical words to ``said`` within ``limit`` edits, under ``lock``
        (the index is built at the first call)."""
        with self.lock:
            return self._index_built().lookup(said, Verbosity.CLOSEST, max_edit_distance=limit)

    def correction(self, said: str, *, before: str = "", after: str = "") -> Correction | None:
        """The medical word ``said`` (one normalised word, between the words ``before`` and
        ``after``; "" none) is a misspelling of, or None (module docstring for the rules)."""
        everyday = word_frequencies(self.language)
        if (
            len(said) < SPELL_MIN_CHARS
            or not said.isalpha()
            or said in self.words
            or said in self.protected
            or said in everyday
            or said in STOPWORDS.get(self.language, set())
        ):
            return None
        found = self._lookup(said, min(self.max_distance, 2 if len(said) >= SPELL_DISTANCE_2_CHARS else 1))
        core = frozenset() if self.everyday_targets else most_frequent_words(self.language, SPELL_EVERYDAY_TOP)

        def named(term: str) -> bool:
            return (before, term) in self.pairs or (term, after) in self.pairs

        # all at the closest distance: one that makes a medical name with a neighbour first, then
        # the most frequent; a core word only within a name
        found = sorted(
            (s for s in found if s.term not in core or named(s.term)),
            key=lambda s: (not named(s.term), -s.count, s.term),
        )
        if not found:
            return None
        best = found[0]
        if named(best.term):
            return Correction(said=said, word=best.term, distance=best.distance)
        near = [
            everyday[w]
            for w in _edits1(said)
            if w != best.term and w in everyday and (w not in self.words or w in core)
        ]
        if near and (best.distance > 1 or max(near) > everyday.get(best.term, 0)):
            return None  # an everyday word explains the spelling as well or better
        if best.distance > 1 and everyday_compound(said, language=self.language):
            return None  # a compound of everyday words, as written ("reukproblemen")
        return Correction(said=said, word=best.term, distance=best.distance)

    def corrections(self, text: str) -> list[Correction]:
        """The corrections of ``text``'s words (normalised with :func:`core.text.text_normalise`;
        a possessive's lone "s" is not a neighbour), in order, each misspelling once (a repeat is
        tried again until one place corrects it: its neighbours differ); ``[]`` when none."""
        words = [w for w in _WORD.findall(text_normalise(text)) if w != "s"]
        out: list[Correction] = []
        corrected: set[str] = set()
        for i, said in enumerate(words):
            if said in corrected:
                continue
            before, after = words[i - 1] if i else "", words[i + 1] if i + 1 < len(words) else ""
            found = self.correction(said, before=before, after=after)
            if found is not None:
                corrected.add(said)
                out.append(found)
        return out


# How the trace records the corrections ("faktuur → factuur; aneurism → aneurysm"): written by
# understanding (:func:`corrections_trace`), read back by the gate's term agreement and its
# calibration from stored answers (:func:`corrected_words`).
_TRACE_ARROW = " → "
_TRACE_SEPARATOR = "; "


def corrections_trace(corrections: Iterable[Correction]) -> str:
    """The corrections as the trace's ``understanding.corrected`` records them: "said → word"
    joined by "; " ("" for none)."""
    return _TRACE_SEPARATOR.join(f"{c.said}{_TRACE_ARROW}{c.word}" for c in corrections)


def corrected_words(trace: str) -> list[str]:
    """The words the question was corrected to, read from a trace's ``understanding.corrected``
    (:func:`corrections_trace`), in order; ``[]`` for "" or a part without an arrow."""
    parts = (part.partition(_TRACE_ARROW) for part in trace.split(_TRACE_SEPARATOR)) if trace else ()
    return [word.strip() for _said, arrow, word in parts if arrow and word.strip()]


def text_corrected(text: str, corrections: list[Correction]) -> str:
    """``text`` as written (in Unicode NFC, so a decomposed accent stays in its word), with each
    word whose normalised form (:func:`core.text.text_normalise`) was corrected replaced by its
    medical word (whole words; punctuation and sentences kept, so the question sentence is still
    found in it)."""
    by_said = {c.said: c.word for c in corrections}
    return _WORD.sub(lambda m: by_said.get(text_normalise(m.group(0)), m.group(0)), unicodedata.normalize("NFC", text))
