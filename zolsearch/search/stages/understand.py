"""Understanding: the question's language (given by the caller, else detected), then intent,
question type and the reduced query of a long message (design step 2)."""

from __future__ import annotations

import logging
import re
from dataclasses import replace

from django.conf import settings

from core.language import language_detect
from core.providers.embeddings import EmbeddingUnavailable
from core.text import text_normalise
from taxonomy.models import Entity
from taxonomy.selectors import concept_synonyms
from zolsearch.search.contract import Intent, UnderstandingTrace
from zolsearch.search.focus import (
    Focus,
    combined_focus,
    eponym_everyday,
    focus_for_age_group,
    focus_link,
    medquad_focus,
    medquad_spelling,
    medquad_words,
    names_question_type_topic,
    page_spelling,
    pages_lack_words,
    question_sentence,
)
from zolsearch.search.glossary import (
    TARGET_LANGUAGE,
    Rendering,
    english_spelling,
    glossary_translate,
    medical_renderings,
    renderings_kept,
)
from zolsearch.search.spelling import Correction, corrections_trace, text_corrected
from zolsearch.search.stages.base import SearchState, Stage
from zolsearch.search.stages.taxonomy import named_in_story_only
from zolsearch.search.understanding import (
    QTYPE_CUE_CONFIDENCE,
    Understanding,
    age_group,
    qtype_cue,
    routing_share,
    understanding_as_asked,
    understanding_model_get,
)
from zolsearch.search.understanding_llm import UnderstandingUnavailable, understanding_llm

logger = logging.getLogger(__name__)


def synonym_expansion(focus: Focus, *, query: str, language: str, limit: int = 3) -> list[str]:
    """SNOMED CT synonym expansion (seed 003 §8): when the question names its focus by a
    synonym, the focus's other names that the query does not contain, for retrieval to search
    too ("weak heart" → "Hartfalen", "Heart failure", "Cardiac failure"). For a focus from the
    hospital's taxonomy: the entity's name, then the names of the SNOMED CT concept it is linked
    to (:func:`taxonomy.selectors.concept_synonyms`, in ``language`` and English). ``[]`` when
    the question used a canonical name (the entity's name, or the concept's first name: its fully
    specified name without the tag), and for other foci: MedQuAD's have
    ``focus_expansion_enabled``; a focus linked through SNOMED CT alone is not expanded, because
    patients' stories name general concepts ("syndrome" is a synonym of Disease (disorder),
    expanded to "Disease; Diseases; Disorder", and "blood pressure" in a message about an aneurysm
    to Hypertension): on the noisy messages that cost NDCG@5 0.575 → 0.571 (docs/EVALUATION.md).
    At most one query each for the entity and the concept."""
    if focus.source != "taxonomy":
        return []
    entity = Entity.objects.filter(slug=focus.identifier).values_list("name", "snomed_concept_id").first()
    if entity is None:
        return []
    name, concept_id = entity
    concept = (
        concept_synonyms(concept_id=concept_id, languages=sorted({language, "en"}), limit=limit + 2)
        if concept_id is not None
        else []
    )
    if focus.matched in {text_normalise(n) for n in [name, *concept[:1]]}:
        return []  # named by a canonical name
    said = f" {text_normalise(query)} "
    seen = {focus.matched}
    names: list[str] = []
    for candidate in [name, *concept]:
        key = text_normalise(candidate)
        if key and key not in seen and f" {key} " not in said:  # whole words: "hf" is not in "hfd"
            seen.add(key)
            names.append(candidate)
    return names[:limit]


def _search_also(state: SearchState, names: list[str]) -> None:
    """Add ``names`` to the text BM25 and the reranker search, and say so on the trace (after
    what an earlier expansion of the same question added)."""
    state.search_query = " ".join([state.search_query or state.question, *names])
    earlier = state.trace.understanding.expanded
    state.trace.understanding.expanded = "; ".join([earlier, *names] if earlier else names)


def _unsaid(state: SearchState, words: list[str]) -> list[str]:
    """``words`` (each a word or phrase) that what ``state`` searches does not hold yet as whole
    words after :func:`core.text.text_normalise` ("hf" is not in "hfd"), each once, in order."""
    said = f" {text_normalise(state.search_query or state.question)} "
    return list(dict.fromkeys(w for w in words if f" {text_normalise(w)} " not in said))


