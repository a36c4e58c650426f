"""Dictionary-based query translation of the hospital's practical vocabulary (cross-language
information retrieval with a bilingual dictionary: Ballesteros & Croft, SIGIR 1997).

The hospital's own pages are Dutch; a patient may ask in English or French ("can I get an
interpreter", "heures de visite"). Dense retrieval is cross-lingual, BM25 and the reranker's
term features are not: an English question shares no word with a Dutch page about *tolken*.
``data/understanding/glossary.jsonl`` lists the practical topics of a hospital's patient pages
(visiting, parking, interpreters, complaints, invoices, medical records, admission, …), each
with the Dutch words its pages use and the English and French words a patient would type. A
question in one of the glossary's languages other than Dutch that names a topic is also
searched with the topic's Dutch words (:class:`zolsearch.search.stages.understand.QueryUnderstandingStage`,
flag ``glossary_enabled``, only when the question wants the hospital's own pages: its routing
share, :func:`zolsearch.search.understanding.routing_share`, ≥ ``glossary_min_authority``). Medical terms are not in it: MedQuAD is English,
and Dutch names of conditions go through focus linking.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from core.jsonl import jsonl_objects
from core.text import STOPWORDS, text_normalise

GLOSSARY_FILE = Path("understanding") / "glossary.jsonl"
TARGET_LANGUAGE = "nl"  # the language of the hospital's own pages


@dataclass(frozen=True)
class GlossaryTopic:
    """One practical topic: ``dutch`` words its pages use (searched as written) and, per source
    language, the normalised phrases (:func:`core.text.text_normalise`) that name it."""

    topic: str
    dutch: tuple[str, ...]
    phrases: dict[str, tuple[str, ...]]


def _strings(value: object) -> list[str] | None:
    """``value`` when it is a list of strings (blank ones dropped), else None."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return [v.strip() for v in value if v.strip()]


@lru_cache(maxsize=1)
def glossary_topics() -> tuple[GlossaryTopic, ...]:
    """The glossary (``data/understanding/glossary.jsonl``), in file order, read once per process
    (tests that change ``settings.BASE_DIR`` call ``glossary_topics.cache_clear()``).

    Raises ``FileNotFoundError`` when it is missing and ``ValueError`` (file and line) for a row
    that is not an object with a ``topic``, a list of Dutch words and at least one list of
    phrases."""
    path = Path(settings.BASE_DIR) / "data" / GLOSSARY_FILE
    topics = []
    for number, row in jsonl_objects(path):
        dutch = _strings(row.get(TARGET_LANGUAGE))
        lists = {
            language: _strings(terms) for language, terms in row.items() if language not in {"topic", TARGET_LANGUAGE}
        }
        if (
            not isinstance(row.get("topic"), str)
            or not dutch
            or any(v is None for v in lists.values())
            or not any(lists.values())
        ):
            raise ValueError(f"{path}:{number}: a topic needs a 'topic', a list of Dutch words and lists of phrases")
        phrases = {
            language: tuple(p for p in map(text_normalise, terms or []) if p) for language, terms in lists.items()
        }
        topics.append(GlossaryTopic(topic=str(row["topic"]), dutch=tuple(dutch), phrases=phrases))
    return tuple(topics)


def glossary_translate(question: str, *, language: str, limit: int = 12) -> list[str]:
    """The Dutch words of every glossary topic ``question`` names in ``language`` (whole words
    after :func:`core.text.text_normalise`: "visit" is not in "visitation"), topics in file
    order, each word once, at most ``limit`` (12: about three topics' words; provisional, set by
    hand), without words the question already has. ``[]`` for Dutch or a language the glossary
    does not list. Raises what :func:`glossary_topics` raises."""
    if language == TARGET_LANGUAGE:
        return []
    said = f" {text_normalise(question)} "
    words: list[str] = []
    seen: set[str] = set()
    for topic in glossary_topics():
        if not any(f" {phrase} " in said for phrase in topic.phrases.get(language, ())):
            continue
        for word in topic.dutch:
            key = text_normalise(word)
            if key not in seen and f" {key} " not in said:
                seen.add(key)
                words.append(word)
    return words[:limit]


