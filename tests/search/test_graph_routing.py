"""The graph as routing authority in served answers (pinned context, doctor lookup)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from ninja.testing import TestClient

from taxonomy.services import sample_hospital_load
from taxonomy.snomed import snomed_import
from zolsearch.api import api
from zolsearch.search.contract import Intent
from zolsearch.search.models import Answer
from zolsearch.search.selectors import answer_trace

pytestmark = pytest.mark.django_db
client = TestClient(api)
DATA = Path(__file__).resolve().parent.parent.parent / "data" / "snomed"


@pytest.fixture(autouse=True)
def hospital() -> None:
    snomed_import(path=DATA / "heartfailure-subset")
    sample_hospital_load()


@pytest.fixture
def fused_order(settings) -> None:  # type: ignore[no-untyped-def]
    """No reranker, hence no CRAG: these tests are about what the gate and the graph do with the
    retrieved text; on this small corpus CRAG would send the Dutch questions to the fallback
    before any draft is written (tests/search/test_corrective.py covers CRAG)."""
    settings.RERANKER = ""


def test_dutch_condition_question_gets_the_graph_line_first() -> None:
    """GIVEN the sample hospital WHEN a patient asks in Dutch where heart failure is treated
    THEN the answer opens with the department, campus, phone and doctors from the graph,
    cited [1] as taxonomy, whatever the retrieved text says, and the trace shows the route."""
    response = client.post("/search", json={"question": "Waar wordt hartfalen behandeld?", "language": "nl"})
    body = response.json()
    assert response.status_code == 200
    assert body["answer"].startswith(
        "Voor hartfalen kan u terecht bij: Cardiologie, Campus Noord (voorbeeld), tel. 012 34 56 01; "
        "artsen: dr. Anna Demo, dr. Bram Fictief. [1]"
    )
    first = body["citations"][0]
    assert first["n"] == 1 and first["source"] == "taxonomy" and first["url"].endswith("/afdelingen/cardiologie")
    assert all(c["source"] == "document" for c in body["citations"][1:])
    answer = Answer.objects.get(trace_id=uuid.UUID(body["trace_id"]))
    assert answer_trace(answer=answer).taxonomy.intent == Intent.CONDITION_OR_SYMPTOM
    assert "taxonomy" in answer.timings_ms


def test_snomed_synonym_routes_through_finding_site() -> None:
    """An English SNOMED term without an alias reaches cardiology through IS_A/FINDING_SITE."""
    response = client.post("/search", json={"question": "Acute left-sided heart failure", "language": "en"})
    body = response.json()
    assert body["answer"].startswith("For heart failure you can go to: Cardiology")
    trail = [
        e
        for e in answer_trace(answer=Answer.objects.get(trace_id=uuid.UUID(body["trace_id"]))).taxonomy.entities
        if e.slug == "cardiologie"
    ]
    assert trail and trail[0].trail[-1]["step"] in {"body_site", "alias"}


def test_doctor_lookup_answers_from_works_in() -> None:
    response = client.post("/search", json={"question": "Waar werkt dr. Anna Demo?", "language": "nl"})
    body = response.json()
    assert body["answer"].startswith(
        "dr. Anna Demo werkt bij Cardiologie, Campus Noord (voorbeeld), tel. 012 34 56 01. [1]"
    )
    assert body["citations"][0]["source"] == "taxonomy"


def test_graph_facts_lead_the_fallback_when_the_gate_refuses(settings, fused_order) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a gate nothing passes WHEN a condition question that is not about where to go is
    asked THEN the fallback (who can help) is led by the graph's routing line."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 1.01}
    body = client.post("/search", json={"question": "Wat zijn de symptomen van suikerziekte?", "language": "nl"}).json()
    assert body["outcome"] == "gate_rejected"
    assert body["answer"].startswith("Voor diabetes kan u terecht bij: Endocrinologie")
    assert "onthaal" in body["answer"]
    assert body["citations"][0]["source"] == "taxonomy"


@pytest.mark.parametrize(
    "question",
    ["Ik heb suikerziekte, waar moet ik heen?", "Bij welke dienst werkt dr. Eli Test?", "Where is diabetes treated?"],
)
def test_the_graph_answers_routing_questions_when_the_retrieved_text_is_rejected(
    settings, fused_order, question: str
) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a gate nothing passes WHEN a routing question (where to go, which department, a
    doctor lookup) is asked THEN the graph answers it alone: outcome answered, generator
    taxonomy, only taxonomy citations, no "cannot answer" text; the rejected draft and the gate's
    verdict stay on the Answer for review."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 1.01}
    body = client.post("/search", json={"question": question}).json()
    assert body["outcome"] == "answered" and body["generator"] == "taxonomy", body
    assert "Endocrinolog" in body["answer"] and "onthaal" not in body["answer"] and "cannot" not in body["answer"]
    assert body["citations"] and all(c["source"] == "taxonomy" for c in body["citations"])
    answer = Answer.objects.get(trace_id=uuid.UUID(body["trace_id"]))
    assert answer.gate["passed"] is False and not answer.gate_passed
    assert answer_trace(answer=answer).graph_answer.startswith("gate_rejected")
    assert answer_trace(answer=answer).taxonomy.routing_question


def test_retrieved_text_that_routes_elsewhere_is_left_out(fused_order) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a page that says heart failure is treated by Pneumologie (wrong for this hospital)
    WHEN asking where heart failure is treated THEN the answer routes to Cardiologie only: the
    page's sentence naming Pneumologie is dropped, and the trace says which names were excluded."""
    from core.providers.embeddings import embedding_provider_get
    from ingestion.connectors.base import DocumentRecord, Section
    from ingestion.models import Source
    from ingestion.services import documents_upsert

    source = Source.objects.create(key="site", name="Site", connector="jsonl")
    record = DocumentRecord(
        external_id="site:hartfalen",
        url="https://voorbeeld.ziekenhuis.test/hartfalen",
        title="Hartfalen",
        language="nl",
        sections=(
            Section(
                "",
                "Hartfalen wordt behandeld op de dienst Pneumologie. Bij hartfalen pompt het hart onvoldoende bloed rond.",
            ),
        ),
    )
    documents_upsert(source=source, records=[record], provider=embedding_provider_get())
    body = client.post(
        "/search", json={"question": "Waar wordt hartfalen behandeld?", "language": "nl", "sources": ["site"]}
    ).json()
    answer = Answer.objects.get(trace_id=uuid.UUID(body["trace_id"]))
    assert "pneumologie" in answer_trace(answer=answer).graph_excluded_departments
    assert "Pneumologie" not in (answer.trace.get("rejected_answer") or body["answer"])
    assert body["answer"].startswith("Voor hartfalen kan u terecht bij: Cardiologie")


