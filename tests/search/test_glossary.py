"""Query translation of the hospital's practical vocabulary (``data/understanding/glossary.jsonl``)
and the understanding stage that applies it, on the real glossary and the real classifiers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from zolsearch.search.config import pipeline_config_default
from zolsearch.search.glossary import (
    Spelled,
    cognate_spellings,
    dutch_word_elsewise,
    english_spelling,
    glossary_topics,
    glossary_translate,
    medical_dictionary,
    medical_english,
    medical_renderings,
)
from zolsearch.search.pipeline import SearchRequest, pipeline_run


def test_english_and_french_practical_words_give_the_dutch_words_of_the_pages() -> None:
    """GIVEN the glossary WHEN an English or French question names a practical topic THEN the
    topic's Dutch words come back, each once, in file order; Dutch questions, whole-word misses
    ("visitation" is not "visit") and words the question already has add nothing."""
    assert glossary_translate("can I get an interpreter at a hospital in Antwerp", language="en") == [
        "tolk",
        "tolken",
        "interculturele bemiddeling",
    ]
    assert glossary_translate("quelles sont les heures de visite", language="fr") == [
        "bezoekuren",
        "bezoektijden",
        "bezoek",
    ]
    assert glossary_translate("Is er een tolk?", language="nl") == []
    assert glossary_translate("visitation rights of a father", language="en") == []
    assert "parking" not in glossary_translate("where is the parking", language="en")
    assert "parkeren" in glossary_translate("where is the parking", language="en")
    assert glossary_translate("parking visiting hours invoice complaint interpreter", language="en", limit=5) == [
        "bezoekuren",
        "bezoektijden",
        "bezoek",
        "parkeren",
        "parkeertarief",
    ]
    assert glossary_translate("can I get an interpreter", language="de") == []


def test_turkish_and_arabic_practical_words_give_the_dutch_words_of_the_pages() -> None:
    """GIVEN the glossary's Turkish and Arabic phrases WHEN a question in one of them names a
    practical topic THEN the topic's Dutch words come back; Turkish letters are matched after
    normalisation ("Tercüman" as "tercuman"), Arabic phrases as whole words."""
    assert glossary_translate("Hastanede TERCÜMAN var mı?", language="tr")[:2] == ["tolk", "tolken"]
    assert glossary_translate("randevumu nasıl iptal ederim", language="tr")[:2] == ["afspraak", "annuleren"]
    assert glossary_translate("هل يوجد مترجم في المستشفى", language="ar")[:2] == ["tolk", "tolken"]
    assert glossary_translate("كيف أطلب نسخة من ملفي الطبي", language="ar")[:2] == [
        "medisch dossier",
        "patiëntendossier",
    ]
    assert glossary_translate("مترجمين", language="ar") == []  # holds "مترجم", but is a longer word
    assert glossary_translate("doğum tarihim yanlış", language="tr") == []  # a date of birth is no birth


@pytest.fixture
def understanding_dir(settings, tmp_path: Path) -> Iterator[Path]:  # type: ignore[no-untyped-def]
    """An empty ``data/understanding`` folder as ``settings.BASE_DIR``'s; the dictionaries'
    process caches are cleared before and after."""
    folder = tmp_path / "data" / "understanding"
    folder.mkdir(parents=True)
    settings.BASE_DIR = tmp_path
    glossary_topics.cache_clear()
    medical_dictionary.cache_clear()
    yield folder
    glossary_topics.cache_clear()
    medical_dictionary.cache_clear()


def test_a_glossary_row_without_dutch_words_is_refused(understanding_dir: Path) -> None:
    """GIVEN a glossary file with a row that has phrases but no Dutch words WHEN it is read THEN
    ``ValueError`` names the file and line."""
    (understanding_dir / "glossary.jsonl").write_text(
        json.dumps({"topic": "parking", "nl": ["parkeren"], "en": ["parking"]})
        + "\n"
        + json.dumps({"topic": "broken", "en": ["visit"]})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=r"glossary\.jsonl:2"):
        glossary_topics()


@pytest.mark.django_db
def test_the_understanding_stage_translates_practical_questions_that_want_the_hospitals_pages() -> None:
    """GIVEN a source with a priority WHEN an English or French question asks a practical thing
    THEN BM25 and the reranker also search the Dutch words (``expanded`` on the trace); an
    English question about a treatment that names an invoice (its intent wants no hospital
    page) and the flag off add nothing; without any source priority (source authority off) the
    glossary still translates: it depends on the intent, not on the priorities."""
    config = pipeline_config_default().with_overrides(source_priorities={"hospital": 10})
    state = pipeline_run(
        request=SearchRequest(question="where can I park my car and what does parking cost", language="en"),
        config=config,
    )
    assert "parkeren" in state.trace.understanding.expanded.split("; ")
    assert "parkeren" in state.search_query
    french = pipeline_run(
        request=SearchRequest(question="est-ce qu'il y a un interprète à l'hôpital", language="fr"), config=config
    )
    assert french.trace.understanding.expanded.startswith("tolk; tolken")
    assert "factuur" in glossary_translate(
        "How is asthma treated, and is the bill for the treatment high?", language="en"
    )
    for question, language, cfg in (
        ("How is asthma treated, and is the bill for the treatment high?", "en", config),
        ("where can I park my car and what does parking cost", "en", config.with_overrides(glossary_enabled=False)),
    ):
        state = pipeline_run(request=SearchRequest(question=question, language=language), config=cfg)
        assert not {"parkeren", "factuur"} & set(state.trace.understanding.expanded.split("; ")), question
    plain = pipeline_run(
        request=SearchRequest(question="where can I park my car and what does parking cost", language="en"),
        config=pipeline_config_default().with_overrides(source_authority_enabled=False),
    )
    assert "parkeren" in plain.trace.understanding.expanded.split("; ")


def test_dutch_medical_words_in_english() -> None:
    """GIVEN the Dutch-English medical dictionary WHEN a Dutch question names a condition by
    dictionary words, a compound, "ziekte van X" or a Greek/Latin word THEN their renderings
    come back in order, the usual first; stop words, articles and unknown ordinary words are
    left out, and without ``cognates`` no spelling is guessed."""
    assert medical_english("harige cel leukemie, is dat erfelijk?") == [
        ("hairy",),
        ("cell",),
        ("leukemia",),
        ("inherited", "hereditary", "genetic"),
    ]
    assert medical_english("mijn moeder heeft galwegkanker") == [("bile duct cancer",)]
    assert medical_english("de zoon heeft een kiemceltumor") == [("germ cell tumor",)]
    # a dictionary row wins over the eponym rule: NINDS's name of Kennedy's disease
    assert medical_english("is de ziekte van Kennedy erfelijk?")[0] == ("kennedy s disease",)
    assert medical_english("is de ziekte van Xyzkennedy erfelijk?")[0] == ("xyzkennedy disease",)
    assert medical_english("ziekte van de schildklier") == [("thyroid disease",)]
    assert medical_english("ziekte van von Willebrand") == [("von willebrand disease",)]
    # an everyday Dutch word after the name is not its second word
    assert medical_english("wat houdt het syndroom van Down precies in?") == [("down syndrome",)]
    assert medical_english("ziekte van Guillain Barre") == [("guillain barre disease",)]
    assert medical_english("syndroom van Stevens-Johnson") == [("stevens johnson syndrome",)]
    assert medical_english("is de ziekte van Lyme besmettelijk") == [("lyme disease",)]
    # Cognates: the English spelling by suffix and c for k; the fuzzy focus match and BM25's
    # stemming do the rest ("reumatoid" is one letter from "rheumatoid").
    assert medical_english("kardiomyopathie of rabdomyosarcoom, reumatoïde artritis") == [
        ("cardiomyopathy",),
        ("rabdomyosarcoma",),
        ("reumatoid",),
        ("arthritis",),
    ]
    assert medical_english("therapie, immunotherapie, allergie, operatie") == [
        ("therapy",),
        ("immunotherapy",),
        ("allergy",),
        ("operation",),
    ]
    assert medical_english("kardiomyopathie na een operatie", cognates=False) == []
    assert medical_english("fragiel x syndroom type 2") == [("fragile",), ("x",), ("syndrome",), ("2",)]
    assert medical_english("tot hoe laat mag ik op bezoek") == []
    # Generic words alone name no condition: nothing is added ("vallende ziekte", the lay name
    # of epilepsy, is a row of its own since 2026-12-07)
    assert medical_english("Mijn zoon heeft een ernstige ziekte. Welke dienst behandelt dat?") == []
    assert medical_english("is die ziekte erfelijk bij kinderen") == []
    assert medical_english("is die ziekte erfelijk", specific=False) == [
        ("disease",),
        ("inherited", "hereditary", "genetic"),
    ]


def test_lay_names_of_common_topics_and_organ_cancers_are_rendered_as_medquad_names_them() -> None:
    """GIVEN the dictionary's lay names of common MedlinePlus topics WHEN a Dutch question uses
    one THEN its English is the topic's name, and an organ cancer takes the adjective MedQuAD's
    name has (part by part, "eierstok" + "kanker" would be "ovary cancer"); a phrase wins over
    the eponym rule ("ziekte van Pfeiffer" is glandular fever, not a "pfeiffer disease")."""
    assert medical_english("wat is hooikoorts precies?") == [("hay fever",)]
    assert medical_english("mijn zus heeft eierstokkanker") == [("ovarian cancer",)]
    assert medical_english("hoe lang duurt de ziekte van Pfeiffer") == [("infectious mononucleosis",)]
    assert medical_english("wat doe je tegen doorligwonden") == [("pressure sores",)]


def test_compounds_with_a_greek_or_latin_tail_eponyms_and_dutch_words_that_mean_else() -> None:
    """GIVEN the dictionary WHEN a compound ends in a long medical word it lacks THEN the head is
    translated and the tail spelled the English way, marked guessed (it never links a focus);
    an eponym is marked as one; "arts" is a Dutch word for something else than "ARTS", while
    a word rendered as itself or one the dictionary lacks is not."""
    (liver,) = medical_renderings("mijn vader heeft leverfibrose")
    assert liver.words == ("liver fibrosis",) and liver.guessed and not liver.eponym
    (kidney,) = medical_renderings("ons kindje heeft nierdysplasie")  # both parts in the dictionary
    assert kidney.words == ("kidney dysplasia",) and not kidney.guessed
    assert [r for r in medical_renderings("galwegkanker") if not r.guessed][0].words == ("bile duct cancer",)
    (caffey,) = [r for r in medical_renderings("wat is de ziekte van caffey?") if r.eponym]
    assert caffey.words == ("caffey disease",) and not caffey.guessed
    assert medical_english("ziekte caffey") == []  # without "van" it is no eponym (a reduced query)
    assert dutch_word_elsewise("arts") and not dutch_word_elsewise("diabetes")
    assert not dutch_word_elsewise("caffey")


def test_the_english_spelling_keeps_the_words_it_cannot_translate_in_place() -> None:
    """GIVEN the dictionary and a medical vocabulary WHEN a Dutch question names a condition by
    a name and a Dutch head word THEN every word is kept in order, the head word in English
    (dictionary) and a cognate in the vocabulary's spelling (guessed), the name as typed;
    eponyms are one unit; stop words, digits and generic rows are generic."""
    known = frozenset({"lymphoma", "syndrome"})
    units = english_spelling("Is het Baller-Gerold syndroom erfelijk?", known)
    assert [(u.dutch, u.english) for u in units] == [
        ("is", "is"),
        ("het", "het"),
        ("baller", "baller"),
        ("gerold", "gerold"),
        ("syndroom", "syndrome"),
        ("erfelijk", "inherited"),
    ]
    assert [u.translated for u in units] == [False, False, False, False, True, True]
    assert units[0].generic and units[1].generic and not units[2].generic and units[5].generic
    (burkitt, lymphoma) = english_spelling("burkitt lymfoom", known)
    assert burkitt == Spelled("burkitt", "burkitt", translated=False, generic=False)
    assert lymphoma == Spelled("lymfoom", "lymphoma", translated=True, generic=False, guessed=True)
    (kennedy,) = english_spelling("ziekte van Xyzkennedy", known)
    assert (kennedy.dutch, kennedy.english, kennedy.eponym) == ("ziekte van xyzkennedy", "xyzkennedy disease", True)
    assert [u.generic for u in english_spelling("de 2 x")] == [True, True, True]  # stop word, digit, letter
    assert english_spelling("") == [] and english_spelling("?!") == []


def test_a_cognate_is_spelled_as_the_indexs_medical_vocabulary_spells_it() -> None:
    """GIVEN the medical vocabulary of an index WHEN a Dutch medical word is only a cognate
    THEN it is rendered in the first spelling the vocabulary holds (Dutch f for English ph, k for
    c, oe for e, ks for x), still marked guessed; without a vocabulary, or when it holds no
    spelling, the plain suffix rewrite. Compounds' tails too."""
    known = frozenset({"lymphoma", "craniopharyngioma", "encephalitis", "esophagitis", "liver"})
    assert cognate_spellings("lymfoma") == ("lymfoma", "lymphoma")
    assert cognate_spellings("kardiofoksa")[:4] == ("kardiofoksa", "kardiofoxa", "kardiophoksa", "kardiophoxa")
    assert "cardiophoxa" in cognate_spellings("kardiofoksa")
    assert len(cognate_spellings("oefkoeks")) == len(set(cognate_spellings("oefkoeks"))) <= 16
    (lymphoma,) = medical_renderings("lymfoom", known)
    assert lymphoma.words == ("lymphoma",) and lymphoma.guessed
    assert medical_renderings("lymfoom")[0].words == ("lymfoma",)  # no vocabulary: the plain rewrite
    assert medical_renderings("craniofaryngioom", known)[0].words == ("craniopharyngioma",)
    assert medical_renderings("encefalitis", known)[0].words == ("encephalitis",)  # -itis: same suffix
    assert medical_renderings("oesofagitis", known)[0].words == ("esophagitis",)
    assert medical_renderings("xyzfoom", known)[0].words == ("xyzfoma",)  # no spelling known
    (liver,) = medical_renderings("leverfibrose", frozenset({"liver", "fibrosis"}))
    assert liver.words == ("liver fibrosis",) and liver.guessed
    # A word the index spells so is not split as a compound; nor is an -itis word without it.
    cell = frozenset({"cell", "cellulitis"})
    assert medical_renderings("cellulitis", cell)[0].words == ("cellulitis",)
    assert medical_renderings("cellulitis")[0].words == ("cellulitis",)  # not "cell lulitis"
    # The k of a spelling the index keeps ("leuko-") is tried too, after the c.
    assert medical_renderings("leukoencefalitis", frozenset({"leukoencephalitis"}))[0].words == ("leukoencephalitis",)