# --- Dutch medical words in English -------------------------------------------------------------

MEDICAL_FILE = Path("understanding") / "medical-nl-en.jsonl"
# Provisional, set by hand like focus.FUZZY_MIN_CHARS: shorter Dutch words are too often ordinary
# words that merely end alike ("familie", "partie").
COGNATE_MIN_CHARS = 7
# A word one letter shorter is rewritten only into a spelling the index's medical vocabulary
# has ("glioom" → "glioma", "anemie" → "anemia", "lipoom" → "lipoma"). Set 2026-12-07.
COGNATE_KNOWN_MIN_CHARS = 6
# Dutch → English spelling of medical (Greek/Latin) words, ordered: the first suffix that fits
# is rewritten ("kardiomyopathie" → "cardiomyopathy", "rabdomyosarcoom" → "rabdomyosarcoma",
# "fibrose" → "fibrosis"). Standard correspondences of the two languages' medical vocabularies.
# Where English has other endings for one Dutch ending ("deficiëntie" → "deficiency",
# "incontinentie" → "incontinence", "intolerantie" → "intolerance", but "interventie" →
# "intervention"), the alternatives are
# taken only in a spelling the index's medical vocabulary has (the first ending that has one);
# otherwise the next suffix that fits is ("-tie" → "-tion").
_COGNATE_SUFFIXES: tuple[tuple[str, str | tuple[str, ...]], ...] = (
    ("oom", "oma"),
    ("oide", "oid"),
    ("psie", "psy"),
    ("pathie", "pathy"),
    ("trofie", "trophy"),
    ("logie", "logy"),
    ("scopie", "scopy"),
    ("skopie", "scopy"),
    ("tomie", "tomy"),
    ("plastie", "plasty"),
    ("fie", ("fy", "fia")),  # "dystrofie" → "dystrophy", but "dysgrafie" → "dysgraphia"
    ("fie", "phy"),
    ("emie", "emia"),
    ("urie", "uria"),
    ("entie", ("ency", "ence")),
    ("antie", ("ance", "ancy")),  # "intolerantie" → "intolerance", but "garantie" → "guarantee"
    ("tie", "tion"),
    ("pie", ("py", "pia")),  # "myopie" → "myopia" where the index has it
    ("pie", "py"),
    ("gie", ("gy", "gia")),  # "neuralgie" → "neuralgia"
    ("gie", "gy"),
    ("ie", "ia"),
    ("ose", "osis"),
    ("isch", "ic"),
    ("ische", "ic"),
    ("euze", "ous"),
    ("euse", ("ous",)),  # French spelling ("pernicieuse"): only into the index's, not "masseuse"
    ("eus", "ous"),
    ("iteit", "ity"),
    ("itis", "itis"),
)
# Dutch → English endings of medical adjectives and nouns that everyday words share
# ("musculaire" – "muscular", "primaire" – "primary", "congenitale" – "congenital",
# "progressieve" – "progressive", "albinisme" – "albinism", "protrombine" – "prothrombin";
# but "normaal", "positief", "centrale", "toerisme" too): rewritten only when the index's medical
# vocabulary holds the English spelling, trying the endings in order, and then as a qualifier
# (generic: part of a name, never a reason on its own to search in English). Longest first.
_KNOWN_ONLY_SUFFIXES = (
    ("aire", ("ar", "ary", "al")),
    ("ieve", ("ive",)),
    ("isme", ("ism",)),
    ("iele", ("ile", "ial")),
    ("air", ("ar", "ary")),
    ("ale", ("al",)),
    ("aal", ("al",)),
    ("ief", ("ive",)),
    ("iel", ("ile", "ial")),
    ("ine", ("in", "ine")),
)
# The Dutch past participle of a verb of Latin origin, after its "ge-": "(ge)dilateerd(e)",
# "(ge)infecteerd(e)", "(ge)differentieerd(e)"; English writes the stem with "-ed" or "-ated"
# ("dilated", "infected", "differentiated"), taken only in a spelling the index has.
_PARTICIPLE = re.compile(r"([a-z]{4,})eerde?")
_K_BEFORE = re.compile(r"k(?=[aoulr])")
# Where Dutch spells a Greek or Latin medical word otherwise than English, besides its suffix
# (Dutch spelling rules, Woordenlijst Nederlandse Taal; "lymfoom" – "lymphoma", "faryngitis" –
# "pharyngitis", "oesofagus" – "esophagus", "kardiaal" – "cardial", "reflex" – "refleks"): a
# cognate is searched in the first spelling of these that the index's medical vocabulary has.
_SPELLINGS = (("ks", "x"), ("f", "ph"), ("k", "c"), ("oe", "e"))  # "ks" before "k"
_EPONYM_HEADS = {"ziekte": "disease", "syndroom": "syndrome"}
_ARTICLES = frozenset({"de", "het", "een"})


