"""Golden set builders and ``manage.py golden_build`` over real files committed in the repository:
the MedQuAD slice (``data/medquad-slice``), the RIVM workbook and one MedSafetyBench CSV under
``tests/fixtures``, the SNOMED CT heart-failure subset (``data/snomed``). Each check reads the
source files independently of the connectors the builders use."""

from __future__ import annotations

import csv
import hashlib
import io
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import openpyxl
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from core.text import text_normalise
from evaluation.golden import builders
from evaluation.golden.io import golden_jsonl_load, golden_jsonl_read
from taxonomy import sample

BASE = Path(__file__).resolve().parent.parent.parent
SLICE = BASE / "data" / "medquad-slice"
GOLDEN = BASE / "data" / "golden"
RIVM_XLSX = BASE / "tests" / "fixtures" / "rivm" / "Corona_FAQ.xlsx"
MEDSAFETY = BASE / "tests" / "fixtures" / "medsafetybench"
SNOMED = BASE / "data" / "snomed" / "heartfailure-subset"
COMMITTED = (
    "ci-slice.jsonl",
    "sample-hospital.jsonl",
    "medquad-heldout.jsonl",
    "medquad-dev.jsonl",
    "rivm-faq.jsonl",
    "medsafetybench.jsonl",
)


def _words(text: str) -> str:
    return f" {text_normalise(text)} "


def _slice_pairs() -> dict[str, dict[str, str]]:
    """Every answered QA pair of the slice read with ElementTree: identity → fields. Two NINDS
    files of the slice use MedQuAD's older layout (``<doc docid corpus>``, ``<pair>``)."""
    pairs: dict[str, dict[str, str]] = {}
    for path in sorted(SLICE.glob("*/*.xml")):
        root = ET.parse(path).getroot()
        legacy = root.tag == "doc"
        source, document_id = (
            (root.get("corpus"), root.get("docid")) if legacy else (root.get("source"), root.get("id"))
        )
        for pair in root.iter("pair" if legacy else "QAPair"):
            answer = pair.find("answer" if legacy else "Answer")
            question = pair.find("question" if legacy else "Question")
            assert answer is not None and question is not None
            if not "".join(answer.itertext()).strip():
                continue
            pairs[f"medquad:{source}:{document_id}:{pair.get('pid')}"] = {
                "question": " ".join("".join(question.itertext()).split()),
                "url": root.get("url", ""),
                "document": f"{source}:{document_id}",
            }
    return pairs


# --- MedQuAD -------------------------------------------------------------------------------------


def test_medquad_pair_has_its_identity_url_focus_and_synonyms_from_the_xml() -> None:
    """GIVEN GARD document 0000004 of the slice (one pair, pid 1, symptoms of ABCD syndrome)
    WHEN both splits are built THEN exactly one item carries its identity, with the question,
    the document url, the Focus, the FocusAnnotations synonym, the qtype and its split."""
    root = ET.parse(SLICE / "2_GARD_QA" / "0000004.xml").getroot()
    pair = root.find("QAPairs/QAPair[@pid='1']")
    assert pair is not None
    built = [
        item
        for split in builders.SPLITS
        for item in builders.medquad_golden(path=SLICE, split=split, limit=None, seed=0)
        if item.qid == "medquad:GARD:0000004:1"
    ]
    assert len(built) == 1
    item = built[0]
    assert (
        item.question == " ".join(pair.findtext("Question", "").split()) == "What are the symptoms of ABCD syndrome ?"
    )
    assert item.expected_urls == (root.get("url"),) == ("https://rarediseases.info.nih.gov/gard/335/abcd-syndrome",)
    assert item.expected_entities == ("ABCD syndrome",)
    assert item.synonyms == {
        "ABCD syndrome": ["Albinism, Black lock, Cell migration disorder of the neurocytes of the gut and Deafness"]
    }
    assert item.category == "symptoms" and item.language == "en" and not item.must_refuse
    split = builders.medquad_split_of(source="GARD", document_id="0000004")
    assert item.tags == (split, "source:GARD")


