"""The LLM generator through the real ``openai`` client against a local HTTP server speaking the
OpenAI chat-completions protocol (no generative model ships in any installable package, so the
server composes its reply from the sources it is sent). Retries, timeouts and the fallback to
extractive answers are exercised over real sockets."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.chat_server import HTTP_500, SLOW, ChatServer
from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.selectors import answer_trace
from zolsearch.search.services import search_answer

pytestmark = pytest.mark.django_db


def _first_source_sentence(prompt: str) -> str:
    """The reply of the local model: the first sentence of source [1], cited."""
    first_source = re.search(r"\[1\] [^\n]*\n([^\n]+)", prompt)
    sentence = first_source.group(1).split(". ")[0].rstrip(".") if first_source else "No sources"
    return f"{sentence}. [1]"


@pytest.fixture
def chat_server(settings) -> Iterator[ChatServer]:  # type: ignore[no-untyped-def]
    with ChatServer(_first_source_sentence, slow_s=3.0) as server:
        settings.LLM_MODEL = "local-chat-1"
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_TIMEOUT_S = 1.0
        settings.LLM_MAX_RETRIES = 2
        settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}  # these tests are about generation
        yield server


QUESTION = "What are the symptoms of ABCD syndrome?"


def test_llm_generator_answers_with_citations(chat_server: ChatServer) -> None:
    """GIVEN LLM_MODEL and LLM_BASE_URL WHEN asking THEN the reply of the endpoint is served,
    cited, gated, and the answer says which generator produced it."""
    config = pipeline_config_default()
    assert config.generator == "llm" and config.llm_model == "local-chat-1"
    state, answer = search_answer(request=SearchRequest(question=QUESTION, language="en"), config=config)
    assert answer.generator == "llm" and answer.generator_model == "local-chat-1"
    assert answer.answer.endswith("[1]") and answer.citations[0]["n"] == 1
    request = chat_server.requests[0]
    assert request["model"] == "local-chat-1" and request["temperature"] == 0
    assert "ABCD syndrome" in request["messages"][-1]["content"]
    assert "Never give individual medical advice" in request["messages"][0]["content"]


def test_llm_server_errors_are_retried_then_fall_back_to_extractive(chat_server: ChatServer) -> None:
    """GIVEN an endpoint answering 500 WHEN asking THEN 1 + LLM_MAX_RETRIES attempts are made
    and the extractive answer is served, with the LLM error in the trace."""
    chat_server.fault_always = HTTP_500
    _, answer = search_answer(request=SearchRequest(question=QUESTION, language="en"), config=pipeline_config_default())
    assert len(chat_server.requests) == 3
    assert answer.generator == "extractive" and "[1]" in answer.answer
    assert "500" in answer_trace(answer=answer).llm_error or "overloaded" in answer_trace(answer=answer).llm_error


def test_llm_timeout_falls_back(chat_server: ChatServer, settings) -> None:  # type: ignore[no-untyped-def]
    chat_server.fault_always = SLOW
    settings.LLM_MAX_RETRIES = 0
    _, answer = search_answer(request=SearchRequest(question=QUESTION, language="en"), config=pipeline_config_default())
    assert answer.generator == "extractive"
    assert "Timeout" in answer_trace(answer=answer).llm_error
