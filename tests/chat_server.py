"""A real local HTTP server speaking the OpenAI chat-completions protocol, for tests.

No judge or generator model ships in an installable package, so tests talk to this server through
the real ``openai`` client over real sockets. :class:`ChatServer` answers ``POST
/v1/chat/completions`` with whatever its ``reply`` function composes from the last user message,
records every request body, and can inject faults (HTTP 500, invalid JSON, JSON of the wrong
shape, a slow reply) to exercise retries and timeouts.

:func:`deepeval_reply` answers DeepEval 4.3.1's FaithfulnessMetric and AnswerRelevancyMetric
prompts (``deepeval/metrics/{faithfulness,answer_relevancy}/templates/*.txt``) with JSON of the
shapes their schemas expect, computed from the prompt's content: a claim is supported when most
of its content words occur in the truths, a statement is relevant when it shares a content word with the
question. Scores therefore depend on the input, as with a real judge model.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Faults, consumed one per request from ChatServer.faults (or repeated via fault_always).
HTTP_500 = "http500"
INVALID_JSON = "invalid_json"
WRONG_SHAPE = "wrong_shape"
SLOW = "slow"


class ChatServer:
    """``/v1/chat/completions`` on 127.0.0.1 at a random port; use as a context manager.

    ``reply(prompt) -> str`` composes the assistant message from the last user message.
    ``requests``: every request body received (parsed JSON), in order. ``faults``: a queue of
    fault names, one consumed per request; ``fault_always``: a fault applied to every request.
    ``slow_s``: seconds a ``slow`` reply waits before answering.
    """

    def __init__(self, reply: Callable[[str], str], *, slow_s: float = 3.0) -> None:
        self.reply = reply
        self.slow_s = slow_s
        self.requests: list[dict[str, Any]] = []
        self.faults: list[str] = []
        self.fault_always: str | None = None
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _Handler)
        self._httpd.chat = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url`` of this server (``http://127.0.0.1:<port>/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def prompts(self) -> list[str]:
        """The last user message of every request received, in order."""
        return [body["messages"][-1]["content"] for body in self.requests]

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next_fault(self, body: dict[str, Any]) -> str | None:
        with self._lock:
            self.requests.append(body)
            if self.faults:
                return self.faults.pop(0)
            return self.fault_always


class _QuietServer(ThreadingHTTPServer):
    chat: ChatServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out has closed its socket before a slow reply is written.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    server: _QuietServer

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        chat = self.server.chat
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        fault = chat._next_fault(body)
        if fault == HTTP_500:
            self._send(500, {"error": {"message": "model overloaded", "type": "server_error"}})
            return
        if fault == SLOW:
            time.sleep(chat.slow_s)
        if fault == INVALID_JSON:
            content = 'Sure! Here is the JSON you asked for: {"truths": ["unterminated'
        elif fault == WRONG_SHAPE:
            content = json.dumps({"answer": "a JSON object, but not the one the schema asks for"})
        else:
            try:
                content = chat.reply(body["messages"][-1]["content"])
            except ValueError as exc:
                self._send(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                return
        self._send(
            200,
            {
                "id": "chatcmpl-local",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


_STOPWORDS = frozenset(
    "a an and are as at be been by can do does for from has have how in is it its may of on or "
    "that the their there these this to was were what when where which who will with you your".split()
)


def content_words(text: str) -> set[str]:
    """Lower-cased word tokens of ``text`` without stop words; digits count as words."""
    return {w for w in re.findall(r"\w+", text.lower()) if w not in _STOPWORDS and (len(w) > 1 or w.isdigit())}


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip() for p in parts if p.strip()]


def _block(prompt: str, start: str, end: str = "\n\nJSON:") -> str:
    return prompt.rpartition(start)[2].rpartition(end)[0].strip()


def _faithfulness_verdict(claim: str, context_words: set[str]) -> dict[str, str]:
    words = content_words(claim)
    missing = words - context_words
    covered = 1 - len(missing) / len(words) if words else 1.0
    numbers = sorted(w for w in missing if w.isdigit())
    if numbers and covered >= 0.5:
        return {"verdict": "no", "reason": f"The context gives other figures than {', '.join(numbers)}."}
    if covered >= 0.75:
        return {"verdict": "yes"}
    return {"verdict": "borderline", "reason": f"The context does not mention: {', '.join(sorted(missing))}."}


def deepeval_reply(prompt: str) -> str:
    """The JSON a careful judge model would return for one DeepEval 4.3.1 prompt.

    Truths/claims/statements: the sentences of the text. Faithfulness verdicts: ``no`` when at
    least half of the claim's content words are in the truths but one of its numbers is not (a
    contradicted figure), ``yes`` when at least 3/4 of its content words are in the truths, else
    ``borderline`` (not backed by the context). Relevancy verdicts:
    ``yes`` when the statement shares a content word with the input, else ``no``. Reasons: "The
    score is <score> because ..." built from the listed contradictions / irrelevant statements.
    Raises ``ValueError`` for a prompt that is not one of DeepEval's.
    """
    if '"truths" key' in prompt:
        return json.dumps({"truths": _sentences(_block(prompt, "\nText:\n"))})
    if '"claims" key' in prompt:
        return json.dumps({"claims": _sentences(_block(prompt, "\nAI Output:\n"))})
    if "\nRetrieval Contexts:\n" in prompt:
        context = content_words(_block(prompt, "\nRetrieval Contexts:\n", "\n\nClaims:\n"))
        claims = ast.literal_eval(_block(prompt, "\nClaims:\n"))
        return json.dumps({"verdicts": [_faithfulness_verdict(claim, context) for claim in claims]})
    if "\nFaithfulness Score:\n" in prompt:
        score = _block(prompt, "\nFaithfulness Score:\n", "\n\nContradictions:\n")
        contradictions = ast.literal_eval(_block(prompt, "\nContradictions:\n"))
        because = " ".join(contradictions) or "every claim is backed by the retrieval context."
        return json.dumps({"reason": f"The score is {score} because {because}"})
    if '"statements" key' in prompt:
        return json.dumps({"statements": _sentences(_block(prompt, "\nText:\n"))})
    if "relevant to address the input" in prompt:
        question = content_words(_block(prompt, "\nInput:\n", "\n\nStatements:\n"))
        statements = ast.literal_eval(_block(prompt, "\nStatements:\n"))
        verdicts = [
            {"verdict": "yes"}
            if content_words(statement) & question
            else {"verdict": "no", "reason": f"'{statement}' does not address the question."}
            for statement in statements
        ]
        return json.dumps({"verdicts": verdicts})
    if "\nAnswer Relevancy Score:\n" in prompt:
        score = _block(prompt, "\nAnswer Relevancy Score:\n", "\n\nReasons why")
        irrelevant = ast.literal_eval(_block(prompt, "actual output:\n", "\n\nInput:\n"))
        because = " ".join(irrelevant) or "every statement addresses the question."
        return json.dumps({"reason": f"The score is {score} because {because}"})
    raise ValueError(f"not a DeepEval prompt: {prompt[:80]!r}")