@lru_cache(maxsize=1)
def medical_dictionary() -> tuple[dict[str, tuple[str, ...]], int, frozenset[str]]:
    """``(normalised Dutch word or phrase → its English renderings, most usual first; longest
    Dutch phrase in words; the generic ones)`` from ``data/understanding/medical-nl-en.jsonl``
    (rows ``{"nl": "erfelijk", "en": ["inherited", "hereditary", "genetic"], "generic": true}``;
    generic: a question-type word or a general noun or qualifier, "ziekte", "chronisch",
    "kinderen", that names no condition on its own), read once per process.
    Raises ``FileNotFoundError`` when it is missing and ``ValueError`` (file and line) for a row
    without a Dutch string ``nl`` and a non-empty list of strings ``en``."""
    path = Path(settings.BASE_DIR) / "data" / MEDICAL_FILE
    entries: dict[str, tuple[str, ...]] = {}
    generic: set[str] = set()
    for number, row in jsonl_objects(path):
        nl = row.get("nl")
        dutch = text_normalise(nl) if isinstance(nl, str) else ""
        english = _strings(row.get("en"))
        if not dutch or not english:
            raise ValueError(f"{path}:{number}: a row needs a string 'nl' and a list 'en'")
        entries[dutch] = tuple(english)
        if row.get("generic") is True:
            generic.add(dutch)
    return entries, max((len(k.split()) for k in entries), default=1), frozenset(generic)


# The least length of a compound's first part taken as written because the index's English
# medical vocabulary has it ("anus", "colon", "larynx", "cervix"); set by hand: shorter heads
# are as often the start of another word ("oor", "arm"). Such a part must not be an everyday
# Dutch word (wordfreq Zipf below 3.7, the measure of an everyday word of
# zolsearch.search.focus.EPONYM_MAX_ZIPF): "teen" (toe, 4.0) and "stem" (voice, 5.1) are
# English words of MedQuAD's names too ("Teen Health", "Stem Cells").
COMPOUND_KNOWN_HEAD_MIN_CHARS = 4
COMPOUND_KNOWN_HEAD_MAX_ZIPF = 3.7


# An eponym's second name word is a word of the sentence instead when it is an everyday Dutch
# word (wordfreq Zipf ≥ 3.7, as for eponyms) that English hardly uses (Zipf < 3.0): "precies",
# "heeft" (0.0 in English); English surnames are frequent in Dutch text too ("johnson" 4.2,
# "hunt" 3.7) and frequent in English ("johnson" 4.7). Set by hand, 2026-12-08.
EPONYM_SECOND_WORD_NL_ZIPF = COMPOUND_KNOWN_HEAD_MAX_ZIPF
EPONYM_SECOND_WORD_EN_ZIPF = 3.0