# Question types where a child or parent the message names is usually not the patient but
# their offspring or forebear ("kunnen mijn kinderen het ook krijgen?", "mijn vader had
# leukemie, is dat erfelijk?"); a risk question about a named adult is theirs ("mijn broer
# (34) … wie loopt er risico?", answered by Cancer.gov's adult page).
_OFFSPRING_QTYPES = frozenset({"inheritance", "genetic changes"})


def _age_group_focus(state: SearchState) -> None:
    """The focus of the linked condition's pages for the age group the message is about
    (:func:`zolsearch.search.understanding.age_group`, read only when the condition has such
    pages and the group's flag is on): "ons zoontje van 9 … de ziekte van Hodgkin" asks about
    Cancer.gov's Childhood Hodgkin Lymphoma (``childhood_focus``), "my husband … soft tissue
    sarcoma, he is 58" about its Adult Soft Tissue Sarcoma (``adult_focus``)."""
    assert state.focus is not None
    on = {"child": state.config.childhood_focus, "adult": state.config.adult_focus}
    pages = {group: found for group in on if on[group] and (found := focus_for_age_group(state.focus, group))}
    if pages and (group := age_group(state.question)) in pages:
        _focus_set(state, pages[group], translated=state.trace.understanding.focus_translated)


def _focus_set(state: SearchState, focus: Focus | None, *, translated: bool = False) -> None:
    """``state.focus`` and the trace's focus fields (``focus_translated``: linked from the
    English of a Dutch question)."""
    state.focus = focus
    trace = state.trace.understanding
    trace.focus = focus.text if focus else ""
    trace.focus_kind = focus.kind if focus else ""
    trace.focus_source = focus.source if focus else ""
    trace.focus_id = focus.identifier if focus else ""
    trace.focus_translated = translated


def _spelling_focus(state: SearchState) -> list[Correction]:
    """The question's misspelled medical words (:func:`zolsearch.search.focus.medquad_spelling`)
    and, with ``spelling_page_words``, its misspelled everyday words of the hospital's pages
    (:func:`zolsearch.search.focus.page_spelling`), recorded on the trace; the focus of the corrected question (its MedQuAD match: the taxonomy's
    and SNOMED CT's come from the question as written) replaces the one linked from the question
    as written unless that one matches more words or is the same: "chronic fatique syndrome …
    glandular fever" is about Chronic Fatigue Syndrome, not Infectious Mononucleosis; "how is
    botulsm treated? my uncle also has aphasia" about the botulism its question sentence names;
    "aneurism" linked nothing. Its ``matched`` is the question's own spelling when the question
    says it so, so the focus expansion searches the name the pages use."""
    corrections = medquad_spelling(state.question, state.language)
    if state.config.spelling_page_words:
        corrections += page_spelling(state.question, state.language, skip={c.said for c in corrections})
    if not corrections:
        return []
    state.trace.understanding.corrected = corrections_trace(corrections)
    found = focus_link(
        question=text_corrected(state.question, corrections), resolution=state.resolution, language=state.language
    )
    current = state.focus
    if found is None or (current is not None and found.text == current.text):
        return corrections
    if current is None or len(found.matched.split()) >= len(current.matched.split()):
        said = {text_normalise(c.word): c.said for c in reversed(corrections)}
        as_written = " ".join(said.get(w, w) for w in found.matched.split())
        asked = f" {text_normalise(state.question)} "
        _focus_set(state, replace(found, matched=as_written if f" {as_written} " in asked else found.matched))
    return corrections


_SENTENCE_END = re.compile(r"[.?!;:]+\s*")


def _searched_corrected(state: SearchState, corrections: list[Correction]) -> str:
    """What retrieval searches (the reduced query, else the question) with ``corrections``'s
    misspelled words replaced by the words they were taken for."""
    asked = state.search_query or state.question
    return text_corrected(asked, corrections) if corrections else asked


