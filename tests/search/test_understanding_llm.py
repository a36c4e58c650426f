"""Query understanding by a chat model, through the real ``openai`` client against a local HTTP
server speaking the OpenAI chat-completions protocol (no generative model ships in an
installable package: the server classifies the message it is sent by a few rules, so its reply
depends on the input as a real model's would). Validation of the reply, the fallback to the
offline classifiers and the de-identification of what the model reads are exercised over real
sockets."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from tests.chat_server import HTTP_500, SLOW, WRONG_SHAPE, ChatServer
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import SearchRequest, pipeline_run
from zolsearch.search.understanding_llm import UnderstandingUnavailable, understanding_parse

pytestmark = pytest.mark.django_db

MODEL = "local-understand-1"
LONG = (
    "Hallo, mijn vader is 70 en heeft al maanden last van zijn hart en is vaak moe. "
    "Welke behandelingen zijn er voor hartfalen? Bel me op 0470 12 34 56."
)


def _rules_reply(prompt: str) -> str:
    """The local model: parking words → practical information; otherwise a condition question
    whose type is "treatment" when it says "behandeling" (else "information"), with the words
    after "voor" up to the "?" as its reduced query."""
    message = re.search(r"Message: (.*)", prompt, re.DOTALL)
    text = message.group(1) if message else ""
    if re.search(r"\bparke", text, re.IGNORECASE):
        reply = {"intent_probabilities": {"practical_info": 8, "department_search": 2}, "qtype": "none"}
    else:
        asked = re.search(r"voor ([^?]+)\?", text)
        reply = {
            "intent_probabilities": {"treatment": 0.7, "condition_or_symptom": 0.2, "medical_advice_request": 0.1},
            "qtype": "treatment" if "behandeling" in text else "information",
            "qtype_confidence": 0.9,
            "reduced": f"behandelingen {asked.group(1)}" if asked else "",
        }
    return "```json\n" + json.dumps(reply) + "\n```"


@pytest.fixture
def chat_server(settings) -> Iterator[ChatServer]:  # type: ignore[no-untyped-def]
    with ChatServer(_rules_reply, slow_s=3.0) as server:
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_MODEL = ""  # the answer stays extractive: these tests are about understanding
        settings.UNDERSTANDING_LLM_MODEL = MODEL
        settings.UNDERSTANDING_LLM_TIMEOUT_S = 1.0
        settings.UNDERSTANDING_LLM_MAX_RETRIES = 1
        yield server


def test_the_reply_is_read_into_the_offline_schema() -> None:
    """GIVEN replies of a chat model WHEN parsed THEN the intent is the most probable after
    renormalisation, the type and its clamped confidence are kept, a reduced query only for a
    long message; anything outside the schema raises, naming what is wrong."""
    reply = '{"intent_probabilities": {"practical_info": 3, "complaint": 1}, "qtype": "none", "qtype_confidence": 1.4}'
    parsed = understanding_parse(f"Here you go:\n{reply}", message="waar kan ik parkeren")
    assert (parsed.intent, parsed.intent_confidence, parsed.qtype, parsed.qtype_confidence) == (
        "practical_info",
        0.75,
        "none",
        1.0,
    )
    assert parsed.intent_probabilities == {"practical_info": 0.75, "complaint": 0.25} and parsed.reduced == ""
    long_reply = json.dumps(
        {"intent_probabilities": {"treatment": 1}, "qtype": "treatment", "reduced": " hartfalen [PHONE]  behandeling "}
    )
    assert understanding_parse(long_reply, message=LONG).reduced == "hartfalen behandeling"
    assert understanding_parse(long_reply, message="hartfalen behandeling?").reduced == ""
    endless = json.dumps({"intent_probabilities": {"treatment": 1}, "qtype": "treatment", "reduced": "hart " * 500})
    assert understanding_parse(endless, message=LONG).reduced.split() == ["hart"] * len(LONG.split())
    wrong = {
        "no json here": "no JSON object",
        '{"intent_probabilities": {"emergency": 1}, "qtype": "none"}': "unknown intents ['emergency']",
        '{"intent_probabilities": {"general": 1}, "qtype": "diagnosis"}': "unknown question type 'diagnosis'",
        '{"intent_probabilities": {"general": -1}, "qtype": "none"}': "not a finite number >= 0",
        '{"intent_probabilities": {"general": true}, "qtype": "none"}': "not a finite number >= 0",
        '{"intent_probabilities": {"general": 0}, "qtype": "none"}': "every intent probability is 0",
        '{"intent_probabilities": {"general": NaN}, "qtype": "none"}': "holds NaN, not a number",
        '{"intent_probabilities": {"general": Infinity, "treatment": 1}, "qtype": "none"}': "holds Infinity",
        '{"intent_probabilities": {"general": 1e400}, "qtype": "none"}': "not a finite number >= 0",
        '{"intent_probabilities": {"general": 1e308, "treatment": 1e308}, "qtype": "none"}': "sum is not finite",
        '{"intent_probabilities": {"general": 1}, "qtype": "none", "qtype_confidence": NaN}': "holds NaN",
        '{"intent_probabilities": {"general": 1}, "qtype": "none", "qtype_confidence": "high"}': "qtype_confidence",
        '{"intent_probabilities": {"general": 1}, "qtype": "none", "reduced": 3}': "reduced is not a string",
        '{"qtype": "none"}': "intent_probabilities is missing",
        '{"intent_probabilities": {"general": 1}, "qtype": "none"': "not valid JSON",
    }
    wrong['{"intent_probabilities": {"general": %s}, "qtype": "none"}' % ("9" * 400)] = "not a finite number"
    for text, why in wrong.items():
        with pytest.raises(UnderstandingUnavailable, match=re.escape(why)):
            understanding_parse(text, message="waar kan ik parkeren")


def test_a_configured_chat_model_understands_the_question(chat_server: ChatServer) -> None:
    """GIVEN UNDERSTANDING_LLM_MODEL on the LLM endpoint WHEN a long Dutch message is asked THEN
    the model's intent, type and reduced query are what retrieval uses, the trace names the
    backend, the model got the intents and question types and never the phone number."""
    config = pipeline_config_default()
    assert config.understanding_llm_model == MODEL and config.generator == "extractive"
    state = pipeline_run(request=SearchRequest(question=LONG, language="nl"), config=config)
    trace = state.trace.understanding
    assert (trace.backend, trace.backend_error) == (f"llm:{MODEL}", "")
    assert (trace.intent, trace.qtype, trace.reduced) == ("treatment", "treatment", "behandelingen hartfalen")
    assert state.qtype == "treatment" and state.search_query.startswith("behandelingen hartfalen")
    assert state.intent_probabilities == {"treatment": 0.7, "condition_or_symptom": 0.2, "medical_advice_request": 0.1}
    request = chat_server.requests[0]
    assert request["model"] == MODEL and request["temperature"] == 0
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    assert "medical_advice_request" in system and "support groups" in system
    assert "0470 12 34 56" not in user and "[PHONE]" in user and "hartfalen" in user

    practical = pipeline_run(request=SearchRequest(question="waar kan ik parkeren", language="nl"), config=config)
    assert practical.trace.understanding.intent == "practical_info" and practical.qtype == "none"
    assert practical.intent_probabilities == {"practical_info": 0.8, "department_search": 0.2}


@pytest.mark.parametrize(
    ("fault", "why", "calls"),
    [(HTTP_500, "InternalServerError", 2), (SLOW, "APITimeoutError", 2), (WRONG_SHAPE, "intent_probabilities", 1)],
)
def test_the_offline_classifiers_answer_when_the_chat_model_fails(
    chat_server: ChatServer, fault: str, why: str, calls: int
) -> None:
    """GIVEN an endpoint that fails (HTTP 500), answers after the timeout, or answers outside
    the schema WHEN asked THEN the offline classifiers' understanding is used, as without the
    model, and the trace says why; a transient error is tried 1 + UNDERSTANDING_LLM_MAX_RETRIES
    times, a bad reply once."""
    chat_server.fault_always = fault
    config = pipeline_config_default()
    state = pipeline_run(request=SearchRequest(question=LONG, language="nl"), config=config)
    offline = pipeline_run(
        request=SearchRequest(question=LONG, language="nl"), config=config.with_overrides(understanding_llm_model="")
    )
    trace = state.trace.understanding
    assert trace.backend == "offline" and why in trace.backend_error
    assert (trace.intent, trace.qtype, trace.reduced) == (
        offline.trace.understanding.intent,
        offline.trace.understanding.qtype,
        offline.trace.understanding.reduced,
    )
    assert offline.trace.understanding.backend_error == ""
    assert len(chat_server.requests) == calls


def test_the_benchmark_scores_the_chat_model_on_the_labelled_set(chat_server: ChatServer) -> None:
    """GIVEN the local model WHEN ``benchmarks.understanding llm`` scores it THEN every labelled
    message was sent once, and its intent and type accuracy are those of the model's replies to
    what it was sent against the labels; a reply outside the schema counts as unavailable."""
    from benchmarks.understanding import llm_accuracy
    from zolsearch.search.understanding import labelled_queries

    rows = labelled_queries()
    chat_server.faults = [WRONG_SHAPE]  # the first message's reply is not the schema
    report = llm_accuracy()
    assert len(chat_server.requests) == len(rows) and report["unavailable"]["n"] == 1  # type: ignore[index]
    replies = [json.loads(_rules_reply(p).strip("`").removeprefix("json")) for p in chat_server.prompts()]
    intents = [max(r["intent_probabilities"], key=r["intent_probabilities"].get) for r in replies]
    right = [n > 0 and i == row.intent for n, (i, row) in enumerate(zip(intents, rows, strict=True))]
    types = [n > 0 and r["qtype"] == row.qtype for n, (r, row) in enumerate(zip(replies, rows, strict=True))]
    accuracy = report["accuracy"]["all"]  # type: ignore[index]
    assert accuracy["n"] == len(rows)
    assert accuracy["intent"] == round(sum(right) / len(rows), 3) and 0 < accuracy["intent"] < 1
    assert accuracy["qtype"] == round(sum(types) / len(rows), 3)
    assert set(report["latency_ms"]) == {"p50", "p95"}  # type: ignore[arg-type]


def test_a_client_that_cannot_be_built_leaves_the_offline_understanding(chat_server: ChatServer, settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN an operator who set an empty LLM_API_KEY (the openai client refuses to be built)
    WHEN asked THEN the request is understood offline and the trace names the client's error;
    nothing reached the endpoint."""
    settings.LLM_API_KEY = ""
    state = pipeline_run(request=SearchRequest(question=LONG, language="nl"), config=pipeline_config_default())
    trace = state.trace.understanding
    assert trace.backend == "offline" and trace.backend_error.startswith("OpenAIError") and trace.intent
    assert chat_server.requests == []