def test_the_greek_h_dutch_drops_is_tried_in_the_indexs_spelling() -> None:
    """GIVEN a medical vocabulary with Greek th and rh WHEN a Dutch cognate drops the h
    ("trombofilie", "rabdomyosarcoom", "protrombine") THEN its English spelling is found, one
    t at a time as the vocabulary spells it ("trombocytopenie": the second t has none); a
    word whose h-less spelling the vocabulary lacks keeps the plain rewrite."""
    known = frozenset({"thrombophilia", "rhabdomyosarcoma", "prothrombin", "thrombocytopenia"})
    assert medical_renderings("trombofilie", known)[0].words == ("thrombophilia",)
    assert medical_renderings("rabdomyosarcoom", known)[0].words == ("rhabdomyosarcoma",)
    assert medical_renderings("protrombine", known)[0].words == ("prothrombin",)
    assert medical_renderings("trombocytopenie", known)[0].words == ("thrombocytopenia",)
    assert medical_renderings("retinopathie", known)[0].words == ("retinopathy",)  # not known: plain
    assert medical_renderings("trombofilie")[0].words == ("trombofilia",)  # no vocabulary


def test_adjective_endings_that_everyday_words_share_are_rewritten_only_into_the_indexs_spelling() -> None:
    """GIVEN the medical vocabulary of an index WHEN a Dutch word ends like a medical adjective
    everyday words share ("-aire", "-ale", "-ieve", "-isme", "-ine") THEN it is rendered in the
    first English ending the vocabulary holds ("musculaire" → "muscular", "primaire" →
    "primary"), still guessed; a word whose rewrite the vocabulary lacks ("toerisme", "totaal")
    or any such word without a vocabulary is not translated."""
    known = frozenset({"spinal", "muscular", "atrophy", "primary", "progressive", "albinism", "insulin"})
    # (the dictionary has "spinale musculaire atrofie" itself since 2026-11-30: the words apart)
    assert [r.words for r in medical_renderings("spinale atrofie musculaire", known)] == [
        ("spinal",),
        ("atrophy",),
        ("muscular",),
    ]
    assert all(r.guessed for r in medical_renderings("spinale atrofie musculaire", known))
    assert medical_renderings("primaire", known)[0].words == ("primary",)  # "-ar" not known, "-ary" is
    assert medical_renderings("progressieve albinisme insuline", known)[0].words == ("progressive",)
    assert [r.words for r in medical_renderings("progressieve albinisme insuline", known)][1:] == [
        ("albinism",),
        ("insulin",),
    ]
    assert medical_renderings("toerisme totaal", known) == []
    assert medical_renderings("musculaire") == []  # no vocabulary
    # a qualifier alone is no reason to search in English: "normaal", "centrale", "positief"
    everyday = known | {"normal", "central", "positive"}
    assert all(r.generic for r in medical_renderings("is de uitslag normaal of positief", everyday))
    assert medical_english("waar is de centrale hal", known=everyday) == []