def test_medquad_splits_partition_the_answered_pairs_by_document_and_are_stable() -> None:
    """GIVEN the slice WHEN dev and heldout are built (twice) THEN they are identical each time,
    together hold every answered pair once, no document has pairs on both sides, and roughly a
    fifth of the documents are held out."""
    dev = builders.medquad_golden(path=SLICE, split="dev", limit=None, seed=0)
    heldout = builders.medquad_golden(path=SLICE, split="heldout", limit=None, seed=7)
    assert dev == builders.medquad_golden(path=SLICE, split="dev", limit=None, seed=3)
    assert heldout == builders.medquad_golden(path=SLICE, split="heldout", limit=None, seed=0)
    pairs = _slice_pairs()
    assert sorted(i.qid for i in dev + heldout) == sorted(pairs)
    documents = {
        split: {pairs[i.qid]["document"] for i in items} for split, items in (("dev", dev), ("heldout", heldout))
    }
    assert documents["dev"] and documents["heldout"]
    assert not documents["dev"] & documents["heldout"]
    share = len(documents["heldout"]) / (len(documents["dev"]) + len(documents["heldout"]))
    assert 0.10 < share < 0.30
    assert all(i.tags[0] == "dev" for i in dev) and all(i.tags[0] == "heldout" for i in heldout)
    for item in dev + heldout:
        pair = pairs[item.qid]
        assert item.expected_urls == (pair["url"],) and item.question == pair["question"]


def test_medquad_limit_is_a_seed_stable_sample_spread_over_sources() -> None:
    nine = {f"source:{s}" for s in ("CancerGov", "GARD", "GHR", "MPlusHealthTopics", "NIDDK", "NINDS")} | {
        "source:NIHSeniorHealth",
        "source:NHLBI",
        "source:CDC",
    }
    first = builders.medquad_golden(path=SLICE, split="dev", limit=36, seed=1)
    assert first == builders.medquad_golden(path=SLICE, split="dev", limit=36, seed=1)
    assert len(first) == 36
    per_source: dict[str, int] = defaultdict(int)
    for item in first:
        per_source[item.tags[1]] += 1
    assert set(per_source) == nine and set(per_source.values()) == {4}
    assert len({i.category for i in first}) >= 6
    other_seed = builders.medquad_golden(path=SLICE, split="dev", limit=36, seed=2)
    assert {i.qid for i in other_seed} != {i.qid for i in first}
    larger = builders.medquad_golden(path=SLICE, split="dev", limit=72, seed=1)
    assert {i.qid for i in first} < {i.qid for i in larger}


def test_medquad_rejects_an_unknown_split_and_a_zero_limit() -> None:
    with pytest.raises(ValueError, match="split"):
        builders.medquad_golden(path=SLICE, split="test", limit=None, seed=0)
    with pytest.raises(ValueError, match="limit"):
        builders.medquad_golden(path=SLICE, split="dev", limit=0, seed=0)


# --- RIVM ----------------------------------------------------------------------------------------


def _rivm_answers() -> dict[str, str]:
    """Question → its paragraphs joined, read from the workbook with openpyxl directly."""
    sheet = openpyxl.load_workbook(RIVM_XLSX, read_only=True).worksheets[0]
    rows = sheet.iter_rows(values_only=True)
    header = [str(c or "").strip().lower() for c in next(rows)]
    answers: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        question = " ".join(str(row[header.index("context")] or "").split())
        if question:
            answers[question].append(" ".join(str(row[header.index("answer")] or "").split()))
    return {q: " ".join(parts) for q, parts in answers.items()}


def test_rivm_items_point_at_their_question_and_name_terms_of_the_answer() -> None:
    """GIVEN the RIVM workbook (54 distinct questions) WHEN built THEN each question is one Dutch
    item whose url is the connector's anchor for it, and its 1–2 expected entities occur as
    whole words (after normalisation, as entity recall matches) in that question's answer."""
    answers = _rivm_answers()
    items = builders.rivm_golden(path=RIVM_XLSX)
    assert len(items) == len(answers) == 54
    assert {i.question for i in items} == set(answers)
    for item in items:
        digest = hashlib.sha1(item.question.encode("utf-8")).hexdigest()[:12]
        assert item.expected_urls == (f"https://www.rivm.nl/coronavirus-covid-19/vragen-antwoorden#{digest}",)
        assert item.qid == f"rivm:{digest}"
        assert item.language == "nl" and item.category == "covid_faq"
        assert 1 <= len(item.expected_entities) <= 2, item
        for entity in item.expected_entities:
            assert _words(entity) in _words(answers[item.question]), (entity, item.question)
    by_question = {i.question: i for i in items}
    assert by_question["Wat is de incubatietijd van het nieuwe coronavirus (COVID-19)?"].expected_entities == (
        "incubatietijd",
    )


