"""Query understanding, offline (design step 2): intent with a confidence, MedQuAD question type,
and a reduced query for long consumer messages.

- **Intent and question type**: two of the input guard's classifiers
  (:class:`~zolsearch.search.safety.guard.GuardClassifier`: multinomial logistic regression
  over the question's sentence embedding, the query vector already computed for retrieval,
  concatenated with TF-IDF character 2–5-grams of the :func:`core.text.text_normalise`-folded
  text, robust to Flemish spelling and typos). Trained in-process on first use from the
  labelled set kept in the repository (``data/understanding/labelled.jsonl``: intent, focus,
  question type, reduced query; hand-written nl/en/fr) plus, for the question type, the
  ``medquad-dev`` golden questions (MedQuAD's own ``qtype``; never the held-out set). Accuracy:
  ``benchmarks/understanding.py`` (cross-validated), ``docs/EVALUATION.md``.
- **Reduced query** (:func:`query_reduce`): for a message of :data:`REDUCE_MIN_WORDS` words or
  more, greetings, thanks and story sentences without a question
  are dropped, then stop and filler words; what remains is the focus, the question's type
  words and the content words that matter (seed 003 §3). Shorter questions are kept as they are.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
from django.conf import settings

from core.jsonl import jsonl_objects
from core.providers.embeddings import EmbeddingProvider
from core.text import STOPWORDS, sentences_split, text_normalise
from zolsearch.search.contract import Intent
from zolsearch.search.focus import message_sentences, question_sentence, question_sentences
from zolsearch.search.safety.guard import GuardClassifier

logger = logging.getLogger(__name__)

# MedQuAD's 16 question types (Ben Abacha & Demner-Fushman, 2019), plus "none" (not medical).
QTYPES = (
    "information", "symptoms", "causes", "treatment", "inheritance", "frequency", "genetic changes",
    "exams and tests", "outlook", "susceptibility", "research", "prevention", "considerations",
    "complications", "stages", "support groups", "none",
)  # fmt: skip
LABELLED_FILE = "understanding/labelled.jsonl"
QTYPE_EXTRA_FILES = ("golden/medquad-dev.jsonl",)
REDUCE_MIN_WORDS = 13

# The greetings a message may open with, in the languages of the region (Flemish "goeiendag",
# "goeiemiddag" too): dropped from the reduced query (_FILLER), and a sentence that is only one
# of them is no story (_GREETING).
_GREETINGS = (
    "hi", "hello", "hey", "dear", "hallo", "hoi", "dag", "beste", "goedendag", "goeiedag", "goeiendag",
    "goedemorgen", "goeiemorgen", "goeienmorgen", "goedemiddag", "goeiemiddag", "goeienmiddag",
    "goedenavond", "goeienavond", "bonjour",
)  # fmt: skip
# Words that carry no search meaning in a patient's message (greetings, politeness, hedges,
# story verbs), in the languages of the region; on top of core.text.STOPWORDS.
_FILLER = frozenset(_GREETINGS) | frozenset(
    text_normalise(
        """thanks thank please quick question just really very so also maybe
        anyone someone something know wondering wonder wanted want would could should tell me im ive
        i'm i've it's its was were been had have has got get getting been since ago yesterday today
        week weeks month months year years day days doctor dr told says said think thought worried
        scared terrified afraid help much many lot bit little kind sort thing things
        bedankt dank alvast
        groetjes mvg vriendelijke groeten aub graag
        even eens toch nu al nog heel echt erg beetje wel gewoon misschien iemand iets weet weten
        vraagje vraag vragen wil zou zouden mag mogen had heb hebt heeft hebben was waren ben bent
        gisteren vandaag sinds geleden week weken maand maanden jaar jaren dag dagen dokter huisarts
        zegt zei gezegd denk dacht bang ongerust zorgen schrik veel zo ja nee hier daar
        mij mijne me ne ge gij da dees hem over wa allez zoiets zulke daarvoor daarover daarvan daarmee
        daartegen daaraan ervan erover ervoor ermee eraan ertegen
        bonjour merci svp sil vous plait voudrais savoir depuis hier semaine mois ans jours
        medecin dit pense peur beaucoup tres un une des les le la du de et est ce que qui quoi
        je j ai mon ma mes suis pour avec dans sur pas ne"""
    ).split()
)
_QUESTION_CUES = re.compile(
    r"\?|\b(wat|hoe|waarom|wanneer|welke|waar|wie|is het|kan|mag|moet|what|how|why|when|which|where|who|is it|can|"
    r"should|does|do|quoi|comment|pourquoi|quand|quel|quelle|où|est-ce)\b",
    re.IGNORECASE,
)
_GREETING = re.compile(
    rf"^\s*({'|'.join(_GREETINGS)}|"
    r"thanks|thank you|bedankt|merci|groetjes|mvg)\b[^.?!]*[.!,]?\s*$",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
# Words of a question that point back to what the story before it named: pronouns and
# demonstratives, and the Dutch (and Flemish) pronominal adverbs and "such" words ("hebt ge
# daar informatie over?", "welke behandelingen zijn er daarvoor?", "waar komt zo'n tumor van?",
# "hoe wordt da behandeld?": Flemish "da" is "dat").
_BACK_REFERENCE = re.compile(
    r"\b(it|its|this|that|these|those|they|them|such|he|she|him|her|his|"
    r"het|dit|dat|da|deze|dees|die|ze|hij|zij|hem|zo['’´`]n|zulke|zoiets|"
    r"daar|daarvoor|daarover|daarvan|daarmee|daartegen|daaraan|ervan|erover|ervoor|ermee|eraan|ertegen|"
    r"ce|cela|ça|il|elle)\b",
    re.IGNORECASE,
)


def _content_words(sentence: str, stop: set[str]) -> list[str]:
    return [w for w in _WORD.findall(sentence) if (f := text_normalise(w)) and f not in stop and f not in _FILLER]


def _greeting(sentence: str, stop: set[str]) -> bool:
    """``sentence`` greets or thanks and says nothing else: it starts with a greeting
    (:data:`_GREETING`) and holds at most one content word ("Hi, quick question.", "Bedankt
    alvast!"); "Hallo, bij mijn petekindje hebben ze een ependymoom gevonden." is story, not a
    greeting, and names what the question after it asks about."""
    return _GREETING.match(sentence) is not None and len(_content_words(sentence, stop)) <= 1


@dataclass(frozen=True)
class Understanding:
    """``intent`` (an :class:`~zolsearch.search.contract.Intent` value) and ``qtype`` (one of
    :data:`QTYPES`) with their probabilities in [0, 1]; ``reduced``: the search query for
    retrieval ("" when the question is used as it is); ``intent_probabilities``: every intent
    the classifier knows → its probability (sums to 1, 4 decimals)."""

    intent: str
    intent_confidence: float
    qtype: str
    qtype_confidence: float
    reduced: str
    intent_probabilities: dict[str, float] = field(default_factory=dict)


def message_words(text: str) -> int:
    """The number of words of ``text`` as query reduction counts them (letters and digits,
    with inner hyphens and apostrophes), ≥ 0."""
    return len(_WORD.findall(text))


def query_reduce(question: str, *, language: str) -> str:
    """The reduced query of a long message ("" for ≤ :data:`REDUCE_MIN_WORDS` − 1 words).

    Sentences that are greetings or thanks and say nothing else are dropped (:func:`_greeting`);
    when some sentence asks something (a "?" or a question word), story sentences without one
    are dropped too, unless a question points back ("is it …", "kan het …", "daarvoor", "zo'n",
    "him") or has fewer than 3 content words: then the story between it and the sentence with a
    "?" before it stays (it names what "it" is). From what is left: words that are not stop
    words (question language and English) or fillers, in order, once each.
    """
    words = message_words(question)
    if words < REDUCE_MIN_WORDS:
        return ""
    stop = STOPWORDS.get(language, set()) | STOPWORDS["en"]
    sentences = [s for s in sentences_split(question) if s.strip() and not _greeting(s, stop)] or [question]
    asking = [n for n, s in enumerate(sentences) if _QUESTION_CUES.search(s)]
    if asking:
        keep = set(asking)
        # A question that points back ("is it hereditary?", "kan het kanker zijn?") or says too
        # little on its own needs the story before it, which names what "it" is: back to the
        # question before it, which names it already ("Hoe wordt hartfalen vastgesteld? Welke
        # onderzoeken gaan ze doen?").
        asked = [n for n in asking if "?" in sentences[n]]  # "kan" alone makes no question before
        for n in asking:
            if _BACK_REFERENCE.search(sentences[n]) or len(_content_words(sentences[n], stop)) < 3:
                previous = max((m for m in asked if m < n), default=-1)
                keep |= set(range(previous + 1, n))
        sentences = [s for n, s in enumerate(sentences) if n in keep]
    kept: list[str] = []
    seen: set[str] = set()
    for word in _WORD.findall(" ".join(sentences)):
        folded = text_normalise(word)
        if not folded or folded in seen or word.lower() in stop or folded in stop or folded in _FILLER:
            continue
        if " " in folded and all(part in stop or part in _FILLER or len(part) < 2 for part in folded.split()):
            continue  # "zo'n" is "zo n"
        if len(folded) < 3 and not any(ch.isdigit() for ch in folded):
            continue  # "5q" (5q minus syndrome), "b12" stay
        seen.add(folded)
        kept.append(word)
    reduced = " ".join(kept)
    return reduced if reduced and len(kept) < words else ""


# Words that say the person a message is about is a child, in the region's languages: children,
# babies, toddlers, teenagers, the diminutives Dutch speakers use for a young son or daughter,
# and the children's doctor; Dutch "kind", but not the English "what kind of", "kind regards".
# Set by hand, 2026-12-07.
_CHILD_WORDS = re.compile(
    r"\b(child|children|childs?|kids?|baby|babies|infants?|toddlers?|newborns?|preschoolers?|teenage|"
    r"pediatrician|paediatrician|kinderen|kindje|kindjes|kindeke|kindeken|kinders|"
    r"zoontje|dochtertje|petekind|petekindje|kleinkind|kleinkindje|neefje|nichtje|"
    r"jongetje|meisje|baby['’]?tje|babytje|baby['’]?s|peuter|peutertje|kleuter|kleutertje|zuigeling|"
    r"pasgeborene|kinderarts|pediater|enfant|enfants|bébé|bebe|nourrisson)\b"
    r"|(?<!what )(?<!which )(?<!this )(?<!that )(?<!any )(?<!some )(?<!every )(?<!same )(?<!\ba )(?<!be )"
    r"\bkind\b(?!\s+(?:of|regards|regard))",
    re.IGNORECASE,
)
# Relatives who may be children or adults ("my son", "onze dochter"): a child only when an age
# under 18 is said too.
_RELATIVE_WORDS = re.compile(
    r"\b(son|daughter|grandson|granddaughter|nephew|niece|boy|girl|teen|teenager|zoon|dochter|"
    r"kleinzoon|kleindochter|jongen|tiener|puber|fils|fille)\b",
    re.IGNORECASE,
)
# Ages as patients write them, read around each number of one or two digits: a unit of years
# ("4 jaar", "9 years old", "10 yo", "12-jarige") or of months and weeks ("van 18 maanden", "20
# months old": an infant), or a word that says an age ("my son (9)", "onze dochter van 6", "he
# is 58", "she is now 41"); not a duration or a rate ("sinds 2 jaar", "al 10 jaar", "3 years
# ago", "5-year survival"), not the writer's own age ("ik ben 38 jaar", "I'm 40"), not a
# measure ("van 5 cm", "3x per week", "type 2", "stadium 3").
_NUMBER = re.compile(r"(?<![\d.,/])\b(\d{1,2})\b(?![.,/]\d)")
_YEARS_AFTER = re.compile(r"\s*-?\s*(?:jaar|jarige|jr|years?|yrs?|yo|y/o|year-old|ans)\b", re.IGNORECASE)
_MONTHS_AFTER = re.compile(
    r"\s*-?\s*(?:maanden|maand|months?|month-old|weken|weeks?|week-old|mois|semaines)\b", re.IGNORECASE
)
_AGE_BEFORE = re.compile(
    r"(?:\(\s*|\b(?:van|is|aged?|only|pas|amper|nog maar|was|turned|wordt|werd)\s+(?:now\s+|nu\s+)?)$", re.IGNORECASE
)
_DURATION_BEFORE = re.compile(
    r"\b(?:sinds|since|for|al|na|after|over|binnen|within|in|per|elke|every|om de|voor|ago)\s+$", re.IGNORECASE
)
_DURATION_AFTER = re.compile(
    r"\s*-?\s*(?:jaar|years?|year|maanden|months?|weken|weeks?)?\s*(?:geleden|ago|survival|overleving)", re.IGNORECASE
)
_OLD_AFTER = re.compile(r"\s*-?\s*\w+\s+(?:oud|old)\b", re.IGNORECASE)  # "18 maanden oud"
_MEASURE_AFTER = re.compile(r"\s*(?:%|x\b|keer|times|uur|u\b|hours?|kg|g\b|cm|mm|mg|ml|l\b|dagen|days?)", re.IGNORECASE)
_WRITER_BEFORE = re.compile(r"\b(?:ik ben|i am|i['’]m|im|je suis|j['’]ai)\s+(?:\w+\s+)?$", re.IGNORECASE)
CHILD_MAX_AGE = 17


def message_ages(message: str) -> list[tuple[float, bool]]:
    """The ages ``message`` says of the person it is about, as ``(years, with_unit)`` in order:
    ``years`` 0.0 for an age in months or weeks; ``with_unit``: said with a unit of time ("4
    jaar", "18 maanden"), not only by a word that says an age ("van 6", "(9)", "is 58"). The
    rules are in the comment above (:data:`_NUMBER`). Never raises."""
    ages: list[tuple[float, bool]] = []
    for match in _NUMBER.finditer(message):
        before, after = message[max(0, match.start() - 30) : match.start()], message[match.end() : match.end() + 30]
        if _DURATION_BEFORE.search(before) or _DURATION_AFTER.match(after) or _WRITER_BEFORE.search(before):
            continue
        said = _AGE_BEFORE.search(before) is not None
        if _MONTHS_AFTER.match(after):
            if said or _OLD_AFTER.match(after):
                ages.append((0.0, True))
        elif _YEARS_AFTER.match(after):
            ages.append((float(match.group(1)), True))
        elif said and not _MEASURE_AFTER.match(after):
            ages.append((float(match.group(1)), False))
    return ages


# Words that say the person a message is about is an adult: adults, partners, parents,
# grandparents and colleagues, in the region's languages. Set by hand, 2026-12-07.
_ADULT_WORDS = re.compile(
    r"\b(adults?|grown-ups?|volwassenen?|adultes?|husband|wife|partner|dad|father|mum|mom|mother|"
    r"grandfather|grandmother|grandpa|grandma|colleague|coworker|man|vrouw|echtgenoot|echtgenote|vader|"
    r"moeder|papa|mama|opa|oma|schoonvader|schoonmoeder|collega|mari|femme|père|mère|grand-père|grand-mère|"
    r"collègue)\b",
    re.IGNORECASE,
)


def age_group(message: str) -> str:
    """Whom ``message`` is about, read once (:func:`message_ages` reads its ages): "child" when
    it says no age above :data:`CHILD_MAX_AGE` ("mijn kind van 34", "he is 58. Our children are
    12 and 14") and either names a child (:data:`_CHILD_WORDS`: "ons zoontje", "my kid", "de
    kinderarts"), or says an age with a unit of at most :data:`CHILD_MAX_AGE` ("my nephew is 3
    years old", "(4 jaar)", "van 18 maanden"), or names a relative who may be either
    (:data:`_RELATIVE_WORDS`: "my son (9)", "onze dochter van 6") with such an age; else
    "adult" when it says an age above :data:`CHILD_MAX_AGE` ("he is 58", "mijn zoon van 35
    jaar") or names adults, a partner, parent, grandparent or colleague (:data:`_ADULT_WORDS`:
    "bij volwassenen", "my husband", "mijn vader"); else "". Never raises."""
    ages = message_ages(message)
    adult_age = any(age > CHILD_MAX_AGE for age, _ in ages)
    if not adult_age and (
        _CHILD_WORDS.search(message) or any(unit for _, unit in ages) or (ages and _RELATIVE_WORDS.search(message))
    ):
        return "child"
    return "adult" if adult_age or _ADULT_WORDS.search(message) else ""


def routing_share(intent: str, probabilities: dict[str, float] | None, routing_intents: tuple[str, ...]) -> float:
    """How much a question wants the hospital's own pages rather than general medical text, in
    [0, 1]: the classifier's probability mass on ``routing_intents`` (the config's
    ``source_authority_intents``: practical information, complaints, departments, doctors,
    the hospital in general) when ``probabilities`` (intent → probability) are given, else 1.0
    or 0.0 by whether ``intent`` (the graph's, or the classifier's argmax) is one of them."""
    if probabilities:
        return float(min(max(sum(p for i, p in probabilities.items() if i in routing_intents), 0.0), 1.0))
    return 1.0 if intent in routing_intents else 0.0


@dataclass(frozen=True)
class LabelledQuery:
    """One labelled message: its intent, MedQuAD question type, hand-written reduction, and focus
    (``focus``, and ``focus_kind``: condition, drug, procedure, department, doctor, practical or
    none)."""

    text: str
    language: str
    intent: str
    qtype: str
    reduced: str
    focus: str = ""
    focus_kind: str = ""


def labelled_queries() -> list[LabelledQuery]:
    """The labelled understanding set (``data/understanding/labelled.jsonl``), in file order.
    Raises ``FileNotFoundError`` when it is missing and ``ValueError`` for a line that is not a
    JSON object, an unknown qtype or an unknown intent (the input guard and the red-flag model
    learn from the intents too: a misspelled one would teach the guard to allow advice)."""
    path = Path(settings.BASE_DIR) / "data" / LABELLED_FILE
    rows = []
    for number, row in jsonl_objects(path):
        if row["qtype"] not in QTYPES:
            raise ValueError(f"{path}:{number}: unknown qtype {row['qtype']!r}")
        if row["intent"] not in Intent.values:
            raise ValueError(f"{path}:{number}: unknown intent {row['intent']!r}")
        rows.append(
            LabelledQuery(
                text=str(row["text"]),
                language=str(row["language"]),
                intent=str(row["intent"]),
                qtype=str(row["qtype"]),
                reduced=str(row["reduced"]),
                focus=str(row.get("focus", "")),
                focus_kind=str(row.get("focus_kind", "")),
            )
        )
    return rows


def _qtype_extra() -> list[tuple[str, str]]:
    """(question, MedQuAD qtype) pairs of the dev golden questions (the extra type examples)."""
    pairs = []
    for relative in QTYPE_EXTRA_FILES:
        for line in (Path(settings.BASE_DIR) / "data" / relative).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row.get("category") in QTYPES:
                    pairs.append((row["question"], row["category"]))
    return pairs


class UnderstandingModel:
    """The intent and question-type classifiers; ``fit`` on labelled rows and extra type pairs."""

    def __init__(self) -> None:
        self.intent = GuardClassifier(normalise=text_normalise)
        self.qtype = GuardClassifier(normalise=text_normalise)

    def fit(
        self, rows: list[LabelledQuery], extra_qtypes: list[tuple[str, str]], provider: EmbeddingProvider
    ) -> UnderstandingModel:
        texts = [r.text for r in rows]
        vectors = provider.embed_queries(texts)
        self.intent.fit(texts, vectors, [r.intent for r in rows])
        extra_texts = [t for t, _ in extra_qtypes]
        extra_vectors = provider.embed_queries(extra_texts) if extra_texts else np.zeros((0, vectors.shape[1]))
        self.qtype.fit(
            texts + extra_texts,
            np.vstack([vectors, extra_vectors]),
            [r.qtype for r in rows] + [q for _, q in extra_qtypes],
        )
        return self

    def asked(self, *, message: str, provider: EmbeddingProvider) -> Understanding | None:
        """Intent and question type of the message's question sentence alone
        (:func:`zolsearch.search.focus.question_sentence`, embedded with ``provider``, the one the
        model was fitted with; no reduced query: the message's is the one searched); None when
        the message has none beside other sentences (one sentence, or no question). Raises
        ``EmbeddingUnavailable`` when the sentence cannot be embedded."""
        sentence = question_sentence(message)
        if not sentence:
            return None
        return self._classified(sentence, provider.embed_query(sentence), reduced="")

    def understand(self, *, text: str, vector: np.ndarray, language: str) -> Understanding:
        """Intent, question type and reduced query of one question (``vector``: its ``(d,)``
        query vector of the provider the model was fitted with)."""
        return self._classified(text, vector, reduced=query_reduce(text, language=language))

    def _classified(self, text: str, vector: np.ndarray, *, reduced: str) -> Understanding:
        matrix = vector.reshape(1, -1)
        intents = self.intent.predict_proba_many([text], matrix)[0]
        intent = max(intents, key=lambda label: intents[label])
        qtype, qtype_p = self.qtype.predict_best([text], matrix)[0]
        return Understanding(
            intent=intent,
            intent_confidence=intents[intent],
            intent_probabilities=intents,
            qtype=qtype,
            qtype_confidence=qtype_p,
            reduced=reduced,
        )


def understanding_as_asked(
    understood: Understanding, asked: Understanding | None, *, intent: bool, qtype: bool
) -> Understanding:
    """``understood`` (the whole message's) with its intent (``intent``) and its question type
    (``qtype``) each taken from ``asked`` (its question sentence's, :meth:`UnderstandingModel.asked`)
    where the classifier is at least as sure of the sentence's as of the message's; the reduced
    query stays the message's. Why: the question is asked in that sentence, and a consumer's
    story pulls the whole message elsewhere ("waardoor krijg je de ziekte van von willebrand? ik
    bloed heel lang na een tandarts" read as symptoms); measured in docs/EVALUATION.md, "The
    question type and intent from the question sentence". ``understood`` unchanged when
    ``asked`` is None."""
    if asked is None:
        return understood
    if intent and asked.intent_confidence >= understood.intent_confidence:
        understood = replace(
            understood,
            intent=asked.intent,
            intent_confidence=asked.intent_confidence,
            intent_probabilities=dict(asked.intent_probabilities),
        )
    if qtype and asked.qtype_confidence >= understood.qtype_confidence:
        understood = replace(understood, qtype=asked.qtype, qtype_confidence=asked.qtype_confidence)
    return understood


# Dutch phrasings that ask one MedQuAD question type whatever story surrounds them, read in the
# question sentences of a message (a story's "bij mij is X vastgesteld" asks nothing), each with
# its question word ("hoe … vastgesteld", not "bij mij is diabetes vastgesteld, wat mag ik eten?";
# "waardoor krijg je", not "… waardoor ik niet kan werken"; "wat kan je doen tegen", not "ik kan
# niet tegen gluten"): "waardoor krijg je …", "wat is de oorzaak van …", "waar komt … van"
# (causes); "hoe wordt … vastgesteld", "hoe stellen ze … vast", "hoe weten ze of …" (exams and
# tests); "wat kan je doen tegen …", "wat helpt er tegen …" (treatment); "info(rmatie) over …" (information, MedlinePlus's "Do you
# have information about …"). Written by hand on 2026-12-07 from the Dutch noisy dev messages'
# question-type errors; over the 792 Dutch dev questions with a question type (golden sets
# tagged dev), these and the "wat is …" cue below read 259 and each the right type (44 causes,
# 40 exams and tests, 4 treatment, 171 information; docs/EVALUATION.md, "The question
# sentence's focus, acronyms, broken phrases and question-type cues").
QTYPE_CUES_NL: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "causes",
        re.compile(
            r"\bwaardoor (?:krijg|krijgt|krijgen|ontstaat|ontstaan|komt|komen|wordt|worden|heb|heeft|hebben)\b"
            r"|\boorza(?:a|k)\w*|\bhoe (?:krijg|krijgt|krijgen) (?:je|een|men|iemand)\b"
            r"|\bwaar\b[^?.]*\b(?:door|van|vandaan) (?:komen|komt)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "exams and tests",
        re.compile(
            r"\bhoe\b[^?.]*\bvastgesteld\b|\bhoe\b[^?.]*\bstellen\b[^?.]*\bvast\b|\bhoe weten ze\b"
            r"|\bhoe (?:stel|stelt) (?:je|men)\b"
            r"|\bvast te stellen\b|\bopgespoord\b|\bop te sporen\b",
            re.IGNORECASE,
        ),
    ),
    (
        "treatment",
        re.compile(r"\bwat\b[^?.]*\b(?:kan|kun|kunt|doe|doet|helpt|helpen)\b[^?.]*\btegen\b", re.IGNORECASE),
    ),
    ("information", re.compile(r"\b(?:info|informatie) (?:over|rond|omtrent)\b", re.IGNORECASE)),
)


# The confidence of a type read by a cue: Laplace's rule of succession over the cues' record on
# the Dutch dev questions, 259 read and 259 right: (259 + 1) / (259 + 2) = 0.996, rounded down
# to 0.99 because the "wat is …" cue's exclusions were written on the same questions
# (2026-12-07); above ``medical_translation_qtype_min``, so a question whose type
# a cue reads is also searched in English.
QTYPE_CUE_CONFIDENCE = 0.99


# "wat is …", "wat zijn …", "wat betekent …" opening a question sentence (after one word at most:
# "Dag, wat is …", "spierziektes, wat zijn dat?") asks for information about what it names, unless the sentence
# names another type's subject ("wat zijn de symptomen", "wat is de kans", "wat kan je doen"):
# those words, in QTYPE_INFORMATION_EXCLUDED, leave the type to the other cues or the classifier.
# Written by hand on 2026-12-07; on the Dutch dev questions the opening read 155, 152 of them
# information, and the three others ("wat zijn de eerste tekenen", "wat zijn de tekenen", "de
# symtomen") are excluded.
QTYPE_INFORMATION_CUE = re.compile(r"^\W*(?:\w+[,!]?\s+)?wat (?:is|zijn|betekent)\b", re.IGNORECASE)
QTYPE_INFORMATION_EXCLUDED = re.compile(
    r"behandel|oorza|sym?p?tom|klachten|tekenen|signalen|verschijnselen|erfelijk|risico|vooruitzicht|prognose"
    r"|onderzoek|test|diagnose|stadi|voorkom|hoeveel|complicat|\bgen\b|genen|levensverwachting|verschil|kans"
    r"|helpt|doen|vastgesteld|waardoor|gevolg|steungroep|vereniging|lotgenot",
    re.IGNORECASE,
)


def qtype_cue(message: str, language: str) -> str:
    """The MedQuAD question type a Dutch ``message``'s question sentences ask by one of
    :data:`QTYPE_CUES_NL`, or "information" by :data:`QTYPE_INFORMATION_CUE` (a one-sentence
    message is its own question sentence; a message of several sentences without a question
    mark has none), "" when no cue or cues of more than one type match, and for other languages
    (the English classifier has MedQuAD's own questions to learn from). Never raises."""
    if language != "nl":
        return ""
    asked = question_sentences(message) or ([message] if len(message_sentences(message)) < 2 else [])
    found = {qtype for qtype, cue in QTYPE_CUES_NL for sentence in asked if cue.search(sentence)}
    if any(QTYPE_INFORMATION_CUE.search(s) and not QTYPE_INFORMATION_EXCLUDED.search(s) for s in asked):
        found.add("information")
    return found.pop() if len(found) == 1 else ""


_train_lock = threading.Lock()


@lru_cache(maxsize=4)
def _model_for(model_key: str, provider: EmbeddingProvider) -> UnderstandingModel:
    rows = labelled_queries()
    model = UnderstandingModel().fit(rows, _qtype_extra(), provider)
    logger.info("query understanding trained on %d labelled queries for %s", len(rows), model_key)
    return model


def understanding_model_get(provider: EmbeddingProvider) -> UnderstandingModel:
    """The offline understanding model for ``provider``'s vectors, trained once per process
    (about a second) and cached; thread-safe."""
    with _train_lock:
        return _model_for(provider.key, provider)