def test_a_past_participle_of_a_latin_verb_is_rewritten_only_into_the_indexs_spelling() -> None:
    """GIVEN the medical vocabulary of an index WHEN a Dutch word is a past participle of a verb
    of Latin origin ("ge-…-eerd(e)") THEN it is rendered as English writes it ("-ed", else
    "-ated"), guessed and generic (a qualifier); one whose English the vocabulary lacks
    ("gereserveerde") and any without a vocabulary are not translated."""
    known = frozenset({"dilated", "differentiated", "cardiomyopathy"})
    (dilated, cardiomyopathy) = medical_renderings("gedilateerde cardiomyopathie", known)
    assert dilated.words == ("dilated",) and dilated.guessed and dilated.generic
    assert cardiomyopathy.words == ("cardiomyopathy",)
    assert medical_renderings("slecht gedifferentieerd", known)[-1].words == ("differentiated",)
    assert medical_renderings("gereserveerde kamer", known) == []
    assert medical_renderings("gedilateerde") == []  # no vocabulary


@pytest.mark.django_db
def test_the_understanding_stage_spells_cognates_as_the_index_does() -> None:
    """GIVEN the ingested MedQuAD slice (foci with "encephalitis" and "porphyria") WHEN a Dutch
    question names encefalitis or porfyrie (words the dictionary lacks) THEN the index's
    spelling is searched as well, not the plain rewrite ("encefalitis", "porfyria")."""
    from zolsearch.search.focus import medquad_lexicon_clear, medquad_words

    medquad_lexicon_clear()
    assert {"encephalitis", "porphyria"} <= medquad_words() and "porfyria" not in medquad_words()
    for dutch, english, plain in (
        ("encefalitis", "encephalitis", "encefalitis"),
        ("porfyrie", "porphyria", "porfyria"),
    ):
        state = pipeline_run(
            request=SearchRequest(question=f"wat zijn de symptomen van {dutch}?", language="nl"),
            config=pipeline_config_default(),
        )
        expanded = state.trace.understanding.expanded.split("; ")
        assert english in expanded and plain not in expanded, (dutch, expanded)