def _focus_of_renderings(renderings: list[Rendering]) -> Focus | None:
    """The MedQuAD focus the usual English of ``renderings`` names (:func:`medquad_focus` of
    their first renderings, cognates left out), unless it is matched by a generic word's
    rendering alone: a generic word names no condition on its own, whatever a UMLS synonym says
    ("kind" → "child", the abbreviation chILD of Children's interstitial lung disease). None
    when nothing links. Raises what :func:`medquad_focus` raises."""
    usual = [r[0] for r in renderings_kept(renderings, cognates=False)]
    found = medquad_focus(" ".join(usual), "en") if usual else None
    if found is not None and found.matched in {text_normalise(r.words[0]) for r in renderings if r.generic}:
        return None
    return found


def _medical_english(state: SearchState, corrections: list[Correction]) -> None:
    """A Dutch question about a condition, in English too (:func:`medical_renderings`, read
    once): the
    MedQuAD focus of the English when it is a longer match than the Dutch gave (no focus, or a
    MedQuAD focus of fewer words; the taxonomy's and SNOMED CT's are kept), and every English
    rendering the query lacks searched as well ("galwegkanker" → "bile duct cancer"). The focus
    is linked from the usual rendering of each dictionary word, compound and eponym, not from a
    cognate spelling: "operatie" spelled "operation" linked MedQuAD's Surgery to a question
    about nail polish before an operation. Only when nothing links, a lone cognate with an
    ending only medical words have does (:func:`medical_cognate_term`: ≥ 9 letters, linking a
    MedQuAD focus by itself). ``trace.understanding.focus_translated`` says so. A misspelled
    Dutch medical word is rendered as corrected only (``corrections``, :func:`_spelling_focus`:
    "aambijen" as "aambeien", hemorrhoids; the misspelling's guessed cognate is not searched).
    A focus the English matches only by a generic word's rendering is not linked ("kind" →
    "child", a UMLS synonym of Children's interstitial lung disease), and a one-word Dutch focus
    whose English is its name is replaced only by a longer match that names it too
    ("leukemie" → Acute Lymphocytic Leukemia, but "longkanker" stays Lung Cancer beside
    "chemo"). A long message's reduced query is read with the eponyms and dictionary phrases
    of the message as asked (the reduction drops stop words and repeated words), and its
    question sentence's English links the focus before the whole message's does."""
    asked = state.search_query or state.question
    query = _searched_corrected(state, corrections)
    # A question whose MedQuAD focus is linked already (its English name is in it) gains from
    # the question-type words alone ("prognose" → "prognosis outlook"); otherwise a word that
    # names a condition must be among those translated.
    linked = state.focus is not None and state.focus.source == "medquad"
    known = medquad_words()  # a cognate is searched as the index's medical words spell it
    renderings = medical_renderings(query, known)
    if asked != state.question:
        # The reduced query has no stop words, so "wat is de ziekte van caffey? ons baby'tje …"
        # reads "ziekte caffey …": the eponyms come from the question as asked, sentence by
        # sentence (a name does not run on into the next one: "caffey? ons baby'tje").
        # (with its misspelled medical words corrected: "ziekte van parkingson" names Parkinson).
        asked_corrected = text_corrected(state.question, corrections) if corrections else state.question
        sentences = _SENTENCE_END.split(asked_corrected)
        renderings += [r for s in sentences for r in medical_renderings(s, known) if r.eponym]
        # So do the dictionary's phrases the reduction broke by keeping each word once: "…
        # kriebels in mijn benen … het rusteloze benen syndroom" reads "… kriebels benen …
        # rusteloze syndroom …" (restless legs syndrome; noisy dev nl6).
        searched = f" {text_normalise(query)} "
        phrases = {
            unit.dutch
            for s in sentences
            for unit in english_spelling(s, known)
            if " " in unit.dutch
            and unit.translated
            and not (unit.generic or unit.guessed or unit.eponym)
            and f" {unit.dutch} " not in searched
        }
        renderings += [r for phrase in sorted(phrases) for r in medical_renderings(phrase, known)]
    english = renderings_kept(renderings, specific=not linked)
    if not english:
        return
    current = state.focus
    if (
        current is not None
        and (current.source, current.kind) == ("taxonomy", "department")
        and state.intent not in _DESTINATION_INTENTS
        and state.resolution is not None
        and named_in_story_only(question=state.question, resolution=state.resolution)
    ):
        # "… voorkamerfibrillatie vastgesteld op de spoed. Welke behandelingen zijn er
        # daarvoor?" asks about the condition, not the department its story names (noisy dev nl3)
        current = None
    if current is None or (current.source == "medquad" and len(current.matched.split()) < 2):
        usual = [r[0] for r in renderings_kept(renderings, cognates=False)]
        # the question sentence first, as medquad_focus reads a message: the story names other
        # conditions, often in more words ("… ne beroerte gehad … iets te hoge bloeddruk. Hoe kan
        # ik een beroerte voorkomen?" asks about Stroke, not High Blood Pressure; noisy dev nl6)
        sentence = question_sentence(state.question)
        asked_focus = (
            _focus_of_renderings(medical_renderings(text_corrected(sentence, corrections), known)) if sentence else None
        )
        if asked_focus is not None and names_question_type_topic(asked_focus):
            asked_focus = None  # "klinische studies" asks about the story's condition (as medquad_focus reads it)
        found = asked_focus or _focus_of_renderings(renderings)
        if asked_focus is None and found is not None:
            found = diagnosis_over_everyday(found, renderings)
        # A one-word Dutch match whose English is the focus's name is that focus, however many
        # words it renders to: a longer English match replaces it only when it names it too
        # ("longkanker" is Lung Cancer, not the "cancer chemotherapy" of "chemo" in the same
        # message; "leukemie" in "acute lymfatische leukemie" is Acute Lymphocytic Leukemia).
        name = text_normalise(current.text) if current is not None else ""
        if found is not None and name in {text_normalise(u) for u in usual} and f" {name} " not in f" {found.matched} ":
            found = None
        if found is not None and (current is None or len(found.matched.split()) > len(current.matched.split())):
            _focus_set(state, found, translated=True)
        elif found is None and current is None:
            named = medical_cognate_term(renderings)
            if named is not None:
                _focus_set(state, named, translated=True)
    said = f" {text_normalise(query)} "
    new = [e for renderings in english for e in renderings if f" {text_normalise(e)} " not in said]
    if new:
        _search_also(state, new)