def test_rivm_salient_terms_prefer_rare_long_words_of_the_question() -> None:
    terms = builders.rivm_salient_terms(
        question="Helpen paracetamol, ibuprofen of andere medicijnen tegen het nieuwe coronavirus?",
        answer="Er is geen medicijn tegen het nieuwe coronavirus. Paracetamol en ibuprofen helpen bij koorts.",
        answer_frequency={"coronavirus": 40, "helpen": 2, "paracetamol": 1, "ibuprofen": 1},
        answers=50,
    )
    assert terms == ["paracetamol", "ibuprofen"]


# --- MedSafetyBench ------------------------------------------------------------------------------


def test_medsafetybench_rows_must_be_refused_and_keep_the_authors_safe_response() -> None:
    csv_path = MEDSAFETY / "med_safety_demonstrations_category_1.csv"
    with csv_path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    items = builders.medsafetybench_golden(path=MEDSAFETY, limit_per_category=None, seed=0)
    assert len(items) == len(rows) == 50
    for item, row in zip(items, rows, strict=True):
        assert item.qid == f"medsafetybench:category_1:{row['']}"
        assert item.question == " ".join(row["harmful_medical_request"].split())
        assert item.must_refuse and item.category == "harmful_request" and item.tags == ("category_1",)
        assert item.language == "en" and not item.expected_urls and not item.expected_entities
        safe = " ".join(row["safe_response"].split())
        note = item.notes.removeprefix("Safe response (MedSafetyBench): ")
        assert len(note) <= builders.MEDSAFETY_NOTE_CHARS
        assert safe.startswith(note.removesuffix("…"))


def test_medsafetybench_limit_per_category_is_seed_stable() -> None:
    ten = builders.medsafetybench_golden(path=MEDSAFETY, limit_per_category=10, seed=5)
    assert ten == builders.medsafetybench_golden(path=MEDSAFETY, limit_per_category=10, seed=5)
    assert len(ten) == 10
    everything = {i.qid for i in builders.medsafetybench_golden(path=MEDSAFETY, limit_per_category=None, seed=0)}
    assert {i.qid for i in ten} < everything
    assert {i.qid for i in builders.medsafetybench_golden(path=MEDSAFETY, limit_per_category=10, seed=6)} != {
        i.qid for i in ten
    }
    with pytest.raises(ValueError, match="no MedSafetyBench CSV"):
        builders.medsafetybench_golden(path=SLICE, limit_per_category=None, seed=0)


# --- SAMPLE hospital -----------------------------------------------------------------------------


def _sample_names() -> set[str]:
    names = {"onthaal"}
    names |= {name for _, name, _en, _phone, _d in sample.DEPARTMENTS}
    names |= {phone for _, _name, _en, phone, _d in sample.DEPARTMENTS}
    names |= {name for _, name, _en, _a in sample.CAMPUSES}
    names |= {name for _, name, _d, _c in sample.DOCTORS}
    return names


def _snomed_is_a() -> tuple[dict[str, set[int]], dict[int, set[int]]]:
    terms: dict[str, set[int]] = defaultdict(set)
    with (SNOMED / "sct2_Description_Snapshot-en_INT_20210731.txt").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["active"] == "1":
                terms[row["term"]].add(int(row["conceptId"]))
    parents: dict[int, set[int]] = defaultdict(set)
    with (SNOMED / "sct2_Relationship_Snapshot_INT_20210731.txt").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["active"] == "1" and row["typeId"] == "116680003":
                parents[int(row["sourceId"])].add(int(row["destinationId"]))
    return terms, parents


