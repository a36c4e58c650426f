"""The LLM generator through the real ``openai`` client against a local HTTP server speaking the
OpenAI chat-completions protocol (no generative model ships in any installable package, so the
server composes its reply from the sources it is sent). Retries, timeouts and the fallback to
extractive answers are exercised over real sockets."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from zolsearch.search.config import pipeline_config_default
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import search_answer

pytestmark = pytest.mark.django_db


class _ChatHandler(BaseHTTPRequestHandler):
    mode = "ok"
    calls: list[dict] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append(body)
        if self.mode == "error":
            self._send(500, {"error": {"message": "model overloaded", "type": "server_error"}})
            return
        if self.mode == "slow":
            time.sleep(3)
        user = body["messages"][-1]["content"]
        first_source = re.search(r"\[1\] [^\n]*\n([^\n]+)", user)
        sentence = first_source.group(1).split(". ")[0].rstrip(".") if first_source else "No sources"
        self._send(
            200,
            {
                "id": "chatcmpl-local",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": f"{sentence}. [1]"},
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            },
        )

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def chat_server(settings) -> Iterator[type[_ChatHandler]]:  # type: ignore[no-untyped-def]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _ChatHandler.mode, _ChatHandler.calls = "ok", []
    settings.LLM_MODEL = "local-chat-1"
    settings.LLM_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}/v1"
    settings.LLM_TIMEOUT_S = 1.0
    settings.LLM_MAX_RETRIES = 2
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}  # these tests are about generation
    yield _ChatHandler
    server.shutdown()
    server.server_close()


QUESTION = "What are the symptoms of ABCD syndrome?"


def test_llm_generator_answers_with_citations(chat_server: type[_ChatHandler]) -> None:
    """GIVEN LLM_MODEL and LLM_BASE_URL WHEN asking THEN the reply of the endpoint is served,
    cited, gated, and the answer says which generator produced it."""
    config = pipeline_config_default()
    assert config.generator == "llm" and config.llm_model == "local-chat-1"
    state, answer = search_answer(request=SearchRequest(question=QUESTION, language="en"), config=config)
    assert answer.generator == "llm:local-chat-1"
    assert answer.answer.endswith("[1]") and answer.citations[0]["n"] == 1
    request = chat_server.calls[0]
    assert request["model"] == "local-chat-1" and request["temperature"] == 0
    assert "ABCD syndrome" in request["messages"][-1]["content"]
    assert "Never give individual medical advice" in request["messages"][0]["content"]


def test_llm_server_errors_are_retried_then_fall_back_to_extractive(chat_server: type[_ChatHandler]) -> None:
    """GIVEN an endpoint answering 500 WHEN asking THEN 1 + LLM_MAX_RETRIES attempts are made
    and the extractive answer is served, with the LLM error in the trace."""
    chat_server.mode = "error"
    _, answer = search_answer(request=SearchRequest(question=QUESTION, language="en"), config=pipeline_config_default())
    assert len(chat_server.calls) == 3
    assert answer.generator == "extractive" and "[1]" in answer.answer
    assert "500" in answer.trace["llm_error"] or "overloaded" in answer.trace["llm_error"]


def test_llm_timeout_falls_back(chat_server: type[_ChatHandler], settings) -> None:  # type: ignore[no-untyped-def]
    chat_server.mode = "slow"
    settings.LLM_MAX_RETRIES = 0
    _, answer = search_answer(request=SearchRequest(question=QUESTION, language="en"), config=pipeline_config_default())
    assert answer.generator == "extractive"
    assert "Timeout" in answer.trace["llm_error"]
