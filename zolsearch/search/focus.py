"""Focus linking (issue 10 item 1): what a question is about (a condition, drug, procedure,
department or doctor), linked to where the knowledge base names it.

Three sources; the taxonomy first, then whichever of SNOMED CT and MedQuAD matches more words of
the question (SNOMED CT on a tie, unless its term is one generic word of MedQuAD's names that
is no MedQuAD term itself, "infection", and MedQuAD's a word that is no everyday word,
"nocardia"); within one source the longest match wins:

1. **the hospital's taxonomy** (first whatever else matches, but for two cases): entities the
   question names directly (an approved alias, the
   entity's name, or the entity linked to a SNOMED CT concept the question names), from the
   taxonomy stage's resolution (:func:`taxonomy.resolver.text_resolve`; no query of its own).
   Entities reached only through IS_A or a finding site (the department that treats a condition)
   are routing, not the focus. The two cases: a message of several sentences that names the
   entity in its story only and a MedQuAD focus in its question sentence is about the latter
   ("My son has type 1 diabetes … What is hypoglycaemia exactly?"); a condition entity inside a
   longer MedQuAD name the question says yields to that name ("central diabetes insipidus");
2. **SNOMED CT descriptions**: the concept whose description the question names longest; its
   kind from the semantic tag of its fully specified name ("(disorder)" → condition, one query
   for the candidate concepts);
3. **MedQuAD's focus annotations** (Ben Abacha & Demner-Fushman, BMC Bioinformatics 2019): the
   ``<Focus>`` of each ingested MedQuAD document and its UMLS ``<Synonyms>`` (of at least
   :data:`MIN_SYNONYM_CHARS` characters), with the UMLS CUI
   as identifier; kind drug for the MedlinePlus drug and supplement subsets, else condition
   (7,727 of MedQuAD's annotated documents are in the UMLS semantic group Disorders). Held per
   process, read again when the index version changed, checked at most every
   :data:`LEXICON_CHECK_S` seconds (a new ingestion is seen within that time).

When no MedQuAD term is in the question word for word, a **fuzzy** match is tried: a question
word of at least :data:`FUZZY_MIN_CHARS` letters, not a stop word, whose character-trigram
TF-IDF vector (scikit-learn ``TfidfVectorizer(analyzer="char_wb")``) has cosine ≥
:data:`FUZZY_MIN_SIMILARITY` with a focus's, or ≥ :data:`FUZZY_MIN_SIMILARITY_SYNONYM` with a
UMLS synonym's (synonyms include everyday words: "operatie" is 0.71 from "operation"), and
whose length is at least :data:`FUZZY_MIN_LENGTH_RATIO` of the term's and the other way round
(a word is not a match for a longer name it is one part of: "syndroom" is not "Bloom
syndrome", "complicaties" not "Diabetes Complications"). Words that are a word of
:data:`FUZZY_GENERIC_TERMS` or more MedQuAD terms ("syndrome", "infections", "diabetic") are
generic: they are not tried. It links the Dutch spellings of
cognate disease names patients type ("cholangiocarcinoom" → Cholangiocarcinoma 0.78, "leukemie"
→ Leukemia 0.74, "dementie" → Dementia 0.71) and their misspellings.

Names of two or more words: a Dutch question is also matched word for word in its English
spelling (:func:`_spelled_focus`: "baller-gerold syndroom" → Baller-Gerold syndrome), and a
misspelled name of several words in any language by the same trigram index
(:func:`_fuzzy_phrase_focus`: "peutz jegers syndrome" → Peutz-Jeghers syndrome); either wins
over a one-word exact match, which in a patient's story is often a word of the story
("surgery", "pregnancy", "syndrome").

Accuracy on the labelled set: ``benchmarks/understanding.py focus`` (``docs/EVALUATION.md``).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher
from functools import lru_cache

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

from core.text import STOPWORDS, abbreviation_ends, text_normalise, words_stem
from ingestion.selectors import IndexVersionedCache, chunk_word_counts, heading_words
from taxonomy.resolver import Resolution, ngrams
from zolsearch.search.glossary import (
    TARGET_LANGUAGE,
    Spelled,
    cognate_known,
    dutch_word_elsewise,
    english_spelling,
    medical_dictionary,
)
from zolsearch.search.spelling import (
    SPELL_MIN_CHARS,
    SPELLING_LANGUAGES,
    Correction,
    Speller,
    most_frequent_words,
    term_pairs,
    word_frequencies,
)

FOCUS_KINDS = ("condition", "drug", "procedure", "department", "doctor")
LEXICON_CHECK_S = 60.0
# UMLS synonyms shorter than this are acronyms ("AGS", "AMS", "MS") that read as ordinary words
# or initials in patients' messages; a focus's own name is kept whatever its length.
MIN_SYNONYM_CHARS = 4
# Fuzzy focus: question words this long or longer (shorter words are ordinary words too often),
# and the least cosine of character trigrams (chosen on hand-picked Dutch words before any
# measurement: true cognates score 0.58–0.94, "parkeren" → "marker x syndrome" 0.52, "hersenen"
# → "andersen syndrome" 0.50; docs/EVALUATION.md, "Fuzzy focus").
FUZZY_MIN_CHARS = 8
FUZZY_MIN_SIMILARITY = 0.6
FUZZY_MIN_SIMILARITY_SYNONYM = 0.75
FUZZY_MIN_LENGTH_RATIO = 0.7
FUZZY_GENERIC_TERMS = 3
# Misspelled names of two or more words (_fuzzy_phrase_focus), all provisional and set by hand
# on 2026-11-26 before the links on the noisy messages were read (there the correct links score
# 0.76-0.96, docs/EVALUATION.md): the least character-trigram cosine of a run of words with a
# term, their least length ratio, the least difflib ratio of a run's word with a word of the
# term, the longest run tried (words; MedQuAD's longer names are rarely typed whole), the most
# runs tried per message (a 1,000-character message has about 800), the shortest misspelled
# word (shorter unknown words are mostly ordinary words and initials), and the languages whose
# messages name MedQuAD's English terms ("" unknown).
PHRASE_MIN_SIMILARITY = 0.75
PHRASE_MIN_LENGTH_RATIO = 0.8
PHRASE_WORD_MIN_RATIO = 0.7
PHRASE_MAX_WORDS = 6
PHRASE_MAX_RUNS = 300
PHRASE_MIN_UNKNOWN_CHARS = 4
PHRASE_LANGUAGES = frozenset({"", "en", "nl", "fr"})
_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[^\W\d_]+", re.UNICODE)
_FUZZY_STOP = frozenset().union(*(STOPWORDS.get(language, set()) for language in ("nl", "en", "fr")))
# Entity types of the taxonomy → focus kinds (a campus or service is practical information).
_ENTITY_KIND = {"doctor": "doctor", "department": "department", "condition": "condition", "treatment": "procedure"}
# Steps of a resolution trail that mean the question names the entity itself.
_DIRECT_STEPS = frozenset({"alias", "name", "snomed"})
# SNOMED CT semantic tags (the parenthesised end of a fully specified name) → focus kinds.
_SNOMED_TAG_KIND = {
    "disorder": "condition",
    "finding": "condition",
    "morphologic abnormality": "condition",
    "procedure": "procedure",
    "regime/therapy": "procedure",
    "substance": "drug",
    "product": "drug",
    "medicinal product": "drug",
    "clinical drug": "drug",
}
_SNOMED_FSN = 900000000000003001
_TAG = re.compile(r"\(([^()]+)\)\s*$")
_DRUG_SUBSETS = frozenset({"11_MPlusDrugs_QA", "12_MPlusHerbsSupplements_QA"})
_KIND_ORDER = {kind: i for i, kind in enumerate(("doctor", "condition", "drug", "procedure", "department"))}


@dataclass(frozen=True)
class Focus:
    """The linked focus of a question.

    ``text``: the focus as its source names it (entity name, SNOMED CT term, MedQuAD focus);
    ``kind``: one of :data:`FOCUS_KINDS`; ``source``: ``"taxonomy"``, ``"snomed"`` or
    ``"medquad"``; ``identifier``: the entity's slug, the SNOMED CT concept id or the UMLS CUI
    ("" when MedQuAD gives none); ``matched``: the normalised words of the question that matched.
    """

    text: str
    kind: str
    source: str
    identifier: str
    matched: str


@dataclass(frozen=True)
class _Term:
    focus: str
    kind: str
    cui: str

    def linked(self, matched: str) -> Focus:
        """This MedQuAD term as the :class:`Focus` of a question that names it by ``matched``."""
        return Focus(text=self.focus, kind=self.kind, source="medquad", identifier=self.cui, matched=matched)


@dataclass
class _Lexicon:
    """MedQuAD's foci and UMLS synonyms of one index version: ``terms`` (normalised focus or
    synonym → its term), ``longest`` (words of the longest), and what the fuzzy match reads:
    ``foci`` (normalised foci, then synonyms), ``fuzzy_min`` and ``fuzzy_lengths`` (``(len(foci),)``
    float64: the cosine each needs, its length in characters), ``generic`` (words of ≥
    :data:`FUZZY_GENERIC_TERMS` terms) and ``fuzzy`` (the trigram TF-IDF of ``foci``, fitted at
    first use under ``lock``); ``words``: every word of ``terms`` but ``singulars`` (the keys
    of ``terms`` that are only a term's singular, :func:`singular_variants`); ``spellers``: the
    spelling corrector per language (:class:`zolsearch.search.spelling.Speller`, made at first
    use; to ``words`` for English, to the Dutch medical dictionary's words for Dutch,
    :func:`medquad_spelling`); ``equivalents``: normalised focus → the one other focus that is
    the same condition (:func:`focus_equivalents_pair`); ``childhood``: normalised focus → the
    focus of its pages for children, ``adulthood`` for adults (:func:`focus_childhood_pairs`);
    ``initialisms``: one-word keys of ``terms`` that only initialisms are, which are everyday
    words too ("cord" of cone-rod dystrophy's "CORD"), each → the names it was written as
    (:func:`initialism_everyday_keys`); ``combined``: a focus → its "A and B" topics
    (:func:`combined_topics`)."""

    terms: dict[str, _Term] = field(default_factory=dict)
    longest: int = 0
    foci: list[str] = field(default_factory=list)
    fuzzy_min: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fuzzy_lengths: np.ndarray = field(default_factory=lambda: np.zeros(0))
    generic: frozenset[str] = frozenset()
    words: frozenset[str] = frozenset()
    singulars: frozenset[str] = frozenset()
    equivalents: dict[str, str] = field(default_factory=dict)
    childhood: dict[str, _Term] = field(default_factory=dict)
    adulthood: dict[str, _Term] = field(default_factory=dict)
    initialisms: dict[str, frozenset[str]] = field(default_factory=dict)
    combined: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    fuzzy: tuple[TfidfVectorizer, sparse.csr_matrix] | None = None
    spellers: dict[str, Speller] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_PARENTHESIS = re.compile(r"\s*\(([^()]*)\)")
_ALSO_KNOWN = re.compile(r"^(also known as|also called|including)\s+", re.IGNORECASE)
_PARASITES = "Parasites - "


def focus_variants(focus: str) -> list[str]:
    """The names a MedQuAD focus title holds besides itself, as patients would say them (CDC's
    and NIDDK's foci are titles: "Alkhurma Hemorrhagic Fever (AHF)", "Parasites - Lice - Head
    Lice", "Pyelonephritis: Kidney Infection"): the title without its parentheses ("alkhurma
    hemorrhagic fever", "liver cancer" of "Liver (Hepatocellular) Cancer"); a parenthesis that
    is a name of two or more words, without "also known as" ("sleeping sickness", "toxoplasma
    infection"; not an acronym, "AHF", nor a qualifier, "Recreational" of "Water Safety
    (Recreational)", which linked a question about recreational drugs), or of one word after
    "also known as" that is not an acronym ("Trichinosis" of CDC's "Parasites - Trichinellosis
    (also known as Trichinosis)"); after CDC's
    "Parasites - " prefix, the last " - " part ("Head Lice"); the part before a colon and a
    space ("Pyelonephritis"; "L-arginine:glycine …" has no space). Each at most once, the title
    itself left out; ``[]`` for a plain name. The lexicon keeps them as synonyms: a focus's own
    name wins over them."""
    out: list[str] = []

    def add(name: str) -> None:
        name = " ".join(name.split()).strip(" -:,")
        if name and name != focus and name not in out:
            out.append(name)

    for inner in _PARENTHESIS.findall(focus):
        named = inner.strip().lower().startswith("also known as ")
        inner = _ALSO_KNOWN.sub("", inner.strip())
        if len(inner.split()) >= 2 or (named and inner.strip() and not initialism_shaped(inner)):
            add(inner)
    plain = _PARENTHESIS.sub("", focus)
    add(plain)
    if plain.startswith(_PARASITES):
        add(plain[len(_PARASITES) :].split(" - ")[-1])
    if ": " in plain:
        add(plain.split(": ", 1)[0])
    return out


@lru_cache(maxsize=16_384)
def focus_title_names(focus: str) -> tuple[str, ...]:
    """The names ``focus`` (a MedQuAD focus title) holds besides itself (:func:`focus_variants`),
    normalised (:func:`core.text.text_normalise`) and of at least :data:`MIN_SYNONYM_CHARS`
    characters, in :func:`focus_variants`' order: what the lexicon keeps as the focus's synonyms
    and a page's foci include (:func:`document_foci`). Held per process (a page's foci are read
    for every candidate of every question; MedQuAD has about 10,000 foci). Never raises."""
    return tuple(name for name in map(text_normalise, focus_variants(focus)) if len(name) >= MIN_SYNONYM_CHARS)


# "<Eponym>['s|s'] syndrome|disease" as MedQuAD names it: one capitalised word, or several joined
# by hyphens ("Wolff-Parkinson-White"), possessive or not ("Graves' Disease"); "Fragile X
# syndrome" and "Niemann-Pick disease type C" have no such form (two words, a type after it),
# nor have "McArdle disease" and "von Willebrand disease" (a capital inside, a particle before).
_EPONYM_NAME = re.compile(
    r"^([A-Z][a-z\u00e0-\u00ff]+(?:-[A-Z][a-z\u00e0-\u00ff]+)*)(?:['\u2019]s|(?<=s)['\u2019])?\s+(?:[Ss]yndrome|[Dd]isease)$"
)


def eponym_short_name(name: str) -> str:
    """The word a condition's name is made of before "syndrome" or "disease", as patients say it
    alone when it is a person's name ("wat is tourette?", "hoe wordt parkinson behandeld?"):
    "Tourette" of "Tourette syndrome", "Parkinson" of "Parkinson's Disease", "Graves" of
    "Graves' Disease", "Wolff-Parkinson-White" of "Wolff-Parkinson-White syndrome"; "" for a
    name of another shape (:data:`_EPONYM_NAME`). The shape does not tell a person's name from a
    word: "Down syndrome" gives "Down", "Serotonin syndrome" "Serotonin"; the lexicon leaves out
    everyday words (:func:`_lexicon_read`). ``name`` is read in NFC (an accent and its letter as
    one character). Never raises."""
    match = _EPONYM_NAME.match(unicodedata.normalize("NFC", " ".join(name.split())))
    return match.group(1) if match else ""


# The Zipf frequency (log10 of occurrences per billion words, wordfreq) from which an eponym is an
# everyday word in English, Dutch or French, and names no condition alone. Set by hand on
# 2026-11-29 between the eponyms patients use alone (Alzheimer 3.64, Huntington 3.52, Parkinson
# 3.34, Lyme 3.26, Crohn 2.88) and the surnames and words of the same shape (Pearson 3.73, the
# French "nager" 3.74 of Nager syndrome, Graves 4.40, Wilson 4.53, Down 5.88). Medical words of
# the shape stay ("metabolic" 3.62 links Metabolic syndrome, "celiac" 2.91 Celiac disease).
EPONYM_MAX_ZIPF = 3.7
EPONYM_LANGUAGES = ("en", "nl", "fr")


def eponym_everyday(word: str) -> bool:
    """Whether ``word`` (normalised, :func:`core.text.text_normalise`) is an everyday word in one
    of :data:`EPONYM_LANGUAGES`: its wordfreq Zipf frequency there is at least
    :data:`EPONYM_MAX_ZIPF`. Never raises."""
    import wordfreq  # read only when the lexicon is built

    return any(wordfreq.zipf_frequency(word, language) >= EPONYM_MAX_ZIPF for language in EPONYM_LANGUAGES)


# English plural endings that are not a plural: "-ss" (abscess), "-us" (lupus), "-is"
# (sclerosis), and the shortest singular a one-word name may have (shorter plurals are everyday
# words: "falls", "burns", "hives", "mumps"; MedQuAD's one-word plurals worth it are longer:
# "bruises", "gallstones", "cataracts"). Set by hand, 2026-11-26.
_NOT_PLURAL = ("ss", "us", "is")
SINGULAR_MIN_CHARS = 6
# A one-word singular among this many most frequent English words (symspellpy's list,
# :func:`zolsearch.search.spelling.most_frequent_words`) is an
# everyday word and gets no link: "medicine" (rank 1,221), "medication" (4,396), "hormone"
# (6,712) of MedQuAD's "Medicines" and its synonyms; "headache" (10,199) and "bruise" (33,975)
# keep theirs. Set by hand, 2026-11-26.
SINGULAR_EVERYDAY_TOP = 10_000


def singular_variants(name: str) -> tuple[str, ...]:
    """The singular forms of a normalised English term whose last word reads as a regular
    plural ("urinary tract infections" → "urinary tract infection", "allergies" → "allergy",
    "bruises" → "bruise"), ``()`` when it does not (no final "s", a :data:`_NOT_PLURAL`
    ending, a word with digits, or a one-word name whose singular is shorter than
    :data:`SINGULAR_MIN_CHARS` letters). Regular English plural morphology: -ies → -y; after
    s, x, z, ch or sh both -es and -s dropped ("rashes" → "rash", "headaches" → "headache": the
    spelling alone cannot tell which); -oses → -osis ("psychoses"), -yses → -ysis ("paralyses"),
    -ases → -ase and -asis ("metastases"); else -s dropped. A wrong form is one no one types
    ("diseases" → "diseas", "diabetes" → "diabete") and links nothing. Never raises."""
    words = name.split()
    last = words[-1] if words else ""
    if len(last) < 4 or not last.endswith("s") or last.endswith(_NOT_PLURAL) or not last.isalpha():
        return ()
    if last.endswith(("oses", "yses")):
        forms = [last[:-2] + "is"]  # "psychoses" → "psychosis", "paralyses" → "paralysis"
    elif last.endswith("ases"):
        forms = [last[:-1], last[:-2] + "is"]  # "metastases" → "metastasis"; "diseases" → "disease"
    elif last.endswith("ies"):
        forms = [last[:-3] + "y"]
    elif last[:-2].endswith(("s", "x", "z", "ch", "sh")) and last.endswith("es"):
        forms = [last[:-1], last[:-2]]
    else:
        forms = [last[:-1]]
    if len(words) == 1:
        forms = [form for form in forms if len(form) >= SINGULAR_MIN_CHARS]
    return tuple(" ".join([*words[:-1], form]) for form in forms)


def _lexicon_read() -> _Lexicon:
    """The lexicon from the ingested documents' metadata (one query): each focus, its title's
    names (:func:`focus_variants`), its UMLS synonyms, its eponym (:func:`eponym_short_name`;
    not an everyday word, :func:`eponym_everyday`) and the singular of a plural name; a focus
    wins over another focus's synonym."""
    from ingestion.models import Document

    rows = (
        Document.objects.filter(metadata__has_key="focus")
        .values_list("metadata__focus", "metadata__synonyms", "metadata__umls_cuis", "metadata__subset")
        .distinct()
    )
    foci: dict[str, _Term] = {}
    synonyms: dict[str, _Term] = {}
    listed: dict[str, set[str]] = {}  # normalised focus → its normalised UMLS synonyms
    written: dict[str, set[str]] = {}  # normalised focus or UMLS synonym → the names written so
    for focus, others, cuis, subset in rows:
        if not isinstance(focus, str) or not focus.strip():
            continue
        term = _Term(
            focus=focus.strip(),
            kind="drug" if subset in _DRUG_SUBSETS else "condition",
            cui=str(cuis[0]) if isinstance(cuis, list) and cuis else "",
        )
        key = text_normalise(focus)
        foci.setdefault(key, term)
        umls = [text_normalise(s) if isinstance(s, str) else "" for s in (others if isinstance(others, list) else [])]
        listed.setdefault(key, set()).update(u for u in umls if u)
        for name in [focus, *(o for o in (others if isinstance(others, list) else []) if isinstance(o, str))]:
            written.setdefault(text_normalise(name), set()).add(name.strip())
        for normalised in [*focus_title_names(focus), *umls]:
            if len(normalised) >= MIN_SYNONYM_CHARS:
                synonyms.setdefault(normalised, term)
    # A condition named after a person is said by that name alone ("parkinson", "de ziekte van
    # crohn", "marfan"): the eponym of a focus "<Eponym>['s] syndrome|disease" is a synonym,
    # unless it is an everyday word of a patient's language (:func:`eponym_everyday`).
    # Measured on the labelled set: docs/EVALUATION.md, "Eponyms".
    for term in foci.values():
        short = text_normalise(eponym_short_name(term.focus))
        if len(short) >= MIN_SYNONYM_CHARS and not eponym_everyday(short):
            synonyms.setdefault(short, term)
    for organism, term in organism_names({**synonyms, **foci}).items():
        synonyms.setdefault(organism, term)
    terms = {k: v for k, v in {**synonyms, **foci}.items() if k}
    own = sorted(k for k in foci if k)
    others = sorted(k for k in synonyms if k and k not in foci)
    counts = Counter(word for term in terms for word in set(term.split()))
    # MedlinePlus names its topics in the plural ("Urinary Tract Infections", "Anxiety
    # Disorders"); patients, and the Dutch dictionary's renderings, say the singular. Exact
    # matches only: the fuzzy match, the speller and the generic words read the names as given.
    # A one-word singular that is an everyday word ("medication", "medicine", "hormone" of
    # MedQuAD's "Medicines" and its synonyms) would link a practical question; so would an
    # acronym's ("CLIPPERS" → "clipper").
    everyday = most_frequent_words("en", SINGULAR_EVERYDAY_TOP)
    singulars: dict[str, _Term] = {}
    for name in sorted(terms):
        term = terms[name]
        if term.focus.isupper() and name == text_normalise(term.focus):
            continue
        for singular in singular_variants(name):
            if singular not in terms and (" " in singular or singular not in everyday):
                singulars.setdefault(singular, term)
    return _Lexicon(
        terms=terms | singulars,
        longest=max((len(k.split()) for k in terms), default=0),
        foci=own + others,
        fuzzy_min=np.array([FUZZY_MIN_SIMILARITY] * len(own) + [FUZZY_MIN_SIMILARITY_SYNONYM] * len(others)),
        fuzzy_lengths=np.array([len(term) for term in own + others], dtype=np.float64),
        generic=frozenset(word for word, n in counts.items() if n >= FUZZY_GENERIC_TERMS),
        words=frozenset(counts),
        singulars=frozenset(singulars),
        equivalents=(equivalents := focus_equivalents_pair(listed)),
        childhood=focus_childhood_pairs(foci, terms, equivalents),
        adulthood=focus_childhood_pairs(foci, terms, equivalents, named_as=_ADULT_NAME),
        initialisms=initialism_everyday_keys(written, terms),
        combined=combined_topics(own, terms | singulars),
    )


# A MedQuAD topic about two conditions ("High Blood Pressure and Kidney Disease", NIDDK; "Diabetes
# and Pregnancy", MedlinePlus), normalised.
_COMBINED_NAME = re.compile(r"^(?P<first>.+?) and (?:the )?(?P<second>.+)$")


def combined_topics(foci: Iterable[str], terms: Mapping[str, _Term]) -> dict[str, list[tuple[str, str]]]:
    """The topics among ``foci`` (normalised focus names) that name two conditions,
    "A and [the] B" (:data:`_COMBINED_NAME`), A and B each a term of ``terms`` of another focus
    than the topic and each other, by each part's focus → ``[(the topic's normalised name, the
    other part's focus)]`` in ``foci``'s order. Focus names only: UMLS's synonyms pair stranger
    things ("addison disease and cerebral sclerosis"). On the full MedQuAD: 16 topics, such as
    NIDDK's "Amyloidosis and Kidney Disease" and NINDS's "Meningitis and Encephalitis". Never
    raises."""
    combined: dict[str, list[tuple[str, str]]] = {}
    for name in foci:
        match = _COMBINED_NAME.match(name)
        topic = terms.get(name)
        if match is None or topic is None:
            continue
        first, second = terms.get(match["first"]), terms.get(match["second"])
        if first is None or second is None or len({first.focus, second.focus, topic.focus}) < 3:
            continue
        combined.setdefault(first.focus, []).append((name, second.focus))
        combined.setdefault(second.focus, []).append((name, first.focus))
    return combined


def combined_focus(focus: Focus, text: str) -> Focus | None:
    """MedQuAD's topic of two conditions (:func:`combined_topics`) when ``focus`` (MedQuAD's or
    SNOMED CT's; the caller keeps a taxonomy entity) names one of them (its name a term of the
    lexicon) and ``text`` (what the question searches, with its
    Dutch words' English) says a term of the other: "How can I prevent kidney disease from high
    blood pressure?" is NIDDK's "High Blood Pressure and Kidney Disease", not High Blood
    Pressure; "hoge bloeddruk en nierziekte" too. ``matched`` stays ``focus``'s. None when
    there is no such topic. Never raises."""
    lexicon = _LEXICON.get()
    term = lexicon.terms.get(text_normalise(focus.text))
    options = lexicon.combined.get(term.focus, []) if term is not None else []
    if not options:
        return None
    said = {lexicon.terms[g].focus for g in ngrams(text_normalise(text), max_n=lexicon.longest) if g in lexicon.terms}
    for name, other in options:
        if other in said:
            return lexicon.terms[name].linked(focus.matched)
    return None


# "<Organism> Infection(s)" as MedQuAD names an infection (MedlinePlus's "Campylobacter
# Infections", CDC's "Parasites - Cyclosporiasis (Cyclospora Infection)"), normalised.
_INFECTION_NAME = re.compile(r"^(?P<organism>[^\W\d_]+) infections?$")
# English adjective endings: "Fungal", "Pneumococcal", "Staphylococcal", "Viral" Infections name a
# kind of infection, not an organism a patient names alone.
_ADJECTIVE_ENDINGS = ("al", "ic", "ous", "ary")


def organism_names(terms: Mapping[str, _Term]) -> dict[str, _Term]:
    """The organisms ``terms`` (normalised name → its term) name infections after, each → the
    term of its infection: patients name the organism alone ("positive for campylobacter",
    "baylisascaris", noisy dev en4 and the first noisy dev set, 2026-12-08). Of one word
    (:data:`_INFECTION_NAME`), at least :data:`MIN_SYNONYM_CHARS` letters, not an adjective
    (:data:`_ADJECTIVE_ENDINGS`: "fungal", "pneumococcal", "viral"), not an everyday word
    (:func:`eponym_everyday`: "skin", "bone"; "yeast", Zipf 3.67, is not one), and named after by
    one focus only.
    Never raises."""
    named: dict[str, dict[str, _Term]] = {}  # organism → focus → its term (of the first key in order)
    for key in sorted(terms):
        match = _INFECTION_NAME.match(key)
        organism = match.group("organism") if match is not None else ""
        if len(organism) >= MIN_SYNONYM_CHARS and not organism.endswith(_ADJECTIVE_ENDINGS):
            named.setdefault(organism, {}).setdefault(terms[key].focus, terms[key])
    return {
        organism: next(iter(foci.values()))
        for organism, foci in sorted(named.items())
        if len(foci) == 1 and not eponym_everyday(organism)
    }


def initialism_shaped(name: str) -> bool:
    """Whether ``name`` is written as an initialism: one word with at least two capitals and
    no fewer capitals than small letters ("CORD", "chILD", "CLIPPERS", "HbA1c"; not "McArdle",
    "DiGeorge", "Asthma"). Never raises."""
    letters = [c for c in name if c.isalpha()]
    upper = sum(c.isupper() for c in letters)
    return " " not in name.strip() and upper >= 2 and upper * 2 >= len(letters)


def initialism_everyday_keys(
    written: Mapping[str, Collection[str]], terms: Mapping[str, _Term]
) -> dict[str, frozenset[str]]:
    """Of ``written`` (normalised focus or UMLS synonym → the names it was written as), the
    one-word keys that only initialisms were written as (:func:`initialism_shaped`), that are
    an everyday word of a patient's language (:func:`eponym_everyday`) and that the title of
    the focus they name (``terms``) does not hold, each → those names: UMLS gives cone-rod
    dystrophy the synonym "CORD" and children's interstitial lung disease "ChILD", which linked
    "a brain or spinal cord tumour" and "child astrocytoma stages" (noisy dev en4, 2026-12-08);
    such a key names its condition only as written (:func:`_written_as`). A condition whose
    title says the initialism keeps it in small letters too: "aids" of HIV/AIDS, as Dutch
    writes it. Never raises."""
    return {
        key: frozenset(names)
        for key, names in written.items()
        if " " not in key
        and all(map(initialism_shaped, names))
        and key in terms
        and key not in text_normalise(terms[key].focus).split()
        and eponym_everyday(key)
    }


# How MedQuAD names a condition's pages for children apart from the condition's own (Cancer.gov's
# "Childhood Hodgkin Lymphoma", MedlinePlus's "Asthma in Children", NIDDK's "Diabetes in Children
# and Teens", GARD's "Pheochromocytoma, childhood"), normalised; the rest of a name after "and
# other" is dropped ("Childhood Acute Myeloid Leukemia and Other Myeloid Malignancies"). Read off
# the full MedQuAD's 70 foci with "child" in the name, 2026-12-07, and its 5 "Pediatric …" foci
# (MedlinePlus's "Pediatric Crohn's disease", "Pediatric sleep apnea"), 2026-12-08.
_CHILDHOOD_NAME = re.compile(
    r"^(?:(?:childhood|pediatric) (?P<first>.+)|(?P<last>.+?)(?<! of) (?:in children(?: and teens)?|childhood))$"
)
# Cancer.gov's pages of a cancer in adults ("Adult Soft Tissue Sarcoma", "Adult Hodgkin Lymphoma")
# and GARD's adult forms ("Adult neuronal ceroid lipofuscinosis"), normalised.
# Not "Adult-onset X" (a form of its own) nor an acronym ("ADULT syndrome").
_ADULT_NAME = re.compile(r"^adult (?!onset )(?P<first>.+)$")
_AND_OTHER = re.compile(r" and other .*$")


def focus_childhood_pairs(
    foci: Mapping[str, _Term],
    terms: Mapping[str, _Term],
    equivalents: Mapping[str, str],
    *,
    named_as: re.Pattern[str] = _CHILDHOOD_NAME,
) -> dict[str, _Term]:
    """Normalised focus → the MedQuAD focus of the same condition in children (``named_as``
    :data:`_ADULT_NAME`: in adults): ``foci`` maps
    each normalised focus to its term, ``terms`` every normalised name (foci, synonyms) to its
    focus's, ``equivalents`` a focus to the one other focus of the same condition
    (:func:`focus_equivalents_pair`). A focus named as a child's (:data:`_CHILDHOOD_NAME`; not
    "… of childhood", a condition of its own) pairs with the condition its name holds, under
    that name, its singular, the focus ``terms`` gives either and that focus's equivalent
    ("childhood hodgkin lymphoma" → GARD's "hodgkin lymphoma" → MedlinePlus's "hodgkin
    disease"); where two child's foci claim a condition, the one whose own name holds it wins
    ("liver cancer": Childhood Liver Cancer, not "Hepatocellular carcinoma, childhood", whose
    condition's focus is Liver Cancer), and a condition two claim alike is left out (neither is
    surely the one). Never raises."""
    claims: dict[str, dict[str, int]] = {}  # condition → child's focus → 0 by its name, 1 by a synonym's focus
    for key in foci:
        match = named_as.match(key)
        if match is None or foci[key].focus.split()[0].isupper():
            continue
        groups = match.groupdict()
        condition = _AND_OTHER.sub("", groups.get("first") or groups.get("last") or "")
        named = {condition, *singular_variants(condition)}
        derived = {text_normalise(terms[n].focus) for n in named if n in terms}
        derived |= {equivalents[n] for n in named | derived if n in equivalents}
        for name in named | derived:
            if name and name != key:
                rank = 0 if name in named else 1
                claims.setdefault(name, {})[key] = min(rank, claims.get(name, {}).get(key, rank))
    pairs: dict[str, _Term] = {}
    for name, keys in claims.items():
        best = min(keys.values())
        first = [key for key, rank in keys.items() if rank == best]
        if len(first) == 1:
            pairs[name] = foci[first[0]]
    return pairs


def focus_for_age_group(focus: Focus, group: str) -> Focus | None:
    """The MedQuAD focus of ``focus``'s condition in ``group``, "child" (Cancer.gov's "Childhood
    X", "X in Children", :func:`focus_childhood_pairs`) or "adult" (Cancer.gov's "Adult X", the
    same with :data:`_ADULT_NAME`), ``matched`` kept; None when the index has none, ``focus`` is
    not MedQuAD's or ``group`` is neither. Read as :func:`medquad_lexicon`."""
    lexicon = _LEXICON.get()
    pairs = {"child": lexicon.childhood, "adult": lexicon.adulthood}.get(group)
    if focus.source != "medquad" or pairs is None:
        return None
    term = pairs.get(text_normalise(focus.text))
    return term.linked(focus.matched) if term is not None and term.focus != focus.text else None


def focus_equivalents_pair(listed: Mapping[str, Collection[str]]) -> dict[str, str]:
    """Foci that are one condition under two names: ``listed`` maps each normalised MedQuAD
    focus to its normalised UMLS synonyms; two foci are equivalent when one lists the other
    among its synonyms (GARD's "chronic myeloid leukemia" lists "chronic myelogenous leukemia",
    Cancer.gov's focus, which lists none) and neither is so paired with any third focus. The
    result maps each such focus to the other (both ways). Only one-to-one pairs: a focus several
    others list is a family name ("charcot marie tooth disease" is a synonym of 35 of its types,
    "gm1 gangliosidosis" of its type 1), and the type's page would pass for the family's.
    Measured on the dev sets (docs/EVALUATION.md, "The same condition under another site's
    name"): of the full MedQuAD's 4,713 foci 870 are paired with another, 772 (386 pairs) one to
    one. Never raises."""
    paired: dict[str, set[str]] = {}
    for focus, synonyms in listed.items():
        for other in synonyms:
            if other != focus and other in listed:
                paired.setdefault(focus, set()).add(other)
                paired.setdefault(other, set()).add(focus)
    return {
        focus: next(iter(others))
        for focus, others in paired.items()
        if len(others) == 1 and len(paired[next(iter(others))]) == 1
    }


def focus_equivalents() -> Mapping[str, str]:
    """Normalised focus → the one other MedQuAD focus of the index that names the same condition
    (:func:`focus_equivalents_pair`; a focus without one is absent); read with the lexicon (one
    query per index version, :func:`medquad_lexicon`). Read it once per request and hand it to
    :func:`document_foci` for every candidate (the lexicon's cache takes a lock per read)."""
    return _LEXICON.get().equivalents


def focus_equivalent_written(focus: str) -> str:
    """The one other MedQuAD focus of the index that names the same condition as ``focus``
    (:func:`focus_equivalents`), as its site writes it (NINDS's "Alpers' Disease" for GHR's
    "Alpers-Huttenlocher syndrome"); "" when it has none. One read of the lexicon."""
    lexicon = _LEXICON.get()
    same = lexicon.equivalents.get(text_normalise(focus), "")
    term = lexicon.terms.get(same) if same else None
    return term.focus if term is not None else same


_LEXICON: IndexVersionedCache[_Lexicon] = IndexVersionedCache(_lexicon_read, empty=_Lexicon(), check_s=LEXICON_CHECK_S)


def medquad_lexicon() -> dict[str, _Term]:
    """Normalised focus or synonym → its MedQuAD focus, kind and first CUI. Read from the
    ingested documents' metadata (one query for the index version every
    :data:`LEXICON_CHECK_S` s, one more when it changed); a focus wins over another focus's
    synonym."""
    return _LEXICON.get().terms


def medquad_words() -> frozenset[str]:
    """Every normalised word of MedQuAD's foci and UMLS synonyms in the index (the medical
    vocabulary a Dutch cognate's English spelling is checked against,
    :func:`zolsearch.search.glossary.medical_renderings`); read as :func:`medquad_lexicon`."""
    return _LEXICON.get().words


def medquad_spelling(question: str, language: str) -> list[Correction]:
    """The misspelled medical words of ``question`` and the medical words they are taken for
    (:class:`zolsearch.search.spelling.Speller`): for English the words of MedQuAD's foci and
    synonyms; for Dutch the Dutch words of the medical dictionary
    (:func:`zolsearch.search.glossary.medical_dictionary`), the index's English medical words
    left as written, and so are the Dutch words whose English spelling is one of them
    (:func:`zolsearch.search.glossary.cognate_known`: "dysgrafie" is dysgraphia, not a
    misspelling of "dystrofie"). ``[]`` for a language without an everyday word list
    (:data:`zolsearch.search.spelling.SPELLING_LANGUAGES`) or an index without MedQuAD."""
    speller = _medical_speller(language)
    if speller is None:
        return []
    corrections = speller.corrections(question)
    if language == TARGET_LANGUAGE and corrections:
        known = _LEXICON.get().words
        corrections = [c for c in corrections if not cognate_known(c.said, known)]
    return corrections


def _medical_speller(language: str) -> Speller | None:
    """The medical speller of ``language`` for the current lexicon (:func:`medquad_spelling`),
    made at first use; None for a language without an everyday word list or an index without
    MedQuAD."""
    if language not in SPELLING_LANGUAGES:
        return None
    lexicon = _LEXICON.get()
    if not lexicon.words:
        return None
    with lexicon.lock:
        speller = lexicon.spellers.get(language)
        if speller is None:
            if language == TARGET_LANGUAGE:
                speller = Speller(
                    _dictionary_words() | _shared_medical_words(lexicon.words),
                    pairs=term_pairs(medical_dictionary()[0]),
                    language=language,
                    protected=lexicon.words,
                )
            else:
                speller = Speller(
                    lexicon.words,
                    pairs=term_pairs(t for t in lexicon.terms if t not in lexicon.singulars),
                    language=language,
                )
            lexicon.spellers[language] = speller
    return speller


def spelling_warm() -> None:
    """Read the hospital pages' words and build every speller's index (the medical ones of
    :data:`zolsearch.search.spelling.SPELLING_LANGUAGES` and the pages', :func:`page_spelling`)
    now, in a worker's warm-up, not at the first request with a misspelled word: 0.9 s to read
    the pages' words and 1.5 s to index them on this project's 2-core machine (2026-11-29)."""
    for language in SPELLING_LANGUAGES:
        speller = _medical_speller(language)
        if speller is not None:
            speller.warm()
    pages = _PAGE_WORDS.get()
    if pages is not None:
        pages.speller.warm()


# The largest edit a page word is corrected from: one. Patients misspell everyday words of the
# hospital's pages by a letter ("faktuur", "ombusdienst", "anestesist"); every correction two
# edits would add on the Dutch questions of the golden sets was another word ("gedilateerde" →
# "gerelateerde", "vaatlijden" → "maaltijden", "leverbot" → "levert", "hartzwakte" →
# "hartziekte"; docs/EVALUATION.md, "Everyday words of the hospital's pages, misspelled").
# Set 2026-11-29.
PAGE_SPELL_MAX_DISTANCE = 1


# The least length of a word of the hospital's pages that :func:`pages_lack_words` looks up:
# shorter words ("arm", "oog") are too often parts of other words or abbreviations to say what
# the pages are about; and the least length of a word that is known to the pages when it begins
# a longer word of theirs ("chemo" of "chemotherapie"; a four-letter "luis" is not known from
# "luisteren"). Set by hand, 2026-12-07.
PAGE_WORD_MIN_CHARS = 4
PAGE_PREFIX_MIN_CHARS = 5


@dataclass(frozen=True)
class _Words:
    """A set of normalised words, sorted (``words``), with their Snowball stems (``stems``):
    what :meth:`knows` looks a word up in."""

    words: tuple[str, ...] = ()
    stems: frozenset[str] = frozenset()

    @classmethod
    def of(cls, words: Collection[str]) -> _Words:
        """``words`` sorted, with their stems in :data:`zolsearch.search.glossary.TARGET_LANGUAGE`."""
        return cls(words=tuple(sorted(words)), stems=frozenset(words_stem(list(words), language=TARGET_LANGUAGE)))

    def knows(self, word: str) -> bool:
        """Whether ``word`` (normalised) is one of the words, has one of their stems, or, from
        :data:`PAGE_PREFIX_MIN_CHARS` letters, begins one ("chemo" of "chemotherapie"; one
        binary search: the word and its longer forms sort together)."""
        at = bisect_left(self.words, word)
        follows = self.words[at] if at < len(self.words) else ""
        if follows == word or words_stem([word], language=TARGET_LANGUAGE)[0] in self.stems:
            return True
        return len(word) >= PAGE_PREFIX_MIN_CHARS and follows.startswith(word)


@dataclass(frozen=True)
class _PageWords:
    """The speller to the everyday words of the hospital's pages (normalised, ``speller``) and
    each such word as the pages write it most often (``written``: normalised → written form,
    "rontgenfoto" → "röntgenfoto"), what a correction searches: neither BM25's Dutch tokenizer
    nor the Dutch Snowball stemmer folds accents; ``vocabulary``: every word of the pages of at
    least :data:`PAGE_WORD_MIN_CHARS` letters, normalised, everyday or not; ``about``: the same
    of the words of the pages' titles and headings only
    (:func:`ingestion.selectors.heading_words`), what the pages are about
    (:func:`pages_lack_words`)."""

    speller: Speller
    written: dict[str, str]
    vocabulary: _Words = _Words()
    about: _Words = _Words()


def _page_words_read() -> _PageWords | None:
    """The everyday words of the pages in the hospital's language
    (:data:`zolsearch.search.glossary.TARGET_LANGUAGE`): each word of those chunks
    (:func:`ingestion.selectors.chunk_word_counts`) whose normalised form is in the language's
    everyday word list (:func:`zolsearch.search.spelling.word_frequencies`: a page's own typo or
    a proper name is not a target), corrected to at :data:`PAGE_SPELL_MAX_DISTANCE` edits, the
    list's most frequent words among them (:data:`zolsearch.search.spelling.SPELL_EVERYDAY_TOP`:
    "ziekenhuis", "kosten") too (``everyday_targets``); the words of the pages' titles and
    headings (:func:`ingestion.selectors.heading_words`, ``about``). None when the language has
    no everyday list or no such page. Raises Django's ``DatabaseError``."""
    if TARGET_LANGUAGE not in SPELLING_LANGUAGES:
        return None
    everyday = word_frequencies(TARGET_LANGUAGE)
    forms: dict[str, tuple[int, str]] = {}  # normalised → (occurrences, written form) of its most frequent form
    vocabulary: set[str] = set()
    for written, n in chunk_word_counts(
        TARGET_LANGUAGE, min_chars=min(PAGE_WORD_MIN_CHARS, SPELL_MIN_CHARS - 1)
    ).items():
        word = text_normalise(written)
        if len(word) >= PAGE_WORD_MIN_CHARS:
            vocabulary.add(word)
        if len(written) >= SPELL_MIN_CHARS - 1 and word in everyday and (n, written) > forms.get(word, (0, "")):
            forms[word] = (n, written)
    if not forms:
        return None
    speller = Speller(
        frozenset(forms), language=TARGET_LANGUAGE, max_distance=PAGE_SPELL_MAX_DISTANCE, everyday_targets=True
    )
    about = {text_normalise(w) for w in heading_words(TARGET_LANGUAGE, min_chars=PAGE_WORD_MIN_CHARS)}
    return _PageWords(
        speller=speller,
        written={word: written for word, (_n, written) in forms.items()},
        vocabulary=_Words.of(vocabulary),
        about=_Words.of(about),
    )


_PAGE_WORDS: IndexVersionedCache[_PageWords | None] = IndexVersionedCache(
    _page_words_read, empty=None, check_s=LEXICON_CHECK_S
)


# The least length of a word of MedQuAD's names that the Dutch medical speller also corrects to:
# Dutch writes many long medical names as English does ("psoriasis", "sarcoma", "diabetes"), and
# a patient misspells them alike ("psoraisis"). Shorter words are too often Dutch words one edit
# from an English one. Set by hand, 2026-12-07, with SPELL_DISTANCE_2_CHARS.
SHARED_MEDICAL_MIN_CHARS = 8


def _shared_medical_words(words: frozenset[str]) -> frozenset[str]:
    """The words of MedQuAD's names (``words``, normalised) of at least
    :data:`SHARED_MEDICAL_MIN_CHARS` letters and none of the :data:`SINGULAR_EVERYDAY_TOP`
    most frequent English words (:func:`zolsearch.search.spelling.most_frequent_words`): the
    medical names Dutch spells as English does, as the Dutch medical speller's targets."""
    everyday = most_frequent_words("en", SINGULAR_EVERYDAY_TOP)
    return frozenset(w for w in words if len(w) >= SHARED_MEDICAL_MIN_CHARS and w.isalpha() and w not in everyday)


@lru_cache(maxsize=1)
def _dictionary_words() -> frozenset[str]:
    """Every word of the Dutch medical dictionary's Dutch phrases
    (:func:`zolsearch.search.glossary.medical_dictionary`), read once per process."""
    return frozenset(w for phrase in medical_dictionary()[0] for w in phrase.split())


def pages_lack_words(phrase: str, *, about: bool = False) -> bool:
    """Whether the hospital's own pages (the chunks in :data:`zolsearch.search.glossary.TARGET_LANGUAGE`,
    :func:`_page_words_read`) lack a word of ``phrase`` of at least :data:`PAGE_WORD_MIN_CHARS`
    letters (letters only), compared normalised: neither as written, nor by its Snowball stem
    ("tumoren" of "tumor"), nor, from :data:`PAGE_PREFIX_MIN_CHARS` letters, as the beginning of
    a longer word ("chemo" of "chemotherapie"). "galgangatresie" or "porokeratose" is in none of
    them, so a question about it cannot be answered from them however much it reads like a
    question for the hospital. With ``about``, only the words of the pages' titles and headings
    count (every word of their text when they have none): "kunstgebit" is in a page on
    preparing for an operation (take it out) and "slaapapneu" begins a word of a sleep study
    page's text, but no page is about either. Pages whose connector writes titles but no
    headings are read by their titles alone, so more Dutch questions are searched in English
    too: hospital-nl's pages (the `jsonl` connector) have 92 titles and no headings, so
    the measured effect is of titles alone.
    False when ``phrase`` has no such word, or when the pages hold no word of an everyday word
    list (no such list for the language, no page in it): then nothing is known about them.
    Read once per index version, with :func:`page_spelling`'s words. Raises Django's
    ``DatabaseError`` when reading them fails."""
    pages = _PAGE_WORDS.get()
    if pages is None:
        return False
    # pages without titles or headings in the language say nothing of what they are about:
    # then every word of their text counts, as without ``about``
    known = pages.about if about and pages.about.words else pages.vocabulary
    words = [w for w in text_normalise(phrase).split() if len(w) >= PAGE_WORD_MIN_CHARS and w.isalpha()]
    return any(not known.knows(w) for w in words)


def page_spelling(question: str, language: str, *, skip: Collection[str] = ()) -> list[Correction]:
    """The misspelled everyday words of ``question`` that the hospital's own pages spell right
    ("wanneer krijg ik de faktuur" → "factuur"; "rontgenfotos" → "röntgenfoto", as the pages
    write it; :func:`_page_words_read`), for a question in the pages' language; ``[]`` for
    another language or an index without such pages. Left alone: the words in ``skip``
    (normalised: those the medical speller corrected, :func:`medquad_spelling`), the index's
    English medical words and the Dutch medical dictionary's words (a patient writes "nevus"
    or "hielspoor" as meant; read at each call, so a new lexicon is seen). Read once per index
    version (one query, 0.1 s for 100 hospital pages)."""
    if language != TARGET_LANGUAGE:
        return []
    pages = _PAGE_WORDS.get()
    if pages is None:
        return []
    corrections = pages.speller.corrections(question)
    if not corrections:
        return []
    medical, dictionary = medquad_words(), _dictionary_words()
    return [
        replace(c, word=pages.written.get(c.word, c.word))
        for c in corrections
        if c.said not in skip and c.said not in medical and c.said not in dictionary
    ]


def document_foci(
    metadata: dict[str, object], *, title_variants: bool = True, equivalents: Mapping[str, str] | None = None
) -> frozenset[str]:
    """The normalised foci a document is about (:func:`core.text.text_normalise`): its MedQuAD
    ``metadata["focus"]`` and its UMLS ``metadata["synonyms"]``; with ``title_variants`` also
    the names its focus title holds (:func:`focus_title_names`, as the lexicon keeps them: CDC's
    "Tuberculosis (TB)" is also about "tuberculosis"); with ``equivalents`` (the index's
    :func:`focus_equivalents`; None: not read) also the focus another site names the same
    condition by (Cancer.gov's "Chronic Myelogenous Leukemia" is about GARD's "chronic myeloid
    leukemia");
    empty for a document without them (hospital pages, RIVM). A
    linked :class:`Focus` whose normalised text is among them is the page's own subject (the
    reranker's ``focus_match`` feature, the gate's focus agreement, the answer's same-focus
    chunks).

    Why the variants: the lexicon links "tuberculosis" to MedlinePlus's focus "Tuberculosis"
    (a focus's own name wins over another's variant), and without them CDC's TB pages (no UMLS
    synonyms) were about another subject, so "is there research being done on tb?" ranked
    MedlinePlus's summary above CDC's research answer. Measured on the dev sets
    (docs/EVALUATION.md, "A focus title's names are the page's too")."""
    focus, synonyms = metadata.get("focus"), metadata.get("synonyms")
    names = [focus] if isinstance(focus, str) else []
    names += [s for s in synonyms if isinstance(s, str)] if isinstance(synonyms, list) else []
    normalised = {text_normalise(name) for name in names}
    if title_variants and isinstance(focus, str):
        normalised.update(focus_title_names(focus))
    if equivalents and isinstance(focus, str):
        normalised.add(equivalents.get(text_normalise(focus), ""))
    return frozenset(n for n in normalised if n)


def medquad_lexicon_clear() -> None:
    """Forget the lexicon and the pages' speller (both are read again on next use)."""
    _LEXICON.clear()
    _PAGE_WORDS.clear()


def _snomed_kinds(concept_ids: list[int]) -> dict[int, str]:
    """Focus kind of each concept from the semantic tag of its active fully specified name (one
    query); concepts whose tag names no focus kind are absent."""
    from taxonomy.models import SnomedDescription

    kinds: dict[int, str] = {}
    names = SnomedDescription.objects.filter(concept_id__in=concept_ids, type_id=_SNOMED_FSN, active=True)
    for concept_id, name in names.values_list("concept_id", "term"):
        match = _TAG.search(name)
        kind = _SNOMED_TAG_KIND.get(match.group(1).strip().lower()) if match else None
        if kind:
            kinds.setdefault(concept_id, kind)
    return kinds


def focus_link(*, question: str, resolution: Resolution | None, language: str = "") -> Focus | None:
    """The focus of ``question`` (see the module docstring), or None when no source names one.

    ``resolution``: the taxonomy's resolution of the same question (None: the taxonomy was not
    asked; SNOMED CT and MedQuAD are still tried — SNOMED CT only through the resolution).
    ``language``: the question's (ISO 639-1; "" unknown): a one-word MedQuAD term that is a stop
    word of it names the focus only when written in capitals or as the question's last word
    (:func:`medquad_match_allowed`). A taxonomy entity said only outside the question sentence
    (:func:`question_sentence`) yields to the MedQuAD focus said in it (:func:`medquad_focus`),
    unless that is a question-type topic ("Clinical Trials": it leaves the focus to the story,
    :func:`names_question_type_topic`); a MedQuAD term the question says that holds a condition
    entity's words and more ("central diabetes insipidus" beside the entity Diabetes) wins over
    it (:func:`_longer_term_said`). Between SNOMED CT and MedQuAD, a tie goes to SNOMED CT unless
    its term is one generic word of MedQuAD's names that is no term itself ("infection") and
    MedQuAD's one word is no everyday word ("nocardia"; :func:`eponym_everyday`).
    """
    if resolution is not None:
        direct = []
        for resolved in resolution.entities:
            kind = _ENTITY_KIND.get(str(resolved.entity.type))
            steps = [str(step.get("step")) for step in resolved.trail]
            if kind and steps and steps[-1] in _DIRECT_STEPS:
                said = str(resolved.trail[0].get("text") or resolved.trail[0].get("term") or resolved.entity.name)
                direct.append((len(text_normalise(said)), -_KIND_ORDER[kind], resolved, kind, said))
        if direct:
            _, _, resolved, kind, said = max(direct, key=lambda d: (d[0], d[1]))
            sentence = question_sentence(question)
            asked = f" {text_normalise(sentence)} "
            if sentence and f" {text_normalise(said)} " not in asked and (lexicon := _LEXICON.get()).terms:
                # The story names the taxonomy's entity, the question sentence a MedQuAD focus:
                # "My son has type 1 diabetes … What is hypoglycaemia exactly?" asks about
                # Hypoglycemia (noisy dev en3), as medquad_focus reads a message.
                medquad = _medquad_focus_of(sentence, language, lexicon, asked=True)
                if medquad is not None and f" {medquad.matched} " in asked and not names_question_type_topic(medquad):
                    return medquad
            longer = _longer_term_said(question, text_normalise(said)) if kind == "condition" else None
            if longer is not None:
                # the longer name the question says wins, as between SNOMED CT and MedQuAD below:
                # "central diabetes insipidus" is not the taxonomy's Diabetes (noisy dev en4); a
                # name read from a Dutch message's English is not said so ("type 1 suikerziekte"
                # of a story beside "diabetische mastopathie", noisy dev nl3)
                return longer
            return Focus(
                text=resolved.entity.name,
                kind=kind,
                source="taxonomy",
                identifier=resolved.entity.slug,
                matched=text_normalise(said),
            )
    medquad = medquad_focus(question, language)
    # SNOMED CT and MedQuAD: the longer match wins ("wilson disease" over SNOMED CT's "disease"),
    # SNOMED CT on a tie; a concept whose tag names no focus kind (a body structure) is passed.
    words = len(medquad.matched.split()) if medquad else 0
    candidates = sorted(
        (
            (
                text_normalise(str(c.get("matched_term") or "")),
                str(c.get("matched_term") or ""),
                int(str(c["concept_id"])),
            )
            for c in (resolution.concepts if resolution is not None else [])
        ),
        key=lambda c: -len(c[0].split()),
    )
    # a one-word SNOMED CT term that is a generic word of MedQuAD's names ("infection",
    # "syndrome") does not win a tie with a MedQuAD name that is no everyday word: "a lung
    # infection called nocardia" is Nocardiosis; "nephrotic syndrome … less salt?" is not Sodium
    lexicon = _LEXICON.get()
    weak = words == 1 and medquad is not None and not eponym_everyday(medquad.matched)
    candidates = [
        c
        for c in candidates
        if len(c[0].split()) > words
        or (len(c[0].split()) == words and not (weak and c[0] in lexicon.generic and c[0] not in lexicon.terms))
    ]
    kinds = _snomed_kinds([concept_id for _, _, concept_id in candidates]) if candidates else {}
    for matched, term, concept_id in candidates:
        if concept_id in kinds:
            return Focus(
                text=term, kind=kinds[concept_id], source="snomed", identifier=str(concept_id), matched=matched
            )
    return medquad


def _longer_term_said(question: str, said: str) -> Focus | None:
    """The longest MedQuAD term (focus or UMLS synonym, exact) that the normalised ``question``
    says and that holds the normalised words ``said`` with more words ("central diabetes
    insipidus" around "diabetes"), linked; None when there is none. Never raises."""
    lexicon = _LEXICON.get()
    if not lexicon.terms or not said:
        return None
    grams = ngrams(text_normalise(question), max_n=max(1, lexicon.longest))
    gram = _longest_term((g for g in grams if len(g.split()) > len(said.split()) and f" {said} " in f" {g} "), lexicon)
    return lexicon.terms[gram].linked(gram) if gram else None


def _longest_term(grams: Iterable[str], lexicon: _Lexicon) -> str:
    """Of ``grams`` (normalised n-grams), the longest that is a term of ``lexicon``, in words
    and then in characters (the first on a tie); "" when none is. Never raises."""
    return max((g for g in grams if g in lexicon.terms), key=lambda g: (len(g.split()), len(g)), default="")


def medquad_match_allowed(gram: str, question: str, language: str) -> bool:
    """False for a one-word term that is a stop word of the question's ``language`` unless the
    question writes it in capitals or ends with it (a conjunction or preposition does not end a
    question): MedQuAD's focus "ALS" is the Dutch "als" (if, as, when), which linked Amyotrophic
    Lateral Sclerosis to 10 of the 111 hospital-nl questions ("mag ik ... als ...") and 4 of the
    noisy Dutch messages; "is dat hetzelfde als ALS?" and "levensverwachting bij als" still link
    it. In a Dutch question, a one-word term that is a Dutch word meaning something else
    (:func:`zolsearch.search.glossary.dutch_word_elsewise`) names it only in capitals: "de arts
    sprak over stadium 2" is about a doctor, not MedQuAD's "ARTS" (Arts syndrome; found on the
    noisy dev messages)."""
    if " " in gram:
        return True
    if gram not in STOPWORDS.get(language, set()):
        if language != "nl" or not dutch_word_elsewise(gram):
            return True
        return _in_capitals(gram, question)
    if _in_capitals(gram, question):
        return True  # capitals mean the acronym only when the message is not written in capitals
    words = _LETTERS.findall(text_normalise(question))
    return bool(words) and words[-1] == gram


# MedQuAD's topics whose names are what a question asks about a condition, not the condition
# (MedlinePlus's "Clinical Trials", "Genetic Testing"): named in the question sentence beside a
# story that names a condition, the story's condition is the focus. Set by hand, 2026-12-07, from
# the question types' title words (``zolsearch.search.stages.understand.QTYPE_TEMPLATE_WORDS``).
QUESTION_TYPE_TOPICS = frozenset(
    {"clinical trials", "clinical trial", "research", "genetic testing", "genetic tests", "support groups"}
)


def names_question_type_topic(focus: Focus) -> bool:
    """Whether ``focus`` is one of :data:`QUESTION_TYPE_TOPICS` (by the words it was matched by
    or by its name): a topic that says what is asked about a condition, not the condition.
    Never raises."""
    return bool({focus.matched, text_normalise(focus.text)} & QUESTION_TYPE_TOPICS)


def medquad_focus(question: str, language: str = "") -> Focus | None:
    """The MedQuAD focus ``question`` names (:func:`_medquad_focus_of`), looked for first in
    its question sentence (:func:`question_sentence`) when it has other sentences too: a
    patient asks in one sentence and tells the story in the others, and the story names
    conditions too, often spelled better than the one asked about ("how is proctitus treated?
    i was told i have it after radiotherapy for prostate cancer": Proctitis, not Prostate
    Cancer). The whole message when that sentence names none; the rest of the message when that
    sentence names only a question-type topic (:data:`QUESTION_TYPE_TOPICS`) and the rest names
    a condition; None when neither does."""
    lexicon = _LEXICON.get()
    if not lexicon.terms:
        return None
    asked = question_sentence(question)
    if asked:
        found = _medquad_focus_of(asked, language, lexicon, asked=True)
        if found is not None and not names_question_type_topic(found):
            return found
        if found is not None:
            # "Are there any clinical trials he could look into?" asks the research question
            # about the condition the story names ("a soft tissue sarcoma in his thigh")
            story = _medquad_focus_of(question.replace(asked, " "), language, lexicon)
            return story if story is not None else found
    return _medquad_focus_of(question, language, lexicon)


# The end of a sentence as patients type it: ".", "!", "?" or the Arabic "؟", once or repeated
# ("?!"), before whitespace or the end; lower-case starts are common, so no capital is needed
# (unlike core.text.sentences_split, written for pages). "2.5 mg" has no boundary.
_SENTENCE_END = re.compile(r"[.?!\u061f]+(?=\s|$)")
# An eponym's possessive typed without its apostrophe before the condition word ("reyes syndrome").
_BARE_POSSESSIVE = re.compile(r"\b([^\W\d_]{3,})s (?=(?:syndrome|disease|palsy)\b)", re.IGNORECASE)
_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_POSSESSIVE = re.compile(r"(?<=[^\W\d_])['\u2019`]s\b", re.IGNORECASE)
_QUESTION_MARKS = frozenset("?\u061f")


def question_sentence(message: str) -> str:
    """The first sentence of ``message`` whose end holds a question mark ("?", "?!", Arabic
    "؟"), when ``message`` has another sentence beside it; "" otherwise (one sentence, or no
    question). A period after an abbreviation ends no sentence (:func:`core.text.abbreviation_ends`:
    "Is Dr. Peeters goed? ik twijfel." → "Is Dr. Peeters goed?"). Never raises."""
    return next(iter(question_sentences(message)), "")


def question_sentences(message: str) -> list[str]:
    """Every sentence of ``message`` whose end holds a question mark, in order, when ``message``
    has two sentences or more (:func:`question_sentence` is the first); ``[]`` otherwise. Never
    raises."""
    sentences = message_sentences(message)
    asking = [text + end for text, end in sentences if _QUESTION_MARKS & set(end)]
    return asking if len(sentences) >= 2 else []


def message_sentences(message: str) -> list[tuple[str, str]]:
    """The sentences of a patient's ``message`` in order, each as its text (stripped) and the
    marks that end it ("?", "?!", "." …; "" for the last without any), split as
    :func:`question_sentence` splits them; ``[]`` for an empty message. Never raises."""
    sentences: list[tuple[str, str]] = []
    start = 0
    for match in _SENTENCE_END.finditer(message):
        if match.group(0) == "." and abbreviation_ends(message[start : match.end()]):
            continue
        sentences.append((message[start : match.start()].strip(), match.group(0)))
        start = match.end()
    sentences.append((message[start:].strip(), ""))
    return [(text, end) for text, end in sentences if text]


def _medquad_focus_of(question: str, language: str, lexicon: _Lexicon, *, asked: bool = False) -> Focus | None:
    """The MedQuAD focus ``question`` names: the longest exact term (focus or UMLS synonym; also
    read with a possessive joined, hyphens dropped, "a-fib" as "afib", and words typed apart
    joined, :func:`spaced_joins`; an initialism that is
    an everyday word only as written, :func:`initialism_everyday_keys`), a longer one in its
    English spelling (Dutch) or misspelled, a name with an eponym's apostrophe read in
    (:func:`_apostrophed_focus`), else the fuzzy match of one of its long words (module
    docstring); None when none. ``matched`` is what the normalised question says. ``asked``:
    ``question`` is the message's question sentence (:func:`_spelled_names`)."""
    grams = ngrams(text_normalise(question), max_n=max(1, lexicon.longest))
    joined = _POSSESSIVE.sub("s", question)
    if joined != question:
        # "robert's syndrome" is Roberts syndrome, "menke's disease" Menkes disease:
        # text_normalise splits the possessive off ("robert s"), so the joined words are tried too
        grams += ngrams(text_normalise(joined), max_n=max(1, lexicon.longest))
    unhyphenated = _HYPHEN.sub("", question)
    if unhyphenated != question:
        # "a-fib" is UMLS's "afib" (Atrial Fibrillation); text_normalise splits it to "a fib"
        grams += ngrams(text_normalise(unhyphenated), max_n=max(1, lexicon.longest))
    if spaced := spaced_joins(question, lexicon.words):
        # "cranio synostosis" is Craniosynostosis, "arterio venous malformations" AVMs
        grams += ngrams(_spaced_joined(text_normalise(question), spaced), max_n=max(1, lexicon.longest))
    found = [
        gram
        for gram in grams
        if gram in lexicon.terms
        and medquad_match_allowed(gram, question, language)
        and (gram not in lexicon.initialisms or _written_as(lexicon.initialisms[gram], gram, question))
    ]
    # a Dutch question's English spelling, read by both the spelled and the misspelled match
    units = english_spelling(question, lexicon.words) if language == TARGET_LANGUAGE else None
    spelled = _spelled_focus(units, lexicon, asked=asked) if units is not None else None
    # the longest term; of one-word terms, the one the question writes in capitals before a
    # longer one: an acronym names the condition asked about ("Wat is de oorzaak van NASH als je
    # nooit alcohol drinkt?" is Nonalcoholic steatohepatitis, not Alcohol; noisy dev nl6)
    gram = max(found, key=lambda g: (len(g.split()), _in_capitals(g, question), len(g))) if found else ""
    if spelled is not None and spelled[1] > len(gram.split()):
        return spelled[0]  # "chronische myeloide leukemie" over "leukemie" (English words)
    if len(gram.split()) < 2:
        # a misspelled name of two or more words over a one-word term of the story ("peutz
        # jegers syndrome" over Syndrome, "gallblader cancer" over Gallstones)
        phrase = _fuzzy_phrase_focus(question, lexicon, language, units, spaced)
        if phrase is not None:
            return phrase
        apostrophed = _apostrophed_focus(question, lexicon)
        if apostrophed is not None:
            return apostrophed
    if not gram:
        return _fuzzy_focus(question, lexicon, language)
    return lexicon.terms[gram].linked(_as_said(_unjoined(gram, question, spaced), text_normalise(question)))


def _unjoined(gram: str, question: str, spaced: Mapping[str, str]) -> str:
    """``gram`` with each word that :data:`_HYPHEN`'s join or :func:`spaced_joins` (``spaced``,
    the question's) made as ``question`` says it ("afib" → "a fib" for "a-fib",
    "craniosynostosis" → "cranio synostosis"), so that ``matched`` is words of the normalised
    question. Never raises."""
    said = dict(spaced)
    if "-" in question:
        said |= {
            text_normalise(_HYPHEN.sub("", word)): text_normalise(word)
            for word in re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)+", question)
        }
    return " ".join(said.get(word, word) for word in gram.split()) if said else gram


# The least length of a word :func:`spaced_joins` makes of two, and of each of the two:
# "cranio synostosis", "chorio meningitis", "hanta virus"; shorter joins are everyday compounds
# more often than medical words typed apart. Set by hand, 2026-12-08.
SPACED_JOIN_MIN_CHARS = 8
SPACED_PART_MIN_CHARS = 3


def spaced_joins(question: str, words: Collection[str]) -> dict[str, str]:
    """The words of ``question`` (normalised) a patient typed apart that are one word of
    MedQuAD's names ``words`` (:func:`medquad_words`) when joined, each joined word → the two
    words as said: "cranio synostosis" → {"craniosynostosis": "cranio synostosis"},
    "lymphocitic chorio meningitis" → {"choriomeningitis": "chorio meningitis"}. Both parts of
    at least :data:`SPACED_PART_MIN_CHARS` letters, the join of at least
    :data:`SPACED_JOIN_MIN_CHARS`; ``{}`` when there is none. Never raises."""
    tokens = text_normalise(question).split()
    return {
        a + b: f"{a} {b}"
        for a, b in zip(tokens, tokens[1:], strict=False)
        if len(a) >= SPACED_PART_MIN_CHARS
        and len(b) >= SPACED_PART_MIN_CHARS
        and len(a + b) >= SPACED_JOIN_MIN_CHARS
        and a.isalpha()
        and b.isalpha()
        and a + b in words
    }


def _spaced_joined(normalised: str, joins: Mapping[str, str]) -> str:
    """``normalised`` (a normalised question) with each pair of :func:`spaced_joins` written as
    its one word. Never raises."""
    out = f" {normalised} "
    for joined, said in joins.items():
        out = out.replace(f" {said} ", f" {joined} ")
    return out.strip()


def _apostrophed_focus(question: str, lexicon: _Lexicon) -> Focus | None:
    """The longest exact term of two or more words ``question`` names once an eponym's
    possessive typed without its apostrophe is read with it (:data:`_BARE_POSSESSIVE`: "reyes
    syndrome" is Reye's Syndrome, whose UMLS synonyms have no "reyes"; noisy dev en4), with
    ``matched`` as the question says it ("reyes syndrome"); None when it names none. Tried only
    where no exact term of two words or more and no misspelled phrase matched: the "s" it splits
    off makes the name a word longer, and among the other matches it took "ushers syndrome type
    1b" from Usher syndrome, type 1B to Usher syndrome. Never raises."""
    apostrophed = _BARE_POSSESSIVE.sub(r"\1's ", question)
    if apostrophed == question:
        return None
    grams = ngrams(text_normalise(apostrophed), max_n=max(1, lexicon.longest))
    gram = _longest_term((g for g in grams if " " in g), lexicon)
    if not gram:
        return None
    said = re.sub(r"\b([^\W\d_]+) s\b", r"\1s", gram)
    return lexicon.terms[gram].linked(said if f" {said} " in f" {text_normalise(question)} " else gram)


def _in_capitals(gram: str, question: str) -> bool:
    """Whether the one-word term ``gram`` (normalised) is written in capitals in ``question``
    ("NASH", "ALS"), which is then not written in capitals throughout (a message in capitals
    says nothing by them); False for a term of several words. Never raises."""
    return (
        " " not in gram
        and question != question.upper()
        and bool(re.search(rf"\b{re.escape(gram.upper())}\b", question))
    )


def _written_as(names: Collection[str], gram: str, question: str) -> bool:
    """Whether ``question`` writes the one-word term ``gram`` as one of ``names`` (case kept:
    "chILD") or in capitals (:func:`_in_capitals`: "CORD"). Never raises."""
    return _in_capitals(gram, question) or any(re.search(rf"\b{re.escape(name)}\b", question) for name in names)


def _as_said(gram: str, normalised: str) -> str:
    """``gram`` as the normalised question says it: a term matched through a joined possessive
    ("roberts syndrome") is said "robert s syndrome", so the focus expansion searches the name
    the pages use; else ``gram`` itself."""
    if f" {gram} " in f" {normalised} ":
        return gram
    pattern = r"\s".join(re.escape(w[:-1]) + r"\s?s" if w.endswith("s") else re.escape(w) for w in gram.split())
    found = re.search(rf"\b{pattern}\b", normalised)
    return found.group(0) if found else gram


def _phrase_tokens(question: str, units: list[Spelled] | None, spaced: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(word, said)`` pairs of ``question`` for :func:`_fuzzy_phrase_focus`: its normalised
    words, or for a Dutch question the words of its :func:`english_spelling` ``units`` (``said``
    is the Dutch word or phrase a word comes from; an English question's words typed apart are
    read joined, ``spaced``: the question's :func:`spaced_joins`), a possessive's lone "s" joined to its word ("menke's" →
    ``menkes``, as text_normalise splits it)."""
    if units is not None:
        pairs = [(word, u.dutch) for u in units for word in u.english.split()]
    else:
        # "lymphocitic chorio meningitis" is tried as "lymphocitic choriomeningitis"
        pairs = [(word, spaced.get(word, word)) for word in _spaced_joined(text_normalise(question), spaced).split()]
    tokens: list[tuple[str, str]] = []
    for word, said in pairs:
        if word == "s" and tokens and tokens[-1][0].isalpha():
            tokens[-1] = (tokens[-1][0] + "s", tokens[-1][1] + " s")
        else:
            tokens.append((word, said))
    return tokens


def _word_covered(word: str, term_words: list[str]) -> bool:
    """``word`` is a word of ``term_words`` or spelled nearly so (:class:`difflib.SequenceMatcher`
    ratio ≥ :data:`PHRASE_WORD_MIN_RATIO`: "jegers" for "jeghers", "desease" for "disease")."""
    return word in term_words or any(
        SequenceMatcher(None, word, other).ratio() >= PHRASE_WORD_MIN_RATIO for other in term_words
    )


def _fuzzy_phrase_focus(
    question: str,
    lexicon: _Lexicon,
    language: str,
    units: list[Spelled] | None = None,
    spaced: Mapping[str, str] | None = None,
) -> Focus | None:
    """The MedQuAD term a misspelled name of two to :data:`PHRASE_MAX_WORDS` words in
    ``question`` is (:func:`_phrase_tokens`; "peutz jegers syndrome" → Peutz-Jeghers syndrome,
    "jervel lange nielsen syndroom" → Jervell Lange-Nielsen syndrome), or None. A run of words
    is tried, in a message of :data:`PHRASE_LANGUAGES` and at most :data:`PHRASE_MAX_RUNS` runs
    per message, when it begins and ends with a word that is not a stop word and holds a word of
    at least :data:`PHRASE_MIN_UNKNOWN_CHARS` letters that no MedQuAD term has (the misspelling)
    beside one that a term has (the rest of the name, or its head word: "syndrome", "cancer"; a
    run of the patient's story alone is not tried); it names the term of the highest
    character-trigram cosine (the fuzzy index of :func:`_fuzzy_index`) when that cosine is at
    least :data:`PHRASE_MIN_SIMILARITY`, their lengths are within :data:`PHRASE_MIN_LENGTH_RATIO`
    of each other, they hold the same numbers ("noonan syndrome 4" is not "noonan syndrome 1")
    and every word of the run is a word of the term or spelled nearly so
    (:func:`_word_covered`: "diabetes voor onze" is not "hereditary hemochromatosis"). The run
    of the highest cosine wins. ``matched``: the words as the question says them. ``units``: a
    Dutch question's :func:`english_spelling`, whose words are the run's (None: the question's
    own words); ``spaced``: the question's :func:`spaced_joins`, read joined (None: none)."""
    if language not in PHRASE_LANGUAGES:
        return None  # MedQuAD's names are English: a Turkish or Arabic run never matches one
    tokens = _phrase_tokens(question, units, spaced or {})
    runs: list[tuple[int, int]] = []
    for start in range(len(tokens)):
        for end in range(start + 2, min(len(tokens), start + PHRASE_MAX_WORDS) + 1):
            words = [w for w, _ in tokens[start:end]]
            if words[0] in _FUZZY_STOP or words[-1] in _FUZZY_STOP:
                continue
            unknown = any(
                len(w) >= PHRASE_MIN_UNKNOWN_CHARS and w.isalpha() and w not in lexicon.words and w not in _FUZZY_STOP
                for w in words
            )
            if unknown and any(w in lexicon.words and w not in _FUZZY_STOP for w in words):
                runs.append((start, end))
                if len(runs) >= PHRASE_MAX_RUNS:
                    break
        if len(runs) >= PHRASE_MAX_RUNS:
            break
    index = _fuzzy_index(lexicon) if runs else None
    if index is None:
        return None
    vectorizer, matrix = index
    first: dict[str, tuple[int, int]] = {}  # each distinct run's text → its first place
    for start, end in runs:
        first.setdefault(" ".join(w for w, _ in tokens[start:end]), (start, end))
    texts = list(first)
    # (runs, terms) cosines in [0, 1], kept sparse: 800 runs of a 1,000-character message x
    # 15,000 terms made dense were 100 MB
    similarity = sparse.csr_matrix(vectorizer.transform(texts) @ matrix)
    columns = np.asarray(similarity.argmax(axis=1)).ravel()
    values = np.asarray(similarity.max(axis=1).todense()).ravel()
    best: tuple[float, str, int] | None = None
    for text, column, value in zip(texts, columns.tolist(), values.tolist(), strict=True):
        term = lexicon.foci[column]
        if value < PHRASE_MIN_SIMILARITY or (best is not None and value <= best[0]):
            continue
        if min(len(text), len(term)) / max(len(text), len(term)) < PHRASE_MIN_LENGTH_RATIO:
            continue
        if _DIGITS.findall(text) != _DIGITS.findall(term):
            continue
        term_words = term.split()
        if all(_word_covered(word, term_words) for word in text.split()):
            best = (value, text, column)
    if best is None:
        return None
    _, text, column = best
    start, end = first[text]
    said = " ".join(dict.fromkeys(s for _, s in tokens[start:end]))
    return lexicon.terms[lexicon.foci[column]].linked(said)


def _spelled_names(span: list[Spelled], *, asked: bool = False) -> bool:
    """Whether a run of :func:`english_spelling` units may name a focus in its English: no
    eponym (:func:`zolsearch.search.stages.understand._medical_english` links those), one unit
    translated, and one that is a name as typed (not generic, not translated: "baller gerold",
    "hodgkin") or a cognate spelling ("myeloide" → "myeloid", "nierdysplasie" → "kidney
    dysplasia"). A run of dictionary words alone ("hoge bloeddruk", "nierstenen", "buikpijn") is
    left to ``_medical_english`` too: in a patient's story such words are the story as often as
    the question ("hoe vaak komt sponsnier voor? ik heb al 3 keer nierstenen gehad"). In the
    question sentence itself (``asked``, :func:`question_sentence`) they are what is asked
    ("wordt er onderzoek gedaan naar prostaatkanker?", "welke symptomen geeft de ziekte van
    wilson?"): there any run that translates a word and is not all generic names a focus."""
    if not any(u.translated for u in span):
        return False
    if asked:
        return not all(u.generic for u in span)
    if any(u.eponym for u in span):
        return False
    return any(u.guessed or not (u.translated or u.generic) for u in span)


def _spelled_focus(units: list[Spelled], lexicon: _Lexicon, *, asked: bool = False) -> tuple[Focus, int] | None:
    """The MedQuAD term of two or more words that a Dutch question names in its English
    spelling ``units`` (:func:`zolsearch.search.glossary.english_spelling`: "wat is het baller-gerold
    syndroom?" → "baller gerold syndrome", "hodgkin lymfoom" → "hodgkin lymphoma", "hoge
    bloeddruk" → "high blood pressure"), longest first (in English words; the first on a tie),
    with its length in English words, or None. The match must translate one of its words and
    keep a name as typed or spell a cognate, or, in the question sentence (``asked``), name
    anything (:func:`_spelled_names`); one-word terms are left to the exact and fuzzy matches,
    because a lone cognate spelling names everyday things too ("operatie" is "operation",
    MedQuAD's Surgery). ``matched``: the question's Dutch words. On the Dutch noisy dev messages
    (``data/golden/medquad-dev-noisy.jsonl``) it links 16 of the 71 that had no MedQuAD focus
    and a longer one for 5 more (docs/EVALUATION.md)."""
    if lexicon.longest < 2:
        return None
    best: tuple[int, list[Spelled], str] | None = None
    for start in range(len(units)):
        english: list[str] = []
        for end in range(start, len(units)):
            english += units[end].english.split()
            if len(english) > lexicon.longest:
                break
            if len(english) < 2 or (best is not None and len(english) <= best[0]):
                continue
            term = " ".join(english)
            span = units[start : end + 1]
            if term in lexicon.terms and _spelled_names(span, asked=asked):
                best = (len(english), span, term)
    if best is None:
        return None
    words, span, term = best
    return lexicon.terms[term].linked(" ".join(u.dutch for u in span)), words


def _fuzzy_index(lexicon: _Lexicon) -> tuple[TfidfVectorizer, sparse.csr_matrix] | None:
    """The character-trigram TF-IDF of ``lexicon``'s foci and synonyms, fitted once per lexicon
    (≈ 0.2 s for 15,000 terms): the vectorizer and the terms' vectors transposed, a
    ``(trigrams, terms)`` CSR matrix, so that ``vectorizer.transform(texts) @ matrix`` is the
    ``(texts, terms)`` cosines (the vectors are L2-normalised) without transposing the terms'
    matrix on every call (4 ms each on the full MedQuAD); None when there are none."""
    with lexicon.lock:
        if not lexicon.foci:
            return None
        if lexicon.fuzzy is None:
            vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 3), sublinear_tf=True)
            lexicon.fuzzy = (vectorizer, sparse.csr_matrix(vectorizer.fit_transform(lexicon.foci).T))
        return lexicon.fuzzy


def fuzzy_focus_candidates(question: str, lexicon: _Lexicon, language: str = "") -> list[str]:
    """The normalised words of ``question`` the fuzzy match tries: at least
    :data:`FUZZY_MIN_CHARS` letters, not a stop word (Dutch, English or French), not generic
    (a word of :data:`FUZZY_GENERIC_TERMS` or more of ``lexicon``'s terms), once each; in a Dutch
    question (``language`` "nl") not a word of the Dutch medical dictionary whose renderings
    name no term of ``lexicon`` (:func:`zolsearch.search.glossary.medical_dictionary`:
    "bijholte" is "sinus", not the Scholte syndrome its letters are near; noisy dev nl8;
    "dumpingsyndroom", Dumping Syndrome, is still tried). Raises what
    :func:`zolsearch.search.glossary.medical_dictionary` raises (Dutch only)."""
    entries = medical_dictionary()[0] if language == TARGET_LANGUAGE else {}
    words: list[str] = []
    for word in _LETTERS.findall(text_normalise(question)):
        if (
            len(word) >= FUZZY_MIN_CHARS
            and word not in _FUZZY_STOP
            and word not in lexicon.generic
            and not (word in entries and not any(text_normalise(e) in lexicon.terms for e in entries[word]))
            and word not in words
        ):
            words.append(word)
    return words


def _fuzzy_focus(question: str, lexicon: _Lexicon, language: str = "") -> Focus | None:
    """The MedQuAD focus (or synonym's focus) most similar to one of the question's long words,
    when the cosine of their character trigrams reaches the term's minimum (see the module
    docstring)."""
    words = fuzzy_focus_candidates(question, lexicon, language)
    index = _fuzzy_index(lexicon) if words else None
    if index is None:
        return None
    vectorizer, matrix = index
    foci, minimum, lengths = lexicon.foci, lexicon.fuzzy_min, lexicon.fuzzy_lengths
    similarity = (vectorizer.transform(words) @ matrix).toarray()  # (words, terms), cosine in [0, 1]
    word_lengths = np.array([len(word) for word in words], dtype=np.float64)
    ratio = np.minimum.outer(word_lengths, lengths) / np.maximum.outer(word_lengths, lengths)
    similarity[(similarity < minimum) | (ratio < FUZZY_MIN_LENGTH_RATIO)] = 0.0
    row, column = np.unravel_index(int(similarity.argmax()), similarity.shape)
    if similarity[row, column] <= 0.0:
        return None
    return lexicon.terms[foci[column]].linked(words[row])