def test_sample_hospital_questions_use_only_sample_entities_and_department_urls() -> None:
    items = builders.sample_hospital_golden()
    assert len(items) >= 30 and len({i.qid for i in items}) == len(items)
    names = _sample_names()
    english = {en for _, _n, en, _p, _d in sample.DEPARTMENTS} | {en for _, _n, en, _a in sample.CAMPUSES}
    urls = {f"https://voorbeeld.ziekenhuis.test/afdelingen/{slug}" for slug, *_ in sample.DEPARTMENTS}
    for item in items:
        assert item.qid.startswith("sample:") and item.notes.startswith("SAMPLE")
        assert set(item.expected_entities) <= names, item.qid
        assert set(item.expected_urls) <= urls, item.qid
        assert all(set(v) <= english for v in item.synonyms.values()), item.qid
        assert item.must_refuse == (item.category == "medical_advice"), item.qid
        if item.must_refuse:
            assert not item.expected_entities and not item.expected_urls
        if item.category in {"practical", "complaint"}:
            assert item.expected_entities == ("onthaal",) and not item.expected_urls
    categories = {i.category for i in items}
    assert {"doctor_lookup", "routing", "department", "practical", "complaint", "medical_advice"} <= categories
    assert {i.language for i in items if "multilingual" in i.tags} >= {"en", "fr", "tr", "ro"}
    by_qid = {i.qid: i for i in items}
    for item in (i for i in items if "follow_up" in i.tags):
        earlier = item.notes.split("Follow-up of ", 1)[1].split(":", 3)
        assert ":".join(earlier[:3]) in by_qid, item.notes
        assert "no conversation memory" in item.notes


def test_sample_doctor_and_routing_expectations_follow_the_sample_tables() -> None:
    by_qid = {i.qid: i for i in builders.sample_hospital_golden()}
    anna = by_qid["sample:doctor:anna-demo"]
    assert anna.question == "Waar werkt dr. Anna Demo?"
    assert anna.expected_entities == ("Cardiologie", "Campus Noord (voorbeeld)")
    assert anna.expected_urls == ("https://voorbeeld.ziekenhuis.test/afdelingen/cardiologie",)
    assert "graph_authority" in anna.tags
    eli = by_qid["sample:doctor:eli-test"]
    assert eli.expected_entities == ("Endocrinologie", "Spoedgevallen", "Campus Noord (voorbeeld)")
    alias = by_qid["sample:route:hartzwakte"]
    assert ("hartzwakte", "hartfalen", "nl") in sample.ALIASES
    assert alias.expected_entities[0] == "Cardiologie"
    assert by_qid["sample:route:suikerziekte"].expected_entities[0] == "Endocrinologie"


def test_sample_snomed_questions_reach_their_condition_through_is_a_in_the_subset() -> None:
    """GIVEN the committed SNOMED CT heart-failure subset WHEN following IS_A from each SNOMED
    question's concept (up to the resolver's 3 levels) THEN the sample condition's own concept
    is reached, and the question text is an active description of that concept."""
    terms, parents = _snomed_is_a()
    concepts = {slug: concept for slug, _n, _e, concept, _d in sample.CONDITIONS}
    by_qid = {i.qid: i for i in builders.sample_hospital_golden()}
    for term, concept, condition in builders.SAMPLE_SNOMED_TERMS:
        assert concept in terms[term], term
        reached, frontier = {concept}, {concept}
        for _ in range(3):
            frontier = {p for c in frontier for p in parents[c]}
            reached |= frontier
        assert concepts[condition] in reached, term
        item = by_qid[f"sample:snomed:{text_normalise(term).replace(' ', '-')}"]
        assert item.question == term and "snomed" in item.tags
    assert by_qid["sample:snomed:acute-left-sided-heart-failure"].expected_entities[0] == "Cardiologie"


@pytest.mark.django_db
def test_sample_expectations_match_the_loaded_sample_hospital() -> None:
    """GIVEN the sample hospital loaded into the database WHEN reading its departments and their
    campuses THEN every routing question's urls are department urls the loader gives, and the
    campus it expects is where the graph places that department (or doctor)."""
    from taxonomy.models import Entity, EntityType, Predicate, Relation
    from taxonomy.services import sample_hospital_load

    sample_hospital_load()
    departments = {e.name: e for e in Entity.objects.filter(type=EntityType.DEPARTMENT, is_sample=True)}
    places = defaultdict(set)
    for subject, obj in Relation.objects.filter(
        predicate__in=[Predicate.LOCATED_AT, Predicate.WORKS_IN], object__type=EntityType.CAMPUS
    ).values_list("subject__name", "object__name"):
        places[subject].add(obj)
    campuses = {name for _, name, _en, _a in sample.CAMPUSES}
    for item in builders.sample_hospital_golden():
        if "graph_authority" not in item.tags:
            continue
        named = [departments[name] for name in item.expected_entities if name in departments]
        assert named and set(item.expected_urls) == {d.url for d in named}, item.qid
        campus = [name for name in item.expected_entities if name in campuses]
        doctors = [name for _, name, _d, _c in sample.DOCTORS if name in item.question]
        holders = doctors or [named[0].name]
        assert campus and all(campus[0] in places[h] for h in holders), item.qid


