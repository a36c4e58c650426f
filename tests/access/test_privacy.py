"""Questions without personal identifiers where they are stored (the answer, its trace, the
semantic cache) and where they leave the process (the LLM, the safety model); the hospital's
doctors stay findable by name."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
from django.test import Client

from core.privacy import identifiers_strip
from taxonomy.services import sample_hospital_load
from tests.chat_server import ChatServer
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.models import Answer, SemanticCacheEntry
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.privacy import question_deidentify, values_scrub
from zolsearch.search.services import search_answer

pytestmark = pytest.mark.django_db

PERSONAL = (
    "Ik ben Jan Peeters (rijksregisternummer 85.07.30-033.61), bel me op 0470 12 34 56. "
    "What are the symptoms of ABCD syndrome?"
)
VALUES = ("Peeters", "85.07.30-033.61", "0470 12 34 56")


def _post(question: str, **extra: object) -> dict:
    response = Client().post("/api/v1/search", data={"question": question, **extra}, content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_stored_question_and_trace_hold_no_identifiers(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a question with a name, an INSZ and a phone number WHEN it is asked through the API
    THEN the stored question has placeholders instead, neither the question nor the trace
    (reduced query included) nor the semantic cache entry contains any of the values, and the
    answer was still found from the medical part."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}  # an answer the cache keeps
    body = _post(PERSONAL, language="en")
    answer = Answer.objects.get(trace_id=uuid.UUID(body["trace_id"]))
    assert body["outcome"] == "answered" and "ABCD" in json.dumps(answer.citations)
    assert answer.question.startswith("Ik ben Jan [PERSON]") or "[PERSON]" in answer.question
    assert "[INSZ]" in answer.question and "[PHONE]" in answer.question
    assert "What are the symptoms of ABCD syndrome?" in answer.question
    stored = json.dumps({"question": answer.question, "trace": answer.trace}, ensure_ascii=False)
    assert not [value for value in VALUES if value in stored]
    assert "deidentify" in body["timings_ms"] and body["timings_ms"]["deidentify"] >= 0
    entry = SemanticCacheEntry.objects.order_by("-id").first()
    assert entry is not None and "[PHONE]" in entry.question
    assert not [value for value in VALUES if value in entry.question]


def test_a_doctors_name_is_kept_and_still_routes() -> None:
    """GIVEN the sample hospital, whose cardiologist is 'dr. Anna Demo' WHEN a patient asks where
    she works, with her title and without it (the stripper alone would take 'Anna Demo' for a
    patient's name) THEN the graph answers the titled question with her department, and both
    stored questions keep her name; a patient who only shares her surname ('mijn dochter Lotte
    Demo') is stripped, and a titled name the taxonomy does not know is kept by its title."""
    sample_hospital_load()
    titled = _post("Waar werkt dr. Anna Demo?", language="nl")
    assert titled["answer"].startswith("dr. Anna Demo werkt bij Cardiologie")
    assert Answer.objects.get(trace_id=uuid.UUID(titled["trace_id"])).question == "Waar werkt dr. Anna Demo?"

    question = "Waar werkt Anna Demo?"
    assert identifiers_strip(question)[0] == "Waar werkt [PERSON]?"  # without the taxonomy check
    untitled = _post(question, language="nl")
    assert Answer.objects.get(trace_id=uuid.UUID(untitled["trace_id"])).question == question
    assert question_deidentify(question).kept_doctors == ("Anna Demo",)
    relative = question_deidentify("Mijn dochter Lotte Demo heeft koorts, waar moet ze heen?")
    assert "Lotte" not in relative.text and relative.kinds == ("PERSON",)
    unknown = question_deidentify("Waar werkt dokter Janssens?")
    assert unknown.text == "Waar werkt dokter Janssens?" and unknown.kinds == ()


@pytest.fixture
def chat_server(settings) -> Iterator[ChatServer]:  # type: ignore[no-untyped-def]
    with ChatServer(lambda prompt: "ABCD syndrome is a genetic condition. [1]") as server:
        settings.LLM_MODEL, settings.LLM_BASE_URL = "local-chat-1", server.base_url
        settings.LLM_TIMEOUT_S, settings.LLM_MAX_RETRIES = 2.0, 0
        settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}
        yield server


def test_the_llm_reads_the_question_without_identifiers(chat_server: ChatServer) -> None:
    """GIVEN an LLM generator on a local OpenAI-compatible server WHEN a question with
    identifiers is answered THEN the prompt the server received has the placeholders and none
    of the values, and the answer is the LLM's."""
    _, answer = search_answer(request=SearchRequest(question=PERSONAL, language="en"), config=pipeline_config_default())
    assert answer.generator == "llm"
    prompt = chat_server.prompts()[-1]
    assert "[PHONE]" in prompt and "[INSZ]" in prompt and "ABCD syndrome" in prompt
    assert not [value for value in VALUES if value in prompt]


def test_the_safety_model_reads_the_question_without_identifiers(settings) -> None:  # type: ignore[no-untyped-def]
    with ChatServer(lambda prompt: "safe") as server:
        settings.GUARD_MODEL, settings.GUARD_BASE_URL, settings.GUARD_TIMEOUT_S = "guard-local", server.base_url, 2.0
        search_answer(request=SearchRequest(question=PERSONAL, language="en"), config=pipeline_config_default())
    assert server.prompts(), "the safety model was not asked"
    prompt = server.prompts()[0]
    assert "[PHONE]" in prompt and not [value for value in VALUES if value in prompt]


def test_values_are_scrubbed_from_nested_json_longest_first() -> None:
    trace = {"followup": {"resolved": "Lotte Peeters en Lotte, 0470 12 34 56"}, "n": 3, "list": ["Lotte"]}
    scrubbed = values_scrub(
        trace, values=("Lotte", "Lotte Peeters", "0470 12 34 56"), kinds=("PERSON", "PERSON", "PHONE")
    )
    assert scrubbed == {"followup": {"resolved": "[PERSON] en [PERSON], [PHONE]"}, "n": 3, "list": ["[PERSON]"]}
    assert values_scrub(trace, values=(), kinds=()) == trace
    assert values_scrub({"w": "Lottes"}, values=("Lotte",), kinds=("PERSON",)) == {"w": "Lottes"}  # whole words