# The intents that name a place to go or an errand at the hospital: a question of one of them
# is about the hospital whatever medical word it holds ("pijnkliniek voor chronische rugpijn
# bornem" asks for the pain clinic, not about back pain). "general", the classifier's class for
# a question about the hospital in general, is no such intent: it also takes medical messages
# it reads no other way ("porokeratose van mibeli volgens de huidarts. wat kan je daar aan
# doen?"). Set by hand, 2026-12-07.
_DESTINATION_INTENTS = frozenset(
    {Intent.DEPARTMENT_SEARCH, Intent.DOCTOR_LOOKUP, Intent.PRACTICAL_INFO, Intent.COMPLAINT}
)


def _pages_lack_medical_word(state: SearchState, corrections: list[Correction]) -> bool:
    """Whether a medical word of the Dutch question (as searched, its misspellings corrected)
    that names something is in none of the hospital's own pages
    (:func:`zolsearch.search.focus.pages_lack_words`): a dictionary word or phrase, compound or
    eponym (:func:`zolsearch.search.glossary.english_spelling`), or a cognate whose English
    spelling (a compound's: its last word) is one of the index's medical words ("dysgrafie" →
    dysgraphia); not a generic one ("kind", "behandeling"). Such a question cannot be answered
    from the hospital's pages, whatever its routing share says, unless its intent names a place
    to go or an errand (:data:`_DESTINATION_INTENTS`). With
    ``config.medical_translation_pages_about``, a word counts as the pages' only when their
    titles or headings hold it (what they are about: "kunstgebit" is mentioned, not explained). The eponyms of a reduced query are not
    read here (its stop words are gone: "ziekte caffey"), only its other words. Raises what
    :func:`zolsearch.search.glossary.medical_dictionary` and
    :func:`zolsearch.search.focus.pages_lack_words` raise."""
    if state.intent in _DESTINATION_INTENTS:
        return False
    query = _searched_corrected(state, corrections)
    known = medquad_words()
    return any(
        pages_lack_words(unit.dutch, about=state.config.medical_translation_pages_about)
        for unit in english_spelling(query, known)
        if unit.translated and not unit.generic and (not unit.guessed or unit.english.split()[-1] in known)
    )