def test_a_medical_dictionary_row_without_a_list_of_english_is_refused(understanding_dir: Path) -> None:
    """GIVEN a dictionary whose second row gives ``en`` as a string, or a line that is not JSON
    WHEN it is read THEN ``ValueError`` names the file and line."""
    for second in (json.dumps({"nl": "kanker", "en": "cancer"}), "{not json"):
        (understanding_dir / "medical-nl-en.jsonl").write_text(
            json.dumps({"nl": "hart", "en": ["heart"]}) + "\n" + second + "\n", encoding="utf-8"
        )
        medical_dictionary.cache_clear()
        with pytest.raises(ValueError, match=r"medical-nl-en\.jsonl:2"):
            medical_dictionary()


@pytest.mark.django_db
def test_a_dutch_question_about_a_condition_links_its_focus_from_the_english() -> None:
    """GIVEN the ingested MedQuAD slice (its focus "Acquired hemophilia") WHEN a Dutch
    question names it in Dutch THEN the English links the focus and is searched too; a Dutch
    practical question that wants the hospital's pages, and the flag off, add nothing."""
    from zolsearch.search.focus import medquad_lexicon_clear

    medquad_lexicon_clear()
    config = pipeline_config_default()
    state = pipeline_run(
        request=SearchRequest(question="wat zijn de symptomen van verworven hemofilie?", language="nl"),
        config=config,
    )
    assert state.focus is not None and state.focus.text == "Acquired hemophilia"
    assert state.trace.understanding.focus == "Acquired hemophilia"
    assert state.trace.understanding.focus_translated
    assert {"acquired", "hemophilia"} <= set(state.trace.understanding.expanded.split("; "))
    off = pipeline_run(
        request=SearchRequest(question="wat zijn de symptomen van verworven hemofilie?", language="nl"),
        config=config.with_overrides(medical_translation_enabled=False),
    )
    assert "hemophilia" not in (off.search_query or "")
    practical = pipeline_run(
        request=SearchRequest(question="wat zijn de bezoekuren voor kinderen op de materniteit", language="nl"),
        config=config,
    )
    assert "children" not in practical.trace.understanding.expanded.split("; ")
    assert not practical.trace.understanding.focus_translated
    # A long message is searched with its reduced query, which has no "van": the eponym of the
    # message as asked is searched too.
    long = pipeline_run(
        request=SearchRequest(
            question="wat is de ziekte van caffey? ons baby'tje heeft sinds twee dagen gezwollen kaken en een koortsje",
            language="nl",
        ),
        config=config,
    )
    assert long.search_query and "caffey disease" in long.search_query