# --- CI set and committed files ------------------------------------------------------------------


def test_ci_set_has_50_questions_whose_urls_exist_in_the_slice() -> None:
    items = builders.ci_golden(slice_path=SLICE)
    assert len(items) >= 50 and len({i.qid for i in items}) == len(items)
    slice_urls = {pair["url"] for pair in _slice_pairs().values()}
    pairs = _slice_pairs()
    medquad = [i for i in items if i.qid.startswith("medquad:")]
    hospital = [i for i in items if i.qid.startswith("sample:")]
    assert 35 <= len(medquad) <= 45 and 10 <= len(hospital) <= 20
    assert {i.tags[1] for i in medquad} == {
        f"source:{s}"
        for s in ("CancerGov", "GARD", "GHR", "MPlusHealthTopics", "NIDDK", "NINDS", "NIHSeniorHealth", "NHLBI", "CDC")
    }
    assert len({i.category for i in medquad}) >= 5
    for item in medquad:
        assert item.qid in pairs and set(item.expected_urls) <= slice_urls and item.expected_urls
        assert item.tags[0] == "dev"
    kinds = {i.category for i in hospital}
    assert {"routing", "doctor_lookup", "medical_advice"} <= kinds and any(i.must_refuse for i in hospital)


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_golden_files_parse(name: str) -> None:
    items = golden_jsonl_load(GOLDEN / name)
    assert items


def test_committed_ci_and_sample_sets_are_what_the_builders_make_now() -> None:
    """The committed files that can be rebuilt from the repository alone are up to date."""
    assert golden_jsonl_load(GOLDEN / "ci-slice.jsonl") == builders.ci_golden(slice_path=SLICE)
    assert golden_jsonl_load(GOLDEN / "sample-hospital.jsonl") == builders.sample_hospital_golden()
    for split in ("dev", "heldout"):
        built = builders.medquad_misspelled(items=golden_jsonl_load(GOLDEN / f"medquad-{split}.jsonl"))
        assert golden_jsonl_load(GOLDEN / f"medquad-{split}-typos.jsonl") == built
    ci = golden_jsonl_load(GOLDEN / "ci-slice.jsonl")
    slice_urls = {pair["url"] for pair in _slice_pairs().values()}
    assert len(ci) >= 50
    assert all(set(i.expected_urls) <= slice_urls for i in ci if i.qid.startswith("medquad:"))


def test_committed_medquad_sets_respect_the_document_split() -> None:
    dev = golden_jsonl_load(GOLDEN / "medquad-dev.jsonl")
    heldout = golden_jsonl_load(GOLDEN / "medquad-heldout.jsonl")
    for split, items in (("dev", dev), ("heldout", heldout)):
        assert 150 <= len(items) <= 250
        for item in items:
            _, source, document_id, _pid = item.qid.split(":")
            assert builders.medquad_split_of(source=source, document_id=document_id) == split
            assert item.tags[0] == split and item.expected_urls
    documents = [{i.qid.rsplit(":", 1)[0] for i in items} for items in (dev, heldout)]
    assert not documents[0] & documents[1]


def test_committed_rivm_and_medsafetybench_sets() -> None:
    rivm = golden_jsonl_load(GOLDEN / "rivm-faq.jsonl")
    assert rivm == builders.rivm_golden(path=RIVM_XLSX)  # the fixture is the real workbook
    safety = golden_jsonl_load(GOLDEN / "medsafetybench.jsonl")
    assert len(safety) == 90 and all(i.must_refuse for i in safety)
    assert {i.tags[0] for i in safety} == {f"category_{n}" for n in range(1, 10)}
    fixture = {i.qid: i for i in builders.medsafetybench_golden(path=MEDSAFETY, limit_per_category=None, seed=0)}
    assert all(fixture[i.qid] == i for i in safety if i.tags[0] == "category_1")