# English endings that only medical words have (tumours, diseases, inflammations, conditions of
# the blood and urine, wasting), and the least length of such a word: a cognate spelled so that
# is a MedQuAD term names the condition ("craniofaryngioom" → Craniopharyngioma,
# "encefalopathie" → Encephalopathy), unlike the everyday cognates of other endings ("operatie"
# → "operation", "informatie" → "information"). Set by hand on 2026-11-26 from the suffixes of
# glossary._COGNATE_SUFFIXES; on the Dutch noisy dev messages every such word was a condition.
MEDICAL_COGNATE_ENDINGS = ("oma", "pathy", "itis", "osis", "emia", "trophy", "uria")
MEDICAL_COGNATE_MIN_CHARS = 9
# The least length of a lone cognate that is a MedQuAD focus's own name and links it whatever its
# ending ("ataxie" → Ataxia, "lymfoom" → Lymphoma): shorter names are everyday words too ("gas" →
# Gas). Set by hand on 2026-12-07 on the sixth Dutch noisy dev set (nl6).
FOCUS_COGNATE_MIN_CHARS = 6


def diagnosis_over_everyday(found: Focus, renderings: list[Rendering]) -> Focus:
    """``found`` (the MedQuAD focus a Dutch message's usual English renderings link), or the
    focus a medical cognate of ``renderings`` names (:func:`medical_cognate_term`) when ``found``
    is one everyday word (:func:`zolsearch.search.focus.eponym_everyday`: a symptom, "hoofdpijn"
    → Headache) and the cognate is not. The caller asks only when the question sentence links
    nothing: then the diagnosis a story names is what the message asks about ("… hoofdpijn …
    dat het een craniofaryngioom zou kunnen zijn. … Wat is dat precies?", Craniopharyngioma;
    noisy dev nl6). Raises what :func:`medical_cognate_term` raises."""
    if " " in found.matched or not eponym_everyday(found.matched):
        return found
    named = medical_cognate_term(renderings)
    return named if named is not None and not eponym_everyday(named.matched) else found


def medical_cognate_term(renderings: list[Rendering]) -> Focus | None:
    """The MedQuAD focus named by the first of ``renderings`` (:func:`medical_renderings`) that
    is a lone cognate spelling (guessed, one word, not generic) of at least
    :data:`MEDICAL_COGNATE_MIN_CHARS` letters ending in :data:`MEDICAL_COGNATE_ENDINGS` that
    links a MedQuAD focus by itself (:func:`zolsearch.search.focus.medquad_focus` of the word:
    a term of the index, focus or synonym, or its fuzzy match, so a cognate spelled one letter
    off still links; a direct lexicon lookup instead lost one held-out noisy message); None when
    there is none. Else the first such cognate of any ending, of at least
    :data:`FOCUS_COGNATE_MIN_CHARS` letters, that is a MedQuAD focus's own name, not a synonym
    ("ataxie" → Ataxia, "lymfoom" → Lymphoma). What links a Dutch
    question whose only name of the condition is such a word: the dictionary-based link
    (:func:`zolsearch.search.focus.medquad_focus` of the usual renderings) reads no cognate."""
    lone = [r.words[0] for r in renderings if r.guessed and not r.generic and " " not in r.words[0]]
    for word in lone:
        if len(word) >= MEDICAL_COGNATE_MIN_CHARS and word.endswith(MEDICAL_COGNATE_ENDINGS):
            found = medquad_focus(word, "en")
            if found is not None and found.matched == word:
                return found
    for word in lone:
        if len(word) >= FOCUS_COGNATE_MIN_CHARS:
            found = medquad_focus(word, "en")
            if found is not None and found.matched == word and text_normalise(found.text) == word:
                return found
    return None