def _sentence_word(word: str) -> bool:
    """Whether ``word`` after an eponym's name is a word of the Dutch sentence, not a second
    name word: :data:`EPONYM_SECOND_WORD_NL_ZIPF` and :data:`EPONYM_SECOND_WORD_EN_ZIPF`
    ("precies" is; "johnson" of "Stevens-Johnson", "barre" of "Guillain Barre" are not).
    Never raises."""
    import wordfreq  # the lists are read once per process (the spellers read them too)

    return (
        wordfreq.zipf_frequency(word, TARGET_LANGUAGE) >= EPONYM_SECOND_WORD_NL_ZIPF
        and wordfreq.zipf_frequency(word, "en") < EPONYM_SECOND_WORD_EN_ZIPF
    )


def _english_head(head: str, known: Collection[str]) -> bool:
    """Whether ``head`` may be a compound's first part as written (:func:`_compound`)."""
    if len(head) < COMPOUND_KNOWN_HEAD_MIN_CHARS or head not in known:
        return False
    import wordfreq  # the Dutch list is read once per process (the spellers read it too)

    return wordfreq.zipf_frequency(head, TARGET_LANGUAGE) < COMPOUND_KNOWN_HEAD_MAX_ZIPF


def _compound(
    word: str, entries: dict[str, tuple[str, ...]], depth: int = 0, known: Collection[str] = ()
) -> tuple[str, bool] | None:
    """``(English, guessed)`` of a Dutch compound whose parts are in ``entries`` ("galwegkanker" →
    "bile duct cancer"; a linking "s" or "e" between parts is allowed), longest first part
    first; the last part may instead be a long medical word spelled the English way
    (:func:`_cognate`: "nierdysplasie" → "kidney dysplasia"; spelled as ``known`` has it), and
    then ``guessed`` is True. The first part may also be a word of ``known`` of at least
    :data:`COMPOUND_KNOWN_HEAD_MIN_CHARS` letters that is no everyday Dutch word
    (:data:`COMPOUND_KNOWN_HEAD_MAX_ZIPF`), kept as written, when the dictionary lacks it (an
    organ Dutch names the Latin way: "cervixkanker" → "cervix cancer", "larynxcarcinoom" →
    "larynx carcinoma"), and then its last part a dictionary word or a cognate spelling
    ``known`` holds; or a cognate spelling of it that ``known`` holds (:func:`_cognate`:
    "hypoventilatie" + "syndroom" → "hypoventilation syndrome", tried before the shorter
    dictionary word "hypo"), and then ``guessed`` is True. None when it does not split."""
    if word in entries:
        return entries[word][0], False
    if depth >= 2:
        return None
    for cut in range(len(word) - 3, 2, -1):
        head, rest = word[:cut], word[cut:]
        own_head = head not in entries
        english = head if own_head else entries[head][0]  # "cervixkanker": an organ named the English way
        cognate_head = False
        if own_head and not (depth == 0 and _english_head(head, known)):
            # a medical word spelled the English way that the index has ("hypoventilatie" +
            # "syndroom" → "hypoventilation syndrome", before the dictionary's "hypo"): guessed
            spelled = _cognate(head, known) if depth == 0 and known else None
            if spelled is None or spelled not in known:
                continue
            english, cognate_head = spelled, True
        for tail in (rest, rest[1:] if rest[:1] in {"s", "e"} else None):
            if tail and len(tail) >= 3:
                found = _compound(tail, entries, depth + 1, known)
                cognate = _cognate(tail, known) if found is None else None
                # "-itis" reads the same in both languages: as a tail only when the index has it
                # ("cellulitis" is not "cel" + "lulitis")
                # after a head taken as written, only a tail the index spells so ("larynx" +
                # "carcinoma"; not "meningo" + "cokkeninfection")
                if cognate is not None and (cognate in known or not (own_head or tail.endswith("itis"))):
                    found = (cognate, True)
                if found:
                    return f"{english} {found[0]}", found[1] or cognate_head
    return None


