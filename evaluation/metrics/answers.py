"""Answer metrics: entity recall and refusal detection.

Entity recall asks whether the answer names what a good answer must name (a golden question's
``expected_entities``), with the other names the source gives (``synonyms``). Matching is on
whole words of :func:`core.text.text_normalise` text (lower case, accents folded, every run
of punctuation → one space): ``"Hart-falen"`` matches ``"hart falen"`` but not ``"hartfalen"``
(compounds are not split). Inflections (``kidney stone`` / ``kidney stones``, ``niersteen`` /
``nierstenen``) match through a Snowball stem fallback (Porter 2001, "Snowball: A language for
stemming algorithms"; the ``snowballstemmer`` package), tried with the English and with the
Dutch stemmer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from core.text import text_normalise, words_stem
from evaluation.metrics.retrieval import RELEVANT_GRADE, url_grade
from zolsearch.search.contract import EXPLICIT_REFUSALS, FALLBACKS, Outcome

ANSWERED_OUTCOME = Outcome.ANSWERED.value
# Explicit refusals (issue 9): a guard's refusal or a red-flag route. A gate rejection or "no
# results" is a fallback (an honest "I don't know"), counted separately, never as a refusal.
REFUSAL_OUTCOMES = frozenset(o.value for o in EXPLICIT_REFUSALS)
FALLBACK_OUTCOMES = frozenset(o.value for o in FALLBACKS)
STEM_LANGUAGES = ("en", "nl")  # Snowball English and Dutch

_NO_SYNONYMS: Mapping[str, Sequence[str]] = MappingProxyType({})


def _padded(words: Sequence[str]) -> str:
    """Words joined with single spaces and padded, so ``" a b " in padded`` is a whole-word test."""
    return f" {' '.join(words)} "


def entity_recall(
    *, answer: str, expected: Sequence[str], synonyms: Mapping[str, Sequence[str]] = _NO_SYNONYMS
) -> tuple[float | None, list[str]]:
    """Share of the expected entities the answer mentions, in [0, 1], and which ones.

    ``expected``: entity names; duplicates by normalised text count once, and a name that
    normalises to nothing (``"—"``) is not an entity and is skipped. ``synonyms``: entity → other
    names (keys are matched by normalised text, so ``"Asthma"`` finds the key ``"asthma"``; a
    plain string value is one synonym). An entity is mentioned when, for its name or any synonym,

    1. the normalised name occurs in the normalised answer as whole words, or
    2. the sequence of its Snowball stems occurs, as whole words, in the answer's stems, with the
       English or with the Dutch stemmer (the same stemmer on both sides). This over-matches
       where unrelated words share a stem: the English stemmer reduces both ``AIDS`` and
       ``aid`` to ``aid``. That is the price of matching plurals and inflections.

    Returns ``(recall, matched)``: ``matched`` holds the expected names as given, in expected
    order. ``(None, [])`` when there is no expected entity (recall undefined, not zero); an
    empty answer gives ``(0.0, [])``.
    """
    entities: dict[str, str] = {}
    for name in expected:
        normalised = text_normalise(name)
        if normalised:
            entities.setdefault(normalised, name)
    if not entities:
        return None, []

    synonyms_by_key: dict[str, list[str]] = {}
    for key, values in synonyms.items():
        names = [values] if isinstance(values, str) else list(values)
        synonyms_by_key.setdefault(text_normalise(key), []).extend(names)

    answer_words = text_normalise(answer).split()
    answer_text = _padded(answer_words)
    answer_stems = {lang: _padded(words_stem(answer_words, language=lang)) for lang in STEM_LANGUAGES}

    def mentioned(name: str) -> bool:
        words = text_normalise(name).split()
        if not words:
            return False
        if _padded(words) in answer_text:
            return True
        return any(_padded(words_stem(words, language=lang)) in answer_stems[lang] for lang in STEM_LANGUAGES)

    matched = [
        name
        for normalised, name in entities.items()
        if any(mentioned(candidate) for candidate in [normalised, *synonyms_by_key.get(normalised, [])])
    ]
    return len(matched) / len(entities), matched


def answer_refused(*, outcome: str) -> bool:
    """Whether a served answer is an explicit refusal: outcome ``refused`` (a guard) or
    ``red_flag`` (routed to a phone number), :data:`REFUSAL_OUTCOMES`."""
    return outcome in REFUSAL_OUTCOMES


def answer_fallback(*, outcome: str) -> bool:
    """Whether a served answer is a fallback rather than an answer or a refusal: ``gate_rejected``,
    ``no_results`` (:data:`FALLBACK_OUTCOMES`), or an outcome this code does not know."""
    return outcome in FALLBACK_OUTCOMES or (outcome != ANSWERED_OUTCOME and outcome not in REFUSAL_OUTCOMES)


def answer_cites_expected(*, outcome: str, cited_urls: Sequence[str], expected_urls: Sequence[str]) -> bool | None:
    """Whether an answered question's answer cites one of its expected pages: a cited url of
    grade ≥ :data:`evaluation.metrics.retrieval.RELEVANT_GRADE` (the project's URL-prefix
    grades, :func:`evaluation.metrics.retrieval.url_grade`; a taxonomy fact's url counts like a
    page's). ``None`` (undefined) when the question was not answered (outcome other than
    ``answered``) or has no expected pages. A measure of wrong answers that does not trust the
    judge: the local judge passes an answer from another page whose words sit near the question
    (docs/EVALUATION.md, "Cross-lingual term agreement"). Judgements are not exhaustive, so an
    answer from an unjudged page may still be right: compare runs on the same set, not sets.
    Only answered questions count, so a configuration that answers fewer can raise the share:
    read it beside the fallback rate and its ``n``."""
    if outcome != ANSWERED_OUTCOME or not expected_urls:
        return None
    return any(url_grade(url, expected_urls) >= RELEVANT_GRADE for url in cited_urls if url)


RED_FLAG_TAG = "red_flag:"


def red_flag_correct(*, tags: Sequence[str], answer: object | None) -> bool | None:
    """Whether the red-flag expectation in a golden question's ``tags`` (``red_flag:<category>``
    or ``red_flag:none``) was met by the stored ``answer`` (its ``red_flag_category``, blank
    when not routed). ``None`` when the question states no expectation or has no answer."""
    expected = next((t.removeprefix(RED_FLAG_TAG) for t in tags if t.startswith(RED_FLAG_TAG)), None)
    if expected is None or answer is None:
        return None
    routed = getattr(answer, "red_flag_category", "") or "none"
    return routed == expected