# The content words of MedQuAD's question template of each question type, as the index's English
# pages title them ("what research (or clinical trials) is being done for X ?", "How to diagnose
# X ?"; Ben Abacha & Demner-Fushman 2019; read off the 16,246 titles of the full MedQuAD, where
# each template titles 97-100 % of its type's pages). "information" ("What is (are) X ?") and
# "considerations" ("What to do for X ?") have none.
QTYPE_TEMPLATE_WORDS = {
    "symptoms": "symptoms",
    "treatment": "treatments",
    "causes": "causes",
    "inheritance": "inherited",
    "frequency": "many people affected",
    "genetic changes": "genetic changes related",
    "exams and tests": "diagnose",
    "outlook": "outlook",
    "susceptibility": "risk",
    "research": "research clinical trials",
    "prevention": "prevent",
    "complications": "complications",
    "stages": "stages",
    "support groups": "support",
}


class UnderstandStage(Stage):
    """Language of the question: given by the caller, else detected by lingua."""

    name = "understand"
    reads = frozenset({"request"})
    adds = frozenset({"language"})

    def run(self, state: SearchState) -> None:
        given = (state.request.language or "").strip().lower()
        state.language = given or language_detect(state.request.question, default=settings.SEARCH_DEFAULT_LANGUAGE)