def _cognate(word: str, known: Collection[str] = ()) -> str | None:
    """English spelling of a long Dutch medical word by its suffix (:data:`_COGNATE_SUFFIXES`)
    and c for k before a, o, u, l, r; None when no suffix fits. With ``known`` (the index's
    medical vocabulary, normalised words), the first spelling it holds of
    :func:`cognate_spellings` of that rewrite, then of the rewrite with its k kept
    ("lymfoom" → "lymphoma", not "lymfoma"; "leukoencefalitis" → "leukoencephalitis"), then
    the same with the Greek h Dutch drops (:func:`_known_spelling`: "trombofilie" →
    "thrombophilia"), else the rewrite. A word of :data:`COGNATE_KNOWN_MIN_CHARS` letters
    (one short of :data:`COGNATE_MIN_CHARS`) only into a spelling ``known`` holds. An ending with alternatives
    (:data:`_COGNATE_SUFFIXES`: "-entie") is rewritten only into a spelling ``known`` holds;
    otherwise the next suffix that fits is (the "-tie" of "interventie" → "intervention")."""
    if len(word) < COGNATE_MIN_CHARS:
        if len(word) < COGNATE_KNOWN_MIN_CHARS or not known:
            return None
        # one letter short: the first suffix that fits, only into a spelling ``known`` holds
        for dutch, endings in _COGNATE_SUFFIXES:
            if word.endswith(dutch):
                stem = word[: len(word) - len(dutch)]
                return _known_ending(stem, endings if isinstance(endings, tuple) else (endings,), known)
        return None
    for dutch, endings in _COGNATE_SUFFIXES:
        if not word.endswith(dutch):
            continue
        stem = word[: len(word) - len(dutch)]
        if isinstance(endings, tuple):
            spelled = _known_ending(stem, endings, known) if known else None
            if spelled is not None:
                return spelled
            continue
        kept = stem + endings
        plain = _K_BEFORE.sub("c", kept)
        if known and plain not in known:
            return _known_spelling((plain, kept), known) or plain
        return plain
    return None


def cognate_known(word: str, known: Collection[str]) -> bool:
    """Whether the normalised Dutch ``word`` is a medical word whose English spelling
    (:func:`_cognate`) ``known`` (the index's medical vocabulary) holds: "dysgrafie"
    ("dysgraphia"), "sarcoïdose"; a real word, not a misspelling of another. Never raises."""
    spelled = _cognate(word, known) if known else None
    return spelled is not None and spelled in known


def _cognate_known_only(word: str, known: Collection[str]) -> str | None:
    """English spelling of a long Dutch word by an ending everyday words share
    (:data:`_KNOWN_ONLY_SUFFIXES`: "musculaire" → "muscular", "primaire" → "primary") or a past
    participle's (:data:`_PARTICIPLE`: "gedilateerde" → "dilated"), only
    when ``known`` (the index's medical vocabulary) holds it (:func:`_known_spelling`, each
    ending in order); None otherwise, and for a word a :data:`_COGNATE_SUFFIXES` suffix fits."""
    if len(word) < COGNATE_MIN_CHARS or not known or any(word.endswith(d) for d, _ in _COGNATE_SUFFIXES):
        return None
    if word.startswith("ge") and (participle := _PARTICIPLE.fullmatch(word[2:])):
        # a past participle of a Latin verb: "gedilateerde" → "dilated", "geïnfecteerd" → "infected"
        return _known_ending(participle.group(1), ("ed", "ated"), known)
    for dutch, endings in _KNOWN_ONLY_SUFFIXES:
        if word.endswith(dutch):
            return _known_ending(word[: len(word) - len(dutch)], endings, known)
    return None


def _known_ending(stem: str, endings: tuple[str, ...], known: Collection[str]) -> str | None:
    """The first of ``stem`` + each of ``endings``, in order, that ``known`` holds in one of its
    spellings (:func:`_known_spelling` of the rewrite with c for k before a, o, u, l, r, then
    with its k kept); None when none does."""
    for ending in endings:
        kept = stem + ending
        spelled = _known_spelling((_K_BEFORE.sub("c", kept), kept), known)
        if spelled is not None:
            return spelled
    return None