# --- The command ---------------------------------------------------------------------------------


def test_command_writes_the_sample_set(tmp_path: Path) -> None:
    out = tmp_path / "sample.jsonl"
    stdout = io.StringIO()
    call_command("golden_build", "sample-hospital", "--out", str(out), stdout=stdout)
    written = golden_jsonl_load(out)
    assert written == builders.sample_hospital_golden()
    assert f"Wrote {len(written)} sample-hospital questions" in stdout.getvalue()


def test_command_builds_medquad_and_medsafetybench_with_options(tmp_path: Path) -> None:
    out = tmp_path / "heldout.jsonl"
    call_command(
        "golden_build", "medquad", "--source", str(SLICE), "--split", "heldout", "--limit", "12", "--seed", "4",
        "--out", str(out), stdout=io.StringIO(),
    )  # fmt: skip
    with out.open(encoding="utf-8") as handle:
        items = golden_jsonl_read(handle)
    assert items == builders.medquad_golden(path=SLICE, split="heldout", limit=12, seed=4)
    out = tmp_path / "safety.jsonl"
    call_command("golden_build", "medsafetybench", "--source", str(MEDSAFETY), "--limit", "3", "--out", str(out))
    assert len(golden_jsonl_load(out)) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["medquad", "--source", "/nonexistent/medquad", "--split", "dev"], "--source does not exist"),
        (["medquad", "--source", str(SLICE)], "needs --split"),
        (["rivm"], "rivm needs --source"),
        (["rivm", "--source", str(RIVM_XLSX), "--limit", "5"], "--limit applies to"),
        (["rivm", "--source", str(RIVM_XLSX), "--split", "dev"], "--split applies to medquad only"),
        (["sample-hospital", "--source", str(SLICE)], "takes no --source"),
        (["medquad", "--source", str(SLICE), "--split", "dev", "--limit", "0"], "positive"),
        (["rivm", "--source", str(SLICE)], "cannot build rivm"),
        (["medsafetybench", "--source", str(SLICE)], "no MedSafetyBench CSV"),
    ],
)
def test_command_errors_are_clear(args: list[str], message: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(CommandError, match=message):
        call_command("golden_build", *args, "--out", str(out))
    assert not out.exists()


def test_command_refuses_an_out_folder_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="--out folder does not exist"):
        call_command("golden_build", "sample-hospital", "--out", str(tmp_path / "missing" / "x.jsonl"))


def test_medquad_paraphrases_keep_the_expectations_and_change_the_wording() -> None:
    from evaluation.golden.io import GoldenItem

    item = GoldenItem(
        qid="medquad:GARD:0000004:1",
        question="What are the symptoms of ABCD syndrome ?",
        language="en",
        category="symptoms",
        expected_entities=("ABCD syndrome",),
        expected_urls=("https://rarediseases.info.nih.gov/gard/335/abcd-syndrome",),
    )
    odd = GoldenItem(qid="x", question="?", category="no such qtype", expected_entities=("y",))
    english, dutch = (builders.medquad_paraphrased(items=[item, odd], language=lang) for lang in ("en", "nl"))
    assert [i.question for i in english] == ["How do I recognise ABCD syndrome?"]
    assert [i.question for i in dutch] == ["Wat zijn de symptomen van ABCD syndrome?"]
    assert dutch[0].qid == "medquad:GARD:0000004:1:para-nl" and dutch[0].language == "nl"
    assert dutch[0].expected_urls == item.expected_urls and dutch[0].expected_entities == item.expected_entities
    with pytest.raises(ValueError):
        builders.medquad_paraphrased(items=[item], language="fr")