def test_crag_skips_a_question_the_graph_answers(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the reranker and CRAG thresholds that call every retrieval incorrect
    WHEN a patient asks where heart failure is treated (the graph pins its routing line)
    THEN with ``crag_bypass_graph_facts`` (the default) CRAG is bypassed and the run goes on to the
    draft and the gate after the graph's line; without it CRAG stops the run and the graph's facts
    alone answer (no document is cited)."""
    from zolsearch.search.config import pipeline_config_default
    from zolsearch.search.pipeline import SearchRequest, pipeline_run

    settings.RERANKER = "features-lr"
    incorrect = pipeline_config_default().with_overrides(crag_enabled=True, crag_lower=0.999, crag_upper=0.9995)
    assert incorrect.crag_bypass_graph_facts

    def asked(config):  # type: ignore[no-untyped-def]
        return pipeline_run(
            request=SearchRequest(question="Waar wordt hartfalen behandeld?", language="nl"), config=config
        )

    bypassed = asked(incorrect)
    assert bypassed.pinned and bypassed.trace.retrieval.crag_action == "bypass"
    assert bypassed.trace.stop_stage != "crag" and bypassed.answer.startswith("Voor hartfalen kan u terecht bij")
    stopped = asked(incorrect.with_overrides(crag_bypass_graph_facts=False))
    assert stopped.pinned and stopped.trace.retrieval.crag_action == "incorrect"
    assert stopped.trace.stop_stage == "crag" and stopped.answer.startswith("Voor hartfalen kan u terecht bij")
    assert not [c for c in stopped.citations if c.source == "document"]


def test_a_department_named_only_in_the_story_makes_no_department_search() -> None:
    """GIVEN the sample hospital WHEN a message names a department only in the story before its
    question ("… op de cardiologie. Wat zijn de symptomen van …?") THEN the graph implies no
    department search (the classifier's intent is taken; the department's facts stay pinned);
    named in a question sentence (the first or a later one), with a routing cue ("waar") or an
    errand at the department ("afspraak"), or with the flag off, it does."""
    from taxonomy.resolver import text_resolve
    from zolsearch.search.config import MEASUREMENT_OVERRIDES, pipeline_config_default
    from zolsearch.search.pipeline import SearchRequest, pipeline_run
    from zolsearch.search.stages.taxonomy import named_in_story_only

    story = "Mijn vader lag vorige week op de cardiologie voor een onderzoek. Wat zijn de symptomen van jicht?"
    resolution = text_resolve(text=story, language="nl", with_terms=False)
    assert [r.entity.slug for r in resolution.of_type("department")] == ["cardiologie"]
    assert named_in_story_only(question=story, resolution=resolution)
    asked = "Mijn vader heeft jicht. Wat doet de cardiologie daarvoor?"
    assert not named_in_story_only(question=asked, resolution=text_resolve(text=asked, language="nl", with_terms=False))
    for kept in (
        "Mijn vader lag op de cardiologie. Waar kan ik parkeren?",  # a routing cue
        "Ik wil een afspraak bij cardiologie. Hoe doe ik dat?",  # an errand at the department
        "Mijn vader lag op de cardiologie. Is jicht erg? Heeft de cardiologie een eigen ingang?",  # a later question
    ):
        assert not named_in_story_only(
            question=kept, resolution=text_resolve(text=kept, language="nl", with_terms=False)
        ), kept
    config = pipeline_config_default().with_overrides(**MEASUREMENT_OVERRIDES)
    state = pipeline_run(request=SearchRequest(question=story, language="nl"), config=config)
    assert state.intent != Intent.DEPARTMENT_SEARCH and state.pinned
    off = pipeline_run(
        request=SearchRequest(question=story, language="nl"),
        config=config.with_overrides(department_intent_needs_question=False),
    )
    assert off.intent == Intent.DEPARTMENT_SEARCH