def _known_spelling(rewrites: tuple[str, ...], known: Collection[str]) -> str | None:
    """The first spelling of :func:`cognate_spellings` of each of ``rewrites`` (in order) that
    ``known`` holds; else the first whose Greek h (:func:`_greek_h_index`) makes a word of
    ``known``; None when none does. At most 16 spellings per rewrite, two set lookups each."""
    spellings = [spelling for rewrite in rewrites for spelling in cognate_spellings(rewrite)]
    found = next((s for s in spellings if s in known), None)
    if found is not None:
        return found
    greek = _greek_h_index(known)
    return next((greek[k] for k in map(_without_greek_h, spellings) if k in greek), None)


def cognate_spellings(spelling: str) -> tuple[str, ...]:
    """``spelling`` and its variants under every combination of :data:`_SPELLINGS` (each rule
    applied to all its occurrences), ``spelling`` first, then the variants in the order the
    rules are applied (each rule's results after all those of the rules before it); at most
    2⁴ = 16 strings."""
    variants = [spelling]
    for dutch, english in _SPELLINGS:
        variants += [v.replace(dutch, english) for v in variants if dutch in v]
    return tuple(dict.fromkeys(variants))


def _without_greek_h(word: str) -> str:
    """``word`` without the h Dutch drops from Greek words: every "th" written "t", an initial
    "rh" written "r" ("thrombophilia" → "trombophilia", "rhabdomyosarcoma" →
    "rabdomyosarcoma"; Dutch spelling rules, Woordenlijst Nederlandse Taal: "trombose",
    "artritis", "reuma")."""
    if word.startswith("rh"):
        word = "r" + word[2:]
    return word.replace("th", "t")


@lru_cache(maxsize=4)
def _greek_h_index_of(known: frozenset[str]) -> dict[str, str]:
    index: dict[str, str] = {}
    for word in sorted(known):
        if "th" in word or word.startswith("rh"):
            index.setdefault(_without_greek_h(word), word)
    return index


def _greek_h_index(known: Collection[str]) -> dict[str, str]:
    """The words of ``known`` that have a Greek h, by their spelling without it
    (:func:`_without_greek_h`; the first in sorted order on a collision); built once per
    vocabulary when ``known`` is a frozenset (the index's, :func:`zolsearch.search.focus.medquad_words`:
    a few milliseconds for its 10,000 words)."""
    return _greek_h_index_of(known if isinstance(known, frozenset) else frozenset(known))


def _eponym(words: list[str], n: int, entries: dict[str, tuple[str, ...]]) -> tuple[tuple[str, ...], int] | None:
    """The eponym "ziekte/syndroom van [de|het|een] X [Y]" at ``words[n]`` →
    ``(("X Y disease|syndrome",), words used)``: X in English when the dictionary has it
    ("ziekte van de schildklier" → "thyroid disease"), else as written; Y only when it is a
    second name word (not a stop word, not in the dictionary, no word of the sentence,
    :func:`_sentence_word`: "ziekte van von Willebrand" → "von willebrand disease", but "ziekte
    van Parkinson erfelijk" → "parkinson disease", "syndroom van Down precies" → "down
    syndrome"); None when the words are not that."""
    if words[n] not in _EPONYM_HEADS or n + 2 >= len(words) or words[n + 1] != "van":
        return None
    end = n + 2
    while end < len(words) and words[end] in _ARTICLES:
        end += 1
    name: list[str] = []
    while end < len(words) and len(name) < 2 and words[end] not in STOPWORDS["nl"]:
        if name and (words[end] in entries or _sentence_word(words[end])):
            # "ziekte van Parkinson erfelijk", "het syndroom van Down precies in?": the second
            # word is not part of the name (a dictionary word, or a word of the sentence)
            break
        name.append(entries[words[end]][0] if words[end] in entries else words[end])
        end += 1
    if not name:
        return None
    return (f"{' '.join(name)} {_EPONYM_HEADS[words[n]]}",), end - n


