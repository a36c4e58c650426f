"""The offline local judge with the real embedding model (USE multilingual) on real MedQuAD text
from ``data/medquad-slice``, and the hand-labelled agreement file."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from django.conf import settings

from core.providers.embeddings import embedding_provider_get
from core.text import sentences_split
from evaluation.judges import judge_get
from evaluation.judges.base import JudgeInput
from evaluation.judges.local import CALIBRATIONS, LocalJudge, RelevancyCalibration
from ingestion.connectors import connector_get
from ingestion.connectors.base import DocumentRecord

AGREEMENT = Path(settings.BASE_DIR) / "data" / "golden" / "judge-agreement.jsonl"
FIELDS = {"id", "question", "context", "authoritative", "answer", "label_faithful", "label_relevant", "kind"}
CARDIOLOGY = (
    "Voor hartfalen kan u terecht bij: Cardiologie, Campus Noord (voorbeeld), tel. 012 34 56 01; "
    "artsen: dr. Anna Demo, dr. Bram Fictief."
)


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge(provider=embedding_provider_get("use-multilingual-v3"))


@pytest.fixture(scope="module")
def medquad() -> dict[str, DocumentRecord]:
    """QA pairs of a few slice files, by external id (``medquad:<source>:<doc>:<pid>``)."""
    slice_dir = Path(settings.BASE_DIR) / "data" / "medquad-slice"
    files = ["3_GHR_QA/0000055.xml", "5_NIDDK_QA/0000009.xml", "9_CDC_QA/0000053.xml", "9_CDC_QA/0000054.xml"]
    connector = connector_get("medquad")
    records = [r for f in files for r in connector.records(slice_dir / f) if isinstance(r, DocumentRecord)]
    return {r.external_id: r for r in records}


def _answer(record: DocumentRecord) -> str:
    return record.sections[0].text


def test_verbatim_answer_is_supported_by_its_own_sentences(judge: LocalJudge, medquad) -> None:
    """GIVEN the hypothyroidism passage and an answer copying its 1st and 3rd sentences, with
    citation markers WHEN judged THEN both sentences are supported, each by itself as evidence."""
    record = medquad["medquad:NIDDK:0000009:1"]
    sentences = sentences_split(_answer(record))
    answer = f"{sentences[0]} [1] {sentences[2]} [1]"
    verdict = judge.judge(JudgeInput(question=record.questions[0], answer=answer, context=(_answer(record),)))
    assert verdict.faithfulness == 1.0
    assert [e["sentence"] for e in verdict.evidence] == [sentences[0], sentences[2]]
    assert [e["support"] for e in verdict.evidence] == [sentences[0], sentences[2]]
    assert all(e["supported"] and not e["authoritative"] and e["score"] >= 0.99 for e in verdict.evidence)
    assert verdict.relevancy >= 0.5


def test_sentence_of_an_unrelated_document_is_not_supported(judge: LocalJudge, medquad) -> None:
    """GIVEN the androgen-insensitivity passage and an answer taken from the body-lice page
    THEN no sentence is supported and faithfulness is 0."""
    record = medquad["medquad:GHR:0000055:3"]
    foreign = sentences_split(_answer(medquad["medquad:CDC:0000053:1"]))[0]
    verdict = judge.judge(JudgeInput(question=record.questions[0], answer=foreign, context=(_answer(record),)))
    assert verdict.faithfulness == 0.0
    assert verdict.evidence[0]["supported"] is False
    assert verdict.evidence[0]["score"] < judge.support_threshold


def test_changed_number_and_inserted_negation_are_not_supported(judge: LocalJudge, medquad) -> None:
    """Embeddings see these as the same sentence; the number and negation checks do not."""
    record = medquad["medquad:NIDDK:0000009:1"]
    context = (_answer(record),)
    changed = "About 14.6 percent of the U.S. population age 12 and older has hypothyroidism."
    negated = "Without enough thyroid hormone, many of the bodys functions do not slow down."
    verdict = judge.judge(JudgeInput(question=record.questions[0], answer=f"{changed} {negated}", context=context))
    assert verdict.faithfulness == 0.0
    assert verdict.evidence[0]["mismatches"] == ["number"]
    assert verdict.evidence[1]["mismatches"] == ["negation"]
    assert verdict.evidence[0]["cosine"] > 0.8  # what an embedding-only judge would accept


def test_authoritative_line_supports_department_and_phone(judge: LocalJudge) -> None:
    """GIVEN no retrieved passage, only the hospital's taxonomy line WHEN the answer names the
    department and phone of that line THEN it is supported by the line (authoritative); a
    wrong phone number is not."""
    right = judge.judge(
        JudgeInput(
            question="Bij welke dienst kan ik terecht voor hartfalen?",
            answer="Voor hartfalen kan u terecht bij Cardiologie, tel. 012 34 56 01.",
            authoritative=(CARDIOLOGY,),
        )
    )
    assert right.faithfulness == 1.0
    assert right.evidence[0]["support"] == CARDIOLOGY
    assert right.evidence[0]["authoritative"] is True
    wrong = judge.judge(
        JudgeInput(
            question="Bij welke dienst kan ik terecht voor hartfalen?",
            answer="Voor hartfalen kan u terecht bij Cardiologie, tel. 012 34 56 07.",
            authoritative=(CARDIOLOGY,),
        )
    )
    assert wrong.faithfulness == 0.0
    assert wrong.evidence[0]["mismatches"] == ["number"]


def test_relevancy_higher_for_own_answer_than_rotated(judge: LocalJudge, medquad) -> None:
    """GIVEN four QA pairs of four different pages WHEN each question is judged with its own
    answer and with the next page's answer THEN its own scores higher and passes. The rotated
    one does not always fail: the hypothyroidism page for the androgen-insensitivity question
    (both about hormones) scores 0.78, a known weakness of a cosine-based relevancy."""
    ids = ["medquad:GHR:0000055:3", "medquad:NIDDK:0000009:1", "medquad:CDC:0000053:1", "medquad:CDC:0000054:13"]
    records = [medquad[i] for i in ids]
    for i, record in enumerate(records):
        other = records[(i + 1) % len(records)]
        own = judge.judge(JudgeInput(question=record.questions[0], answer=_answer(record), context=(_answer(record),)))
        rotated = judge.judge(
            JudgeInput(question=record.questions[0], answer=_answer(other), context=(_answer(other),))
        )
        assert own.relevancy > rotated.relevancy, record.external_id
        assert own.relevancy >= 0.5, record.external_id


def test_context_truncation_is_recorded_and_applied(medquad) -> None:
    """GIVEN a 40-token budget and a passage of ~100 tokens WHEN an answer quotes its LAST
    sentence THEN the verdict says truncated, counts ≤ 40 tokens, and the quote is unsupported
    because it was cut away."""
    record = medquad["medquad:NIDDK:0000009:1"]
    passage = _answer(record)
    last = sentences_split(passage)[-1]
    small = LocalJudge(provider=embedding_provider_get("use-multilingual-v3"), context_tokens=40)
    verdict = small.judge(JudgeInput(question=record.questions[0], answer=last, context=(passage,)))
    assert verdict.truncated is True
    assert 0 < verdict.context_tokens <= 40
    assert verdict.faithfulness == 0.0
    whole = LocalJudge(provider=embedding_provider_get("use-multilingual-v3"), context_tokens=3000)
    verdict = whole.judge(JudgeInput(question=record.questions[0], answer=last, context=(passage,)))
    assert verdict.truncated is False
    assert verdict.faithfulness == 1.0


def test_empty_answer_and_empty_context(judge: LocalJudge) -> None:
    for answer in ("", "   ", "[1] [2]"):
        verdict = judge.judge(JudgeInput(question="Wat is hartfalen?", answer=answer, context=("Iets.",)))
        assert (verdict.faithfulness, verdict.relevancy, verdict.evidence) == (0.0, 0.0, [])
        assert verdict.reasons["faithfulness"] == "empty answer"
    verdict = judge.judge(JudgeInput(question="Wat is hartfalen?", answer="Hartfalen is een aandoening van het hart."))
    assert verdict.faithfulness == 0.0
    assert "no context" in verdict.reasons["faithfulness"]
    assert verdict.evidence[0]["supported"] is False
    assert verdict.relevancy is not None and verdict.relevancy > 0


def test_same_input_gives_same_scores(judge: LocalJudge, medquad) -> None:
    record = medquad["medquad:CDC:0000054:13"]
    item = JudgeInput(
        question=record.questions[0],
        answer=" ".join(sentences_split(_answer(record))[:2]) + " Botulism is not caused by a toxin.",
        context=(_answer(record), _answer(medquad["medquad:CDC:0000053:1"])),
        authoritative=(CARDIOLOGY,),
    )
    first, second = judge.judge(item), judge.judge(item)
    assert first.evidence == second.evidence
    assert (first.faithfulness, first.relevancy) == (second.faithfulness, second.relevancy)


def test_key_settings_and_judge_get(settings) -> None:  # type: ignore[no-untyped-def]
    settings.JUDGE_MODEL = ""
    settings.EMBEDDING_MODEL = "use-multilingual-v3"
    settings.JUDGE_CONTEXT_TOKENS = 1234
    judge = judge_get()
    assert isinstance(judge, LocalJudge)
    assert judge.key == "local-v1:use-multilingual-v3"
    assert judge.context_tokens == 1234
    with pytest.raises(ValueError, match="no relevancy calibration"):
        LocalJudge(provider=embedding_provider_get("e5-small-q4"))
    settings.EMBEDDING_MODEL = "e5-small-q4"  # not calibrated: the judge stays on USE
    assert judge_get().key == "local-v1:use-multilingual-v3"


def test_relevancy_calibration_map() -> None:
    """Anchors map to 0, 0.5 and 1; linear in between; clipped outside."""
    calibration = RelevancyCalibration(unrelated=0.1, pass_line=0.3, related=0.5)
    assert calibration.score(0.1) == 0.0
    assert calibration.score(0.2) == pytest.approx(0.25)
    assert calibration.score(0.3) == 0.5
    assert calibration.score(0.4) == pytest.approx(0.75)
    assert calibration.score(0.5) == 1.0
    assert calibration.score(-1.0) == 0.0 and calibration.score(1.0) == 1.0
    use = CALIBRATIONS["use-multilingual-v3"]
    assert use.unrelated < use.pass_line < use.related


def test_agreement_file_parses_and_is_labelled() -> None:
    """Every line has the fields and binary labels; every kind is present with both labels;
    both classes occur for both labels; the tune half (even last digit) is at most half."""
    lines = [json.loads(line) for line in AGREEMENT.read_text().splitlines() if line.strip()]
    assert len(lines) >= 60
    assert len({line["id"] for line in lines}) == len(lines)
    labels: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for line in lines:
        assert set(line) >= FIELDS
        assert line["question"].strip() and line["answer"].strip()
        assert all(isinstance(p, str) and p.strip() for p in line["context"] + line["authoritative"])
        assert line["context"] or line["authoritative"]
        for label in ("label_faithful", "label_relevant"):
            assert line[label] in (0, 1)
            labels[line["kind"]][label].add(line[label])
        if line["kind"].startswith("taxonomy"):
            assert line["authoritative"]
    expected = {
        "extractive",
        "paraphrase",
        "foreign_sentence",
        "foreign_only",
        "negated",
        "number_changed",
        "other_question",
        "taxonomy_nl",
        "taxonomy_nl_wrong",
        "rivm_nl",
        "rivm_nl_unfaithful",
        "rivm_nl_other_question",
    }
    assert set(labels) == expected
    assert all(set(by_label) == {"label_faithful", "label_relevant"} for by_label in labels.values())
    assert {line["label_faithful"] for line in lines} == {0, 1}
    assert {line["label_relevant"] for line in lines} == {0, 1}
    tune = [line for line in lines if int(line["id"][-1]) % 2 == 0]
    assert 0 < len(tune) <= len(lines) / 2
