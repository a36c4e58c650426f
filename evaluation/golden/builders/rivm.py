"""Golden set builder: rivm (see the package docstring for sources and licences)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import snowballstemmer

from core.text import text_normalise
from evaluation.golden.io import GoldenItem
from ingestion.connectors.base import DocumentRecord
from ingestion.connectors.rivm import RIVMConnector

# --- RIVM ---------------------------------------------------------------------------------------

# Dutch function words, frequent verbs and the FAQ's own topic words: never "salient".
RIVM_STOPWORDS = frozenset(
    """aan alle alles als andere anderen betekent blijven dan deze die dit doen door dus een eerst
    elkaar gaan gaat gehad geen goed heb hebben heeft heel het hoe houden hun iedereen iemand jij
    kan keer keren krijgen komt kun kunnen kunt maar maken meer minstens mogelijk mag mijn moet moeten mogen naar niet nog omdat
    ons onze ook over steeds tegen veel voor waar waarom wanneer wat weten welke wie wij wordt
    worden zich zijn zodat zonder zou zouden nieuwe nieuw coronavirus covid virus nederland
    rivm""".split()
)
RIVM_MIN_WORD = 4
RIVM_FALLBACK_MIN_WORD = 6
# A term in more than this share of all answers is too common to be salient.
RIVM_MAX_ANSWER_SHARE = 0.2
RIVM_MAX_ENTITIES = 2
_DUTCH_STEMMER = snowballstemmer.stemmer("dutch")


def _rivm_words(text: str) -> dict[str, str]:
    """Normalised word → its first spelling in ``text`` (lower case, accents kept)."""
    words: dict[str, str] = {}
    for token in re.findall(r"\w+", text.lower()):
        for word in text_normalise(token).split():
            words.setdefault(word, token)
    return words


def _rivm_prefix_related(a: str, b: str) -> bool:
    """One word starts with the other, both at least :data:`RIVM_FALLBACK_MIN_WORD` letters
    (``vaccinatie`` / ``vaccin``): Dutch derivations and compounds the stemmer leaves apart."""
    shorter, longer = sorted((a, b), key=len)
    return len(shorter) >= RIVM_FALLBACK_MIN_WORD and longer.startswith(shorter)


def rivm_salient_terms(*, question: str, answer: str, answer_frequency: dict[str, int], answers: int) -> list[str]:
    """One or two salient terms of a FAQ item that occur, as whole words, in its ``answer``.

    Deterministic rule (documented in ``data/golden/README.md``):

    1. Content words of ``question``: words of :func:`core.text.text_normalise` text with at
       least :data:`RIVM_MIN_WORD` letters, not in :data:`RIVM_STOPWORDS`.
    2. Candidates: the answer's words equal to a content word, else with the same Dutch
       Snowball stem (``mondkapje`` finds ``mondkapjes``), else (content words of at least
       :data:`RIVM_FALLBACK_MIN_WORD` letters) starting with it or being its start, also at
       least that long (``vaccinatie`` finds ``vaccin``); spelled as in the answer.
    3. A candidate is *rare* when at most :data:`RIVM_MAX_ANSWER_SHARE` of all answers contain it
       (``answer_frequency``: normalised word → number of answers; ``answers``: their count).
       Order: rare first, then longest, then earliest in the question. Keep up to
       :data:`RIVM_MAX_ENTITIES` rare candidates, or the single best one when none is rare.
    4. No candidate at all: the answer's own longest, then rarest, non-stopword of at least
       :data:`RIVM_FALLBACK_MIN_WORD` letters (first occurrence breaks ties).

    Returns lower-case terms; empty only for an answer without any such word.
    """
    return _rivm_terms(question=question, answer=answer, answer_frequency=answer_frequency, answers=answers)[0]


def _rivm_terms(
    *, question: str, answer: str, answer_frequency: dict[str, int], answers: int
) -> tuple[list[str], bool]:
    """:func:`rivm_salient_terms` and whether step 4 (the answer-only fallback) chose them."""
    answer_words = _rivm_words(answer)
    answer_stems: dict[str, str] = {}
    for word in answer_words:
        answer_stems.setdefault(_DUTCH_STEMMER.stemWord(word), word)
    candidates: dict[str, int] = {}
    for position, word in enumerate(text_normalise(question).split()):
        if len(word) < RIVM_MIN_WORD or not word.isalpha() or word in RIVM_STOPWORDS:
            continue
        found = word if word in answer_words else answer_stems.get(_DUTCH_STEMMER.stemWord(word))
        if not found and len(word) >= RIVM_FALLBACK_MIN_WORD:
            found = next((w for w in answer_words if _rivm_prefix_related(word, w)), None)
        if found and found not in RIVM_STOPWORDS:
            candidates.setdefault(found, position)

    def common(word: str) -> bool:
        return answer_frequency.get(word, 0) > RIVM_MAX_ANSWER_SHARE * answers

    ranked = sorted(candidates, key=lambda w: (common(w), -len(w), candidates[w]))
    rare = [w for w in ranked if not common(w)]
    chosen = rare[:RIVM_MAX_ENTITIES] or ranked[:1]
    if chosen:
        return [answer_words[w] for w in chosen], False
    order = list(answer_words)
    fallback = [w for w in order if len(w) >= RIVM_FALLBACK_MIN_WORD and w.isalpha() and w not in RIVM_STOPWORDS]
    chosen = sorted(fallback, key=lambda w: (-len(w), answer_frequency.get(w, 0), order.index(w)))[:1]
    return [answer_words[w] for w in chosen], True


def rivm_golden(*, path: Path) -> list[GoldenItem]:
    """Golden questions from the RIVM COVID-19 FAQ workbook (Dutch, 2020).

    Source: RIVM ``Corona_FAQ.xlsx``, public information of the RIVM (the repository that
    published the file gives no licence). Read with the ingestion
    :class:`~ingestion.connectors.rivm.RIVMConnector` (openpyxl), so each distinct question
    (rows with the same ``Context`` form one document) yields one item: ``qid`` and
    ``expected_urls`` are the document's ``external_id`` and url (``rivm:<sha1[:12]>``, the RIVM
    page with that anchor), language ``nl``, category ``covid_faq``, ``expected_entities`` from
    :func:`rivm_salient_terms`, notes naming the sheet rows. Questions without an answer are
    skipped. Raises the connector's ``ConnectorError`` for a missing or unreadable workbook.
    """
    connector = RIVMConnector()
    records = [r for unit in connector.units(path) for r in connector.records(unit) if isinstance(r, DocumentRecord)]
    answers = {r.external_id: " ".join(s.text for s in r.sections) for r in records}
    frequency: Counter[str] = Counter()
    for text in answers.values():
        frequency.update(set(text_normalise(text).split()))
    items = []
    for record in records:
        terms, fallback = _rivm_terms(
            question=record.title,
            answer=answers[record.external_id],
            answer_frequency=dict(frequency),
            answers=len(records),
        )
        rows = ", ".join(str(r) for r in record.metadata.get("rows", []))
        items.append(
            GoldenItem(
                qid=record.external_id,
                question=record.title,
                language="nl",
                category="covid_faq",
                expected_entities=tuple(terms),
                expected_urls=(record.url,),
                tags=("rivm",),
                notes=f"RIVM Corona FAQ, sheet rows {rows}."
                + (" Expected entity from the answer alone (no question word occurs in it)." if fallback else ""),
            )
        )
    return items