@dataclass(frozen=True)
class Rendering:
    """The English of one Dutch word or phrase: ``words``, its renderings, the usual first
    ("erfelijk" → ``("inherited", "hereditary", "genetic")``; a compound's is one string of the
    first rendering of each part: ``("bile duct cancer",)``); ``generic``: it names no condition,
    organ or symptom on its own (a dictionary row marked generic, a digit or a single letter);
    ``guessed``: a cognate spelling (:func:`_cognate`), not a dictionary word; ``eponym``: a
    "ziekte/syndroom van X" (:func:`_eponym`)."""

    words: tuple[str, ...]
    generic: bool = False
    guessed: bool = False
    eponym: bool = False


def medical_renderings(question: str, known: Collection[str] = ()) -> list[Rendering]:
    """The English of the Dutch medical words of ``question``, in order, every one (not
    de-duplicated, nothing filtered; :func:`renderings_kept` chooses): dictionary phrases
    (longest first, up to its longest phrase), "ziekte/syndroom van X" → "X disease/syndrome"
    (:func:`_eponym`), compounds of two or three dictionary words, and long words by their
    English spelling (:func:`_cognate`, the spelling ``known`` holds when it holds one: the
    index's medical vocabulary; still ``guessed``). Words it cannot translate are left out (a word the
    dictionary has in both languages, "diabetes", is kept; so are digits and single letters:
    "type 2", "fragiel x"). Raises what :func:`medical_dictionary` raises."""
    return [rendering for _, rendering in _rendered_units(question, known) if rendering is not None]


def _rendered_units(question: str, known: Collection[str]) -> Iterator[tuple[str, Rendering | None]]:
    """Each unit of the Dutch ``question`` in order, as :func:`medical_renderings` reads it: the
    normalised Dutch word or phrase and its :class:`Rendering`, None for a stop word or a word
    it cannot translate. Raises what :func:`medical_dictionary` raises."""
    entries, longest, generic = medical_dictionary()
    words = text_normalise(question).split()
    n = 0
    while n < len(words):
        rendering: Rendering | None = None
        for size in range(min(longest, len(words) - n), 1, -1):
            phrase = " ".join(words[n : n + size])
            if phrase in entries:
                rendering = Rendering(entries[phrase], generic=phrase in generic)
                break
        else:
            eponym = _eponym(words, n, entries)
            if eponym is not None:
                english, size = eponym
                rendering = Rendering(english, eponym=True)
            else:
                size, word = 1, words[n]
                if word in STOPWORDS["nl"]:
                    rendering = None
                elif word.isdigit() or len(word) == 1:
                    rendering = Rendering((word,), generic=True)
                elif word in entries:
                    rendering = Rendering(entries[word], generic=word in generic)
                else:
                    cognate = _cognate(word, known)
                    # a word the index spells so is not split ("cellulitis", not "cell" + "lulitis")
                    compound = None if cognate in known else _compound(word, entries, known=known)
                    if compound:
                        rendering = Rendering((compound[0],), guessed=compound[1])
                    elif cognate:
                        rendering = Rendering((cognate,), guessed=True)
                    elif adjective := _cognate_known_only(word, known):
                        # a qualifier ("spinale", "primaire", but also "normaal", "centrale"):
                        # part of a name, never reason enough to search in English on its own
                        rendering = Rendering((adjective,), guessed=True, generic=True)
        yield " ".join(words[n : n + size]), rendering
        n += size