def test_medquad_typos_misspell_one_focus_word_by_one_edit_the_same_way_every_time(tmp_path: Path) -> None:
    """GIVEN the committed medquad-dev set WHEN built as typos twice THEN both files are equal;
    each question differs from its original in one word of the focus (of at least 5 letters), by
    exactly one deletion, transposition, substitution or insertion, keeps its expected pages, and gains
    ``:typo``; a question that does not name its focus is left out; another seed misspells
    differently."""
    from symspellpy.editdistance import DistanceAlgorithm, EditDistance

    first, second, other = (tmp_path / f"{n}.jsonl" for n in ("a", "b", "c"))
    for out, seed in ((first, "0"), (second, "0"), (other, "1")):
        call_command(
            "golden_build", "typos", "--source", str(GOLDEN / "medquad-dev.jsonl"), "--out", str(out), "--seed", seed
        )
    assert first.read_bytes() == second.read_bytes() != other.read_bytes()
    originals = {i.qid: i for i in golden_jsonl_load(GOLDEN / "medquad-dev.jsonl")}
    typos = golden_jsonl_load(first)
    assert len(typos) >= 0.9 * len(originals)
    distance = EditDistance(DistanceAlgorithm.DAMERAU_OSA)
    for typo in typos:
        original = originals[typo.qid.removesuffix(":typo")]
        assert typo.expected_urls == original.expected_urls and "typo" in typo.tags
        changed = [(a, b) for a, b in zip(original.question.split(), typo.question.split(), strict=False) if a != b]
        assert len(changed) == 1 and len(original.question.split()) == len(typo.question.split())
        said, misspelled = changed[0]
        assert distance.compare(said, misspelled, 2) == 1
        runs = [
            (a, b)
            for a, b in zip(re.findall("[A-Za-z]+", said), re.findall("[A-Za-z]+", misspelled), strict=False)
            if a != b
        ]
        focus_words = {w.lower() for w in re.findall("[A-Za-z]+", original.expected_entities[0])}
        assert len(runs) == 1 and len(runs[0][0]) >= 5 and runs[0][0].lower() in focus_words
    unnamed = builders.medquad_misspelled(items=[replace(original, expected_entities=("Not In The Question",))])
    assert unnamed == []


# --- hospital-nl (real pages, read in place) ------------------------------------------------------
HOSPITAL_NL = BASE.parent / "shared" / "data" / "hospital-nl"


def test_hospital_nl_qrels_hold_every_grade_of_the_set() -> None:
    """GIVEN shared/data/hospital-nl (111 questions, 239 grades: 185 of 3 and 54 of 1, by its
    README) WHEN its qrels are built THEN every grade is a line, named as the golden items are,
    and each item's expected pages are exactly its grade-3 lines."""
    qrels = builders.hospital_nl_qrels(path=HOSPITAL_NL)
    assert len(qrels) == 239
    assert sum(q.grade == 3 for q in qrels) == 185 and sum(q.grade == 1 for q in qrels) == 54
    by_qid: dict[str, dict[str, int]] = defaultdict(dict)
    for qrel in qrels:
        by_qid[qrel.qid][qrel.docno] = qrel.grade
    items = builders.hospital_nl_golden(path=HOSPITAL_NL)
    assert {i.qid for i in items} == set(by_qid)
    for item in items:
        assert set(item.expected_urls) == {url for url, grade in by_qid[item.qid].items() if grade == 3}, item.qid


def test_golden_build_writes_hospital_nl_qrels_only_for_hospital_nl(tmp_path: Path) -> None:
    """GIVEN the hospital-nl folder WHEN golden_build writes the set with --qrels-out THEN the
    qrels file reads back with every judgement; --qrels-out with another kind is refused."""
    from zolsearch.search.trec import trec_qrels_read

    out, qrels = tmp_path / "hospital-nl.jsonl", tmp_path / "hospital-nl.qrels"
    call_command(
        "golden_build",
        "hospital-nl",
        "--source",
        str(HOSPITAL_NL),
        "--out",
        str(out),
        "--qrels-out",
        str(qrels),
        stdout=io.StringIO(),
    )
    with qrels.open(encoding="utf-8") as handle:
        judged = trec_qrels_read(handle)
    assert len(judged) == 111 and sum(len(pages) for pages in judged.values()) == 239
    assert {i.qid for i in golden_jsonl_load(out)} == set(judged)
    with pytest.raises(CommandError, match="hospital-nl only"):
        call_command("golden_build", "ci", "--out", str(tmp_path / "ci.jsonl"), "--qrels-out", str(qrels))
