"""The fast quality gate (design brief, pipeline step 9).

``score = w · cos(answer, context) + (1 − w) · cos(question, answer)``: an answer must stay close
to the context it claims to come from (context alignment, weight w) and to the question
(semantic similarity, weight 1 − w). The seed's weight w = 0.7 comes from the anchor system's
gate and is the default; calibration chooses w per embedding model and language with the
threshold (:mod:`evaluation.services.calibration`: the weight of :data:`CONTEXT_WEIGHTS` whose
threshold refuses the most off-topic drafts within the cap on refused good answers).
Thresholds are per embedding model because cosine scales differ between models (e5 cosines
cluster in 0.7–0.9).

**Focus agreement** (:func:`subject_disagrees`, flag ``gate_focus_check``): a draft is also
refused when the question names a condition (its linked focus), a page about that condition is
among the candidates, and the pages the draft cites are about another condition (MedQuAD's focus
annotations), or about the same one but not the question type asked while a candidate answers
it: the wrong-disease answer ("Is Aicardi syndrome inherited?" answered from the
Aicardi-Goutières syndrome page) and the wrong-question answer that cosines cannot tell from a
right one.

**Site agreement** (:func:`site_disagrees`, flag ``gate_site_check``): a draft is also refused
when the question names a hospital (its web address, :class:`zolsearch.search.sites.SiteMatcher`),
a page of that hospital is among the candidates, and every page the draft cites is another
hospital's own page: "hoeveel kost een eenpersoonskamer in uz leuven" answered with another
hospital's room prices.

**Term agreement** (:func:`terms_disagree`, flag ``gate_term_check``): a draft is also refused
when it is written in the question's language and shares no content word (Snowball stem; stop
words and the generic words of :data:`_GENERIC_WORDS` left out) with the question: "wanneer
krijg ik de faktuur van het ziekenhuis" answered with an emergency page's ambulance paragraph.
The words the question's spelling was corrected to count as its own ("faktuur" → "factuur").
With ``gate_term_check_across`` a draft from pages in another language (a Dutch question
answered from English MedQuAD pages) is refused when it shares no stem, nor a cognate's first
six letters, with the question's words or the words understanding also searched for it: "mag ik
bij mijn vrouw blijven slapen na de bevalling" answered from a narcolepsy page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from core.text import BM25_STOPWORDS, STOPWORDS, terms_stem_set, text_normalise, words_stem
from zolsearch.search.focus import document_foci
from zolsearch.search.sites import site_labels
from zolsearch.search.spelling import corrected_words

CONTEXT_WEIGHT = 0.7  # the seed's weight of the context alignment
QUESTION_WEIGHT = 0.3  # 1 − CONTEXT_WEIGHT
# Context weights calibration may choose from: 0.1-0.7. Never 0: a draft that strays from its
# context (an LLM's invention) must still cost score.
CONTEXT_WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


@dataclass(frozen=True)
class GateResult:
    """Gate outcome; cosines and score in [-1, 1]; ``context_weight`` in [0, 1] (w above);
    ``focus_mismatch``: refused by the focus agreement (:func:`subject_disagrees`) whatever the
    score; ``site_mismatch``: refused by the site agreement (:func:`site_disagrees`);
    ``term_mismatch``: refused by the term agreement (:func:`terms_disagree`)."""

    score: float
    context_alignment: float
    semantic_similarity: float
    threshold: float
    passed: bool
    context_weight: float = CONTEXT_WEIGHT
    focus_mismatch: bool = False
    site_mismatch: bool = False
    term_mismatch: bool = False

    def as_dict(self) -> dict[str, float | bool]:
        return asdict(self)


def gate_score(
    *,
    answer: np.ndarray,
    context: np.ndarray,
    question: np.ndarray,
    threshold: float,
    context_weight: float = CONTEXT_WEIGHT,
) -> GateResult:
    """Score an answer. Inputs are 1-D float vectors of one model (normalised here);
    ``context_weight`` w in [0, 1].

    Raises ``ValueError`` when the shapes differ (vectors of different models) or w is outside
    [0, 1].
    """
    if not (answer.shape == context.shape == question.shape):
        raise ValueError(f"gate vectors differ in shape: {answer.shape}, {context.shape}, {question.shape}")
    if not 0.0 <= context_weight <= 1.0:
        raise ValueError(f"gate context weight must be in [0, 1], not {context_weight}")

    def unit(v: np.ndarray) -> np.ndarray:
        norm = float(np.linalg.norm(v))
        return v / norm if norm else v

    a, c, q = unit(answer.astype(np.float64)), unit(context.astype(np.float64)), unit(question.astype(np.float64))
    alignment = float(np.clip(a @ c, -1.0, 1.0))
    similarity = float(np.clip(q @ a, -1.0, 1.0))
    score = context_weight * alignment + (1.0 - context_weight) * similarity
    return GateResult(
        score=round(score, 6),
        context_alignment=round(alignment, 6),
        semantic_similarity=round(similarity, 6),
        threshold=threshold,
        passed=score >= threshold,
        context_weight=context_weight,
    )


class Subject(NamedTuple):
    """What a page is about: its normalised MedQuAD foci (:func:`zolsearch.search.focus.document_foci`;
    empty for pages without, such as the hospital's own), its MedQuAD question type
    (``metadata["qtype"]``; "" none) and, for a hospital's own page, its hospital: the
    :func:`zolsearch.search.sites.site_labels` of its web address (``()`` for other pages). Not
    the hospital's name (:func:`zolsearch.search.sites.page_labels`, which the reranker reads):
    a name often holds its town ("UZA (Universitair Ziekenhuis Antwerpen)"), and a question
    that names the town ("an interpreter at a hospital in Antwerp") does not name that one
    hospital among the town's several; a refusal needs the address (measured: the name made
    the gate refuse a right answer to that question)."""

    foci: frozenset[str]
    qtype: str = ""
    site: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        metadata: dict[str, object],
        *,
        url: str = "",
        own: bool = False,
        title_variants: bool = True,
        equivalents: Mapping[str, str] | None = None,
    ) -> Subject:
        """The subject of a page with this document ``metadata`` (its MedQuAD ``focus``,
        ``synonyms`` and ``qtype``); ``url``: the page's web address, read when ``own`` (its
        source has a priority: a hospital's own page; general medical sites' host names are
        English words that questions use, "cancer", "rarediseases"); ``title_variants``: the
        page is about the names its focus title holds too (the pipeline flag
        ``foci_title_variants``, :func:`zolsearch.search.focus.document_foci`); ``equivalents``:
        the index's :func:`zolsearch.search.focus.focus_equivalents` when the page is also about
        the focus another site names the same condition by (the flag ``foci_equivalents``; None:
        not)."""
        return cls(
            foci=document_foci(metadata, title_variants=title_variants, equivalents=equivalents),
            qtype=str(metadata.get("qtype") or ""),
            site=site_labels(url) if own and url else (),
        )


def subject_disagrees(focus: str, qtype: str, *, candidates: Sequence[Subject], cited: Sequence[Subject]) -> bool:
    """True when a draft answers another condition, or another question about it, than the
    question asks.

    ``focus``: the question's linked focus, normalised (:func:`core.text.text_normalise`; ""
    none); ``qtype``: its predicted MedQuAD question type ("" or "none": unknown);
    ``candidates`` / ``cited``: the :class:`Subject` of each candidate page and of each page
    the draft cites. Never True unless a candidate is about ``focus`` (one of its foci is
    ``focus``: the focus is one the index answers, not a word of the patient's story) and every
    cited page has foci (pages without, such as the hospital's own, never disagree). Then True
    when no cited page is about ``focus`` (another condition; a cited page whose focus names
    ``focus`` among other words, "meningitis and encephalitis" for "meningitis", is about it), or when a candidate about ``focus`` answers ``qtype`` and
    no cited page about ``focus`` does (the right condition, another question: its treatment
    for "is it inherited?"). Measured on the stored runs of 2026-11-24 (docs/EVALUATION.md,
    "Focus agreement"): of the judge-approved drafts it refuses 2 of 196 MedQuAD and 4 of 197
    Dutch-paraphrase ones, of the rotated drafts 95 % and 81 %."""
    if not focus or not cited or not any(focus in c.foci for c in candidates):
        return False
    if not all(c.foci for c in cited):
        return False
    about = [c for c in cited if _names(c.foci, focus)]
    if not about:
        return True
    if qtype and qtype != "none" and any(focus in c.foci and c.qtype == qtype for c in candidates):
        return not any(c.qtype == qtype for c in about)
    return False


def _names(foci: frozenset[str], focus: str) -> bool:
    """``focus`` is one of ``foci`` or the whole words of one ("meningitis" in "meningitis and
    encephalitis"; not "ags" in "agsx")."""
    padded = f" {focus} "
    return focus in foci or any(padded in f" {name} " for name in foci)


def site_disagrees(
    names: Callable[[tuple[str, ...]], bool], *, candidates: Sequence[Subject], cited: Sequence[Subject]
) -> bool:
    """True when a draft answers from another hospital's pages than the one the question names.

    ``names``: whether the question names a site (:meth:`zolsearch.search.sites.SiteMatcher.names`
    of the question as asked, given a page's site labels); ``candidates`` / ``cited``: the
    :class:`Subject` of each candidate page and of each page the draft cites. True only when a
    candidate is a page of a named hospital and every cited page is a hospital's own page (has
    a site) of a hospital the question does not name. A draft citing general medical text
    (no site) is left to the other checks: the question may ask what a procedure is, not the
    hospital's arrangements. Measured on hospital-nl (docs/EVALUATION.md, "Site agreement")."""
    if not cited or not any(c.site and names(c.site) for c in candidates):
        return False
    return all(c.site and not names(c.site) for c in cited)


POOLED_LANGUAGE = "*"  # the calibration of every language pooled: for a language without its own


def gate_setting_for(
    language: str, *, thresholds: Mapping[str, float], context_weights: Mapping[str, float], default_threshold: float
) -> tuple[float, float]:
    """``(threshold, context weight w)`` of the gate for a question in ``language``: its
    language's calibrated ones (``thresholds`` / ``context_weights``: the flags
    ``gate_thresholds_by_language`` and ``gate_context_weights_by_language``), else the pooled
    calibration's (:data:`POOLED_LANGUAGE`: every language's drafts as one cohort, for languages
    with too few answers for a row of their own), else ``default_threshold`` and the seed's w
    (:data:`CONTEXT_WEIGHT`). The threshold is on the cosine scale [-1, 1], w in [0, 1]."""
    if language in thresholds:
        return float(thresholds[language]), float(context_weights.get(language, CONTEXT_WEIGHT))
    if POOLED_LANGUAGE in thresholds:
        return float(thresholds[POOLED_LANGUAGE]), float(context_weights.get(POOLED_LANGUAGE, CONTEXT_WEIGHT))
    return float(default_threshold), CONTEXT_WEIGHT


def terms_disagree(
    question: str,
    draft: str,
    *,
    language: str,
    draft_languages: Sequence[str],
    searched: str = "",
    across: bool = False,
    corrected: str = "",
) -> bool:
    """True when ``draft`` (the retrieved part of an answer) shares no content word with
    ``question`` (in ``language``); ``draft_languages``: the languages of the chunks it cites;
    ``corrected``: the question's spelling corrections as the trace records them
    (``trace.understanding.corrected``, "faktuur → factuur"), whose corrected words count as
    the question's own (:func:`zolsearch.search.spelling.corrected_words`): a question that
    misspells its only content word ("wanneer krijg ik de faktuur") is answered by a page that
    spells it right.

    - **Pages in the question's language**: no Snowball stem (:func:`core.text.terms_stem_set`
      in ``language``) in common, leaving out the stems of Snowball's stop words and
      :data:`_GENERIC_WORDS`. Measured on stored answers (docs/EVALUATION.md, "Term agreement"):
      with stop words alone, no judge-approved same-language draft of hospital-nl or the noisy
      English messages shared no stem with its question, while 44 % and 52 % of their rotated
      (off-topic) drafts shared none; with the generic words left out too, it refuses 3
      judge-approved drafts of hospital-nl and the sample hospital, each a wrong answer the
      local judge passed, and hospital-nl's Dutch off-topic refusals rise from 85.3 % to 91.2 %.
    - **Pages in other languages**, only with ``across`` (the flag
      ``gate_term_check_across``): the question's content words (its own language's stop and
      generic words left out) and the words understanding added to its search (``searched``:
      ``trace.understanding.expanded``: English renderings, focus name and synonyms, the
      glossary's Dutch words), accents folded, stemmed in each page language, leaving out that
      language's stop and generic words, share no stem with the draft stemmed the same way, nor
      a first six letters of stems of ≥ 6 letters (cognates: "alcoholisme" / "alcoholism").
      Chosen on medquad-dev-noisy (docs/EVALUATION.md, "Cross-lingual term agreement"): a
      Dutch question answered from an English page that no
      word of the question or of its translation links to ("mag ik bij mijn vrouw blijven slapen
      na de bevalling" answered from a narcolepsy page). A draft from pages in both the
      question's and other languages is refused only when neither rule finds a shared word
      (each reads the whole draft).

    False (never refused by this rule) without cited pages, with a page of unknown language
    (""), when neither the question nor ``searched`` leaves a content word in a language of its
    pages, and for a draft from pages in other languages without ``across``."""
    if not draft_languages or any(not lang for lang in draft_languages):
        return False
    if not across and any(lang != language for lang in draft_languages):
        return False
    question = " ".join([question, *corrected_words(corrected)])
    if language in draft_languages:  # the pages in the question's language
        asked = terms_stem_set(question, language=language) - _generic_stems(language)
        if not asked or asked & terms_stem_set(draft, language=language):
            return False
    others = sorted(set(draft_languages) - {language})
    if others:
        words = _words_across(question, searched, language)
        folded = text_normalise(draft)  # accents folded as the asked words
    for page_language in others:
        asked = terms_stem_set(words, language=page_language) - _generic_stems(page_language)
        drafted = terms_stem_set(folded, language=page_language)
        if not asked or asked & drafted or _prefixes(asked) & _prefixes(drafted):
            return False
    return True


def _words_across(question: str, searched: str, language: str) -> str:
    """The question's content words (accents folded; its language's stop words and the stems of
    its generic words left out) and the ``searched`` words, as one text to stem in a page's
    language."""
    stop = STOPWORDS.get(language, STOPWORDS["en"])
    words = [w for w in text_normalise(question).split() if len(w) > 1 and w not in stop]
    generic = _generic_stems(language)
    kept = [w for w, stem in zip(words, words_stem(words, language=language), strict=True) if stem not in generic]
    return " ".join([*kept, text_normalise(searched)])


COGNATE_PREFIX = 6  # letters two stems of at least this length share to count as one word (set on medquad-dev-noisy)


def _prefixes(stems: frozenset[str]) -> set[str]:
    return {stem[:COGNATE_PREFIX] for stem in stems if len(stem) >= COGNATE_PREFIX}


# Words every hospital question and page may share without being about the same thing: Snowball's
# stop words, modal and light verbs, and the domain's own ("ziekenhuis", "patiënt", "dokter").
_GENERIC_WORDS = {
    "nl": "mag mogen mocht mochten moeten moest kom komt komen kwam laat laten liet ga gaat gaan ging "
    "krijg krijgt krijgen kreeg mee dag dagen keer goed ziekenhuis ziekenhuizen patiënt patient patiënten "
    "dokter dokters arts artsen",
    "en": "may might must should would could can get gets got go goes going come comes take takes day days "
    "hospital hospitals patient patients doctor doctors",
    "fr": "peux peut puis pouvez dois doit devez faut vais va aller venir prendre jour jours hôpital "
    "hôpitaux patient patients médecin médecins",
}


@lru_cache(maxsize=16)
def _generic_stems(language: str) -> frozenset[str]:
    words = " ".join([*BM25_STOPWORDS.get(language, ()), _GENERIC_WORDS.get(language, "")])
    return frozenset(words_stem(words.split(), language=language))