def test_a_compound_whose_first_part_is_an_english_organ_word_of_the_index_is_rendered() -> None:
    """GIVEN the real dictionary and an index vocabulary with "anus", "larynx" and "carcinoma"
    WHEN a Dutch compound starts with an organ Dutch names the Latin way THEN it is rendered
    part by part (an invented organ "anusxyz": the dictionary has "anuskanker" → "anal cancer"
    itself; "larynxsarcoom" → "larynx sarcoma"; "larynxcarcinoom" is a dictionary row); not
    after a head of fewer than 4 letters, nor with a tail the index does not spell
    ("meningo" + "cokkeninfection"), nor an everyday Dutch word ("teen", toe); the dictionary's anatomy ("strottehoofdkanker") and
    microbes ("pneumokokkenziekte") compound as before."""
    known = frozenset({"anus", "larynx", "carcinoma", "sarcoma", "meningo", "ear"})
    assert [r.words for r in medical_renderings("anusxyzkanker", known | {"anusxyz"})] == [("anusxyz cancer",)]
    assert [r.words for r in medical_renderings("larynxsarcoom", known)] == [("larynx sarcoma",)]
    assert [r.words for r in medical_renderings("larynxcarcinoom", known)] == [("laryngeal cancer",)]
    assert [r.words for r in medical_renderings("anusxyzkanker", frozenset())] == []
    assert [r.words for r in medical_renderings("earkanker", known)] == []  # head of 3 letters
    # an everyday Dutch word is not taken as English: "teen" is a toe ("Teen Health" in MedQuAD)
    assert [r.words for r in medical_renderings("teenontsteking", known | {"teen"})] == []
    assert [r.words for r in medical_renderings("teenkanker", known | {"teen"})] == []
    assert [r.words for r in medical_renderings("meningoxyzinfectie", known)] == [("meningoxyzinfection",)]
    assert [r.words for r in medical_renderings("strottehoofdkanker", known)] == [("larynx cancer",)]
    assert [r.words for r in medical_renderings("pneumokokkenziekte", known)] == [("pneumococcal disease",)]