class QueryUnderstandingStage(Stage):
    """Intent and MedQuAD question type, and the reduced query a long message is searched with:
    from the chat model ``config.understanding_llm_model`` when one is configured
    (:mod:`zolsearch.search.understanding_llm`), else, or when it fails, from the offline
    classifiers (:mod:`zolsearch.search.understanding`); one schema either way. The graph's
    intent wins; the classifier's is taken when the graph implies none."""

    name = "understanding"
    reads = frozenset({"question", "language", "config", "provider", "query_vector", "intent", "resolution"})
    adds = frozenset({"intent", "intent_probabilities", "qtype", "focus", "search_query", "search_vector"})

    def applies(self, state: SearchState) -> bool:
        return state.config.understanding_enabled and state.query_vector is not None

    @staticmethod
    def _offline(state: SearchState) -> Understanding | None:
        """The offline classifiers' understanding of the question (with its question sentence's
        intent and type when the config asks and they are surer, and the type a Dutch cue reads,
        ``config.qtype_cues``); None when they are unavailable."""
        assert state.query_vector is not None
        config = state.config
        try:
            model = understanding_model_get(state.provider)
            understood = model.understand(text=state.question, vector=state.query_vector, language=state.language)
        except (OSError, ValueError, KeyError, EmbeddingUnavailable) as exc:
            # Understanding helps ranking; without it the question is still searched as typed.
            logger.warning("query understanding unavailable, searching the question as typed: %s", exc)
            return None
        if config.qtype_question_sentence or config.intent_question_sentence:
            try:
                asked = model.asked(message=state.question, provider=state.provider)
            except EmbeddingUnavailable as exc:
                logger.warning("question sentence not embedded, the message's intent and type kept: %s", exc)
            else:
                understood = understanding_as_asked(
                    understood, asked, intent=config.intent_question_sentence, qtype=config.qtype_question_sentence
                )
        cue = qtype_cue(state.question, state.language) if config.qtype_cues else ""
        # A fixed phrasing asks its type whatever the story says (config.qtype_cues); it names
        # the type of a medical question, and does not make one medical that the classifier is
        # sure is not ("Wat zijn de bezoekuren?": type none at 0.63, at least
        # medical_translation_qtype_min). An agreeing cue leaves the classifier's confidence.
        sure_none = understood.qtype == "none" and understood.qtype_confidence >= config.medical_translation_qtype_min
        if cue and cue != understood.qtype and not sure_none:
            understood = replace(understood, qtype=cue, qtype_confidence=QTYPE_CUE_CONFIDENCE)
        return understood

    def run(self, state: SearchState) -> None:
        assert state.query_vector is not None
        config = state.config
        backend, backend_error = "offline", ""
        understood: Understanding | None = None
        if config.understanding_llm_model:
            try:
                understood = understanding_llm(
                    question=state.question, language=state.language, model=config.understanding_llm_model
                )
                backend = f"llm:{config.understanding_llm_model}"
            except UnderstandingUnavailable as exc:
                # The chat model is an option on top: its failure costs the request nothing.
                backend_error = str(exc)[:300]
                logger.warning("LLM query understanding unavailable, the offline classifiers used: %s", exc)
        if understood is None:
            understood = self._offline(state)
            if understood is None:
                # Neither answered: the question is searched as typed; the trace keeps why.
                state.trace.understanding = UnderstandingTrace(backend="", backend_error=backend_error)
                return
        state.trace.understanding = UnderstandingTrace(
            intent=understood.intent,
            intent_confidence=understood.intent_confidence,
            qtype=understood.qtype,
            qtype_confidence=understood.qtype_confidence,
            reduced=understood.reduced if state.config.reduced_query_enabled else "",
            backend=backend,
            backend_error=backend_error,
        )
        _focus_set(state, focus_link(question=state.question, resolution=state.resolution, language=state.language))
        corrections = _spelling_focus(state) if state.language in state.config.spelling_correction_languages else []
        state.qtype = understood.qtype
        if state.intent == Intent.GENERAL and understood.intent_confidence >= state.config.understanding_intent_min:
            state.intent = Intent(understood.intent)
            state.intent_probabilities = dict(understood.intent_probabilities)
        if state.config.reduced_query_enabled and understood.reduced:
            state.search_query = understood.reduced
            if state.config.dense_enabled:
                state.search_vector = state.provider.embed_query(understood.reduced)
        if (
            state.config.reduced_query_keeps_focus
            and state.search_query
            and state.focus is not None
            and state.focus.matched
            and (dropped := _unsaid(state, [state.focus.matched]))
        ):
            # The reduction kept the question sentence, and the message named its focus in the
            # story before it ("Hi, our grandson has Coffin-Lowry syndrome. What treatments are
            # available for him?"): the focus is what the question is about, so it is searched.
            _search_also(state, dropped)
        if corrections and (new_words := _unsaid(state, [c.word for c in corrections])):
            _search_also(state, new_words)  # BM25 and the reranker also search "aneurysm"
        # How much the question wants the hospital's own (Dutch) pages: whichever language the
        # pages it wants are in is the language its words are also searched in.
        share = routing_share(state.intent.value, state.intent_probabilities, state.config.source_authority_intents)
        if (
            state.config.medical_translation_enabled
            and state.language == TARGET_LANGUAGE
            and (
                share < state.config.medical_translation_max_authority
                or (
                    understood.qtype != "none"
                    and understood.qtype_confidence >= state.config.medical_translation_qtype_min
                )
                or (state.config.medical_translation_pages_lack and _pages_lack_medical_word(state, corrections))
            )
        ):
            _medical_english(state, corrections)
        if (
            state.config.combined_focus_enabled
            and state.focus is not None
            and state.focus.source in ("medquad", "snomed")  # a taxonomy entity stays: it routes
            and (both := combined_focus(state.focus, state.search_query or state.question)) is not None
        ):
            _focus_set(state, both, translated=state.trace.understanding.focus_translated)
        if state.focus is not None and state.qtype not in _OFFSPRING_QTYPES:
            _age_group_focus(state)
        if state.config.focus_expansion_enabled and state.focus is not None and state.focus.source == "medquad":
            name = text_normalise(state.focus.text)
            if (
                name
                and state.focus.matched != name
                and name not in text_normalise(state.search_query or state.question)
            ):
                # A MedQuAD focus the question names another way, by a UMLS synonym ("bassen
                # kornzweig syndrome") or a fuzzy match ("cholangiocarcinoom"): BM25 and the
                # reranker's term features also search the name the pages use.
                _search_also(state, [state.focus.text])
        if (
            state.config.qtype_expansion_enabled
            and state.language == TARGET_LANGUAGE
            and state.focus is not None
            and state.focus.source == "medquad"
            and (new := _unsaid(state, QTYPE_TEMPLATE_WORDS.get(state.qtype, "").split()))
        ):
            _search_also(state, [" ".join(new)])  # "research clinical trials"
        if state.config.snomed_expansion_enabled and state.focus is not None:
            names = synonym_expansion(
                state.focus,
                query=state.search_query or state.question,
                language=state.language,
                limit=state.config.snomed_expansion_terms,
            )
            if names:
                _search_also(state, names)
        if state.config.glossary_enabled and share >= state.config.glossary_min_authority:
            dutch = glossary_translate(state.search_query or state.question, language=state.language)
            if dutch:
                # An English or French question about a practical topic: BM25 and the reranker's
                # term features also search the Dutch words of the hospital's pages.
                _search_also(state, dutch)