@dataclass(frozen=True)
class Spelled:
    """One unit of :func:`english_spelling`: ``dutch``, the normalised Dutch word or phrase of
    the question; ``english``, its normalised English (the usual rendering of a dictionary word,
    phrase, compound or eponym; a cognate spelling; else ``dutch`` itself); ``translated``:
    ``english`` differs from ``dutch``; ``generic``: the unit names nothing on its own (a
    generic dictionary row, a stop word, a digit or a single letter); ``guessed``: ``english``
    is a cognate spelling (:func:`_cognate`, alone or as a compound's last part), not a
    dictionary rendering; ``eponym``: a "ziekte/syndroom van X" (:func:`_eponym`)."""

    dutch: str
    english: str
    translated: bool
    generic: bool
    guessed: bool = False
    eponym: bool = False


def english_spelling(question: str, known: Collection[str] = ()) -> list[Spelled]:
    """Every word of the Dutch ``question`` in order, each dictionary phrase, eponym, compound
    and long medical word in English as :func:`medical_renderings` renders it (its usual
    rendering; a cognate spelled as ``known`` holds it), every other word as typed: unlike
    :func:`medical_renderings`, the words it cannot translate are kept in place, so that a
    name and its Dutch head word read as the English name ("baller-gerold syndroom" →
    ``baller gerold`` + ``syndrome``; "hodgkin lymfoom" → ``hodgkin`` + ``lymphoma``). What
    focus linking matches against MedQuAD's foci (:func:`zolsearch.search.focus.medquad_focus`).
    ``[]`` for a question without words. Raises what :func:`medical_dictionary` raises."""
    out: list[Spelled] = []
    for dutch, rendering in _rendered_units(question, known):
        english = text_normalise(rendering.words[0]) if rendering is not None else dutch
        out.append(
            Spelled(
                dutch=dutch,
                english=english or dutch,
                translated=bool(english) and english != dutch,
                generic=rendering.generic if rendering is not None else dutch in STOPWORDS["nl"],
                guessed=rendering is not None and rendering.guessed,
                eponym=rendering is not None and rendering.eponym,
            )
        )
    return out


def renderings_kept(
    renderings: list[Rendering], *, cognates: bool = True, specific: bool = True
) -> list[tuple[str, ...]]:
    """The ``words`` of ``renderings`` (:func:`medical_renderings`) in order, each once; without
    ``cognates`` the guessed spellings are left out first. ``[]`` when none is left, or, with
    ``specific``, when all that is left is generic: "Mijn zoon heeft de vallende ziekte. Welke
    dienst behandelt dat?" gave "disease treated treatment" (before "vallende ziekte" was a
    row of its own, epilepsy), which matched any MedQuAD page and added a sentence about Still's
    disease to the answer. Without ``specific`` (the caller knows
    the condition: "Wat is de prognose bij Childhood Rhabdomyosarcoma?") the question-type words
    alone are worth searching ("prognosis outlook")."""
    kept = [r for r in renderings if cognates or not r.guessed]
    if specific and all(r.generic for r in kept):
        return []
    out: list[tuple[str, ...]] = []
    for rendering in kept:
        if rendering.words not in out:
            out.append(rendering.words)
    return out


def medical_english(
    question: str, *, cognates: bool = True, specific: bool = True, known: Collection[str] = ()
) -> list[tuple[str, ...]]:
    """:func:`renderings_kept` of :func:`medical_renderings` of ``question`` (cognates spelled as
    ``known`` holds them): one tuple of renderings per Dutch word or phrase.
    ``"harige cel leukemie, is dat erfelijk?"`` → ``[("hairy",), ("cell",), ("leukemia",),
    ("inherited", "hereditary", "genetic")]``. Raises what :func:`medical_dictionary` raises."""
    return renderings_kept(medical_renderings(question, known), cognates=cognates, specific=specific)


def dutch_word_elsewise(word: str) -> bool:
    """True when ``word`` (normalised, one word) is a Dutch word of the medical dictionary whose
    English is another word ("arts" is "doctor", so not MedQuAD's "ARTS", Arts syndrome); False
    for a word the dictionary lacks and for one rendered as itself ("diabetes"). Raises what
    :func:`medical_dictionary` raises."""
    entries, _, _ = medical_dictionary()
    return word in entries and all(text_normalise(english) != word for english in entries[word])