def test_the_dutch_ending_entie_is_spelled_as_the_index_spells_it_ency_or_ence() -> None:
    """GIVEN an index vocabulary WHEN a Dutch word ends in "-entie" THEN its English spelling is
    the first of "-ency" and "-ence" that the vocabulary holds ("deficiëntie" → "deficiency",
    "persistentie" → "persistence"); when it holds neither, "-tie" → "-tion" as before
    ("interventie" → "intervention"); other "-tie" words keep "-tion"."""
    known = frozenset({"deficiency", "insufficiency", "persistence"})
    assert medical_renderings("deficiëntie", known)[0].words == ("deficiency",)
    assert medical_renderings("persistentie", known)[0].words == ("persistence",)
    assert medical_renderings("xyzentie", known)[0].words == ("xyzention",)  # no spelling known: "-tie"
    assert medical_renderings("xyzentie", frozenset())[0].words == ("xyzention",)
    assert medical_renderings("interventie", known)[0].words == ("intervention",)
    assert medical_renderings("operatie", known)[0].words == ("operation",)


def test_the_dutch_ending_antie_is_spelled_ance_or_ancy_where_the_index_has_it() -> None:
    """GIVEN an index vocabulary WHEN a Dutch word ends in "-antie" THEN its English spelling is
    the first of "-ance" and "-ancy" the vocabulary holds ("intolerantie" → "intolerance"),
    else "-tie" → "-tion"; "eiwitintolerantie" is "protein intolerance" (the dictionary's
    "eiwit"), "linkerhartsyndroom" "left heart syndrome" and "kleincellig" "small cell"."""
    known = frozenset({"intolerance", "protein", "syndrome", "heart", "left", "hypoplastic"})
    assert medical_renderings("intolerantie", known)[0].words == ("intolerance",)
    assert medical_renderings("xyzantie", known)[0].words == ("xyzantion",)
    assert medical_renderings("eiwitintolerantie", known)[0].words == ("protein intolerance",)
    assert [r.words for r in medical_renderings("hypoplastisch linkerhartsyndroom", known)] == [
        ("hypoplastic",),
        ("left heart syndrome",),
    ]
    assert medical_english("kleincellig longkanker") == [("small cell",), ("lung cancer",)]


def test_a_compounds_first_part_may_be_a_medical_word_the_index_spells_the_english_way() -> None:
    """GIVEN the real dictionary (which renders "hypo" as hypoglycemia) and an index vocabulary
    with "hypoventilation" and "migration" WHEN a Dutch compound starts with a cognate of such a
    word THEN the longer cognate part is taken ("hypoventilatiesyndroom" → "hypoventilation
    syndrome", not "hypoglycemia ventilatiesyndroma"; "migratiestoornis" → "migration
    disorder"), a guessed rendering like any cognate; without the word in the index, not."""
    known = frozenset({"hypoventilation", "migration", "syndrome"})
    assert [r.words for r in medical_renderings("hypoventilatiesyndroom", known)] == [("hypoventilation syndrome",)]
    assert [r.words for r in medical_renderings("migratiestoornis", known)] == [("migration disorder",)]
    assert medical_renderings("hypoventilatiesyndroom", known)[0].guessed  # never links a focus by itself
    assert medical_renderings("hypoventilatiesyndroom", frozenset())[0].words != ("hypoventilation syndrome",)


def test_a_six_letter_cognate_is_rewritten_only_into_a_spelling_the_index_has() -> None:
    """GIVEN an index vocabulary with "glioma" and "anemia" WHEN a Dutch word of six letters has
    a medical ending THEN it is rewritten only when the index spells it ("glioom" → glioma,
    "anemie" → anemia), never guessed ("xyloom" stays untranslated); "pernicieuse", spelled the
    French way, is "pernicious", but only as the index spells it ("masseuse" stays as written)."""
    known = frozenset({"glioma", "anemia", "pernicious"})
    assert [r.words for r in medical_renderings("glioom", known)] == [("glioma",)]
    assert [r.words for r in medical_renderings("pernicieuse anemie", known)] == [("pernicious",), ("anemia",)]
    assert medical_renderings("xyloom", known) == []
    assert medical_renderings("glioom", frozenset()) == []
    assert medical_renderings("masseuse", known) == []


@pytest.mark.django_db
def test_a_dutch_question_of_a_medquad_type_is_translated_whatever_its_routing_share() -> None:
    """GIVEN the offline classifiers WHEN a Flemish message asks what a condition is in words
    the intent classifier reads as wanting the hospital's own pages (routing share ≥
    ``medical_translation_max_authority``) THEN, its MedQuAD question type being sure enough
    (≥ ``medical_translation_qtype_min``), its medical words are searched in English too
    ("kattenkrabziekte" → "cat scratch disease"); at 1.0 (as before 2026-12-07) they are not."""
    from zolsearch.search.understanding import routing_share

    question = "Allez, mijn zoon is gekrabd door onze kitten en den dokter sprak van kattenkrabziekte. Wat is da juist?"
    config = pipeline_config_default()
    state = pipeline_run(request=SearchRequest(question=question, language="nl"), config=config)
    share = routing_share(state.intent.value, state.intent_probabilities, config.source_authority_intents)
    assert share >= config.medical_translation_max_authority  # the case the rule is for
    understood = state.trace.understanding
    assert understood.qtype == "information" and understood.qtype_confidence >= config.medical_translation_qtype_min
    assert "cat scratch disease" in understood.expanded.split("; ")
    off = pipeline_run(
        request=SearchRequest(question=question, language="nl"),
        config=config.with_overrides(medical_translation_qtype_min=1.0),
    )
    assert "cat scratch disease" not in off.trace.understanding.expanded


def test_the_endings_fie_gie_and_pie_are_spelled_phia_gia_and_pia_where_the_index_has_only_those() -> None:
    """GIVEN an index vocabulary WHEN a Dutch word ends in "-fie", "-gie" or "-pie" THEN its
    English spelling is "-phy", "-gy", "-py" where the index has that ("dystrofie" →
    "dystrophy", even beside a "dystrophia"), else "-phia", "-gia", "-pia" where it has that
    ("dysgrafie" → "dysgraphia", "neuralgie" → "neuralgia", "myopie" → "myopia"), else "-phy",
    "-gy", "-py" guessed as before; and such a word is known to the index, not a misspelling
    (``cognate_known``)."""
    from zolsearch.search.glossary import cognate_known

    known = frozenset({"dystrophy", "dystrophia", "dysgraphia", "neuralgia", "myopia"})
    assert [r.words for r in medical_renderings("dystrofie", known)] == [("dystrophy",)]
    assert [r.words for r in medical_renderings("dysgrafie", known)] == [("dysgraphia",)]
    assert [r.words for r in medical_renderings("neuralgie", known)] == [("neuralgia",)]
    assert [r.words for r in medical_renderings("myopie", known)] == [("myopia",)]
    assert [r.words for r in medical_renderings("dysgrafie", frozenset())] == [("dysgraphy",)]
    assert [r.words for r in medical_renderings("osteopathie", known)] == [("osteopathy",)]
    assert cognate_known("dysgrafie", known) and cognate_known("dystrofie", known)
    assert not cognate_known("dysgrafie", frozenset()) and not cognate_known("fotografie", known)


@pytest.mark.django_db
def test_the_dutch_names_of_other_sites_conditions_are_rendered_as_medquad_names_them() -> None:
    """GIVEN the dictionary's Dutch names of NINDS's, NIDDK's, CDC's, NHLBI's and Cancer.gov's
    conditions WHEN a Dutch question uses a lay or compound name THEN its English is the
    condition's name, in the singular for a singular Dutch word, without Cancer.gov's "Adult"."""
    assert medical_english("wie krijgt hoofdluis") == [("head lice",)]
    assert medical_english("plasbuiskanker behandeling") == [("urethral cancer",), ("treatment",)]
    assert medical_english("wat is galgangatresie") == [("biliary atresia",)]
    assert medical_english("acute myeloïde leukemie") == [("acute myeloid leukemia",)]
    assert medical_english("mijn vader heeft een hartblok") == [("heart block",)]


@pytest.mark.django_db
def test_the_other_dutch_names_of_a_named_focus_are_rendered_too() -> None:
    """GIVEN the dictionary's further Dutch names of foci that had a row already (2026-12-07)
    WHEN a Dutch question uses the usual medical or Flemish name instead of the first row's
    THEN its English is the focus's name; a question-type topic ("klinische studies") is not a
    focus's name, and a name already in the dictionary keeps its rendering."""
    assert medical_english("hersenverlamming") == [("cerebral palsy",)]  # the row before
    assert medical_english("onderzoek naar cerebrale parese")[-1] == ("cerebral palsy",)
    assert medical_english("de ziekte van kahler") == [("multiple myeloma",)]
    assert medical_english("kusjesziekte") == [("infectious mononucleosis",)]
    assert ("clinical trials",) not in medical_english("zijn er klinische studies naar longkanker")
    # changed on purpose (thirty-seventh session): gastritis, NIDDK's page, before the summary
    assert medical_english("maagontsteking") == [("gastritis", "stomach disorders")]
    assert medical_english("de vallende ziekte") == [("epilepsy",)]
