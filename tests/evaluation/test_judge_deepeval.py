"""The DeepEval judge: DeepEval 4.3.1's real FaithfulnessMetric and AnswerRelevancyMetric, through
the real ``openai`` client, against a local HTTP server speaking the OpenAI chat-completions
protocol (:mod:`tests.chat_server`). The server reads DeepEval's prompts and answers
with truths, claims, statements, verdicts and reasons computed from their content, so the scores
below are DeepEval's own score computation over input-dependent verdicts. No database needed.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.text import tokens_estimate
from evaluation.judges.base import AUTHORITATIVE_TAG, JudgeInput, JudgeUnavailable, JudgeVerdict
from evaluation.judges.deepeval_judge import DeepEvalJudge
from tests.chat_server import HTTP_500, INVALID_JSON, SLOW, WRONG_SHAPE, ChatServer, deepeval_reply

BASE_DIR = Path(__file__).resolve().parents[2]
MODEL = "judge-pinned-1"

QUESTION = "What are the symptoms of ABCD syndrome?"
PASSAGE = (
    "ABCD syndrome is a rare inherited disorder. "
    "The symptoms of ABCD syndrome include hearing loss and white patches of hair. "
    "Children with ABCD syndrome often have problems with bowel movements."
)
FAITHFUL = "The symptoms of ABCD syndrome include hearing loss and white patches of hair."
UNFAITHFUL = (
    "The symptoms of ABCD syndrome include hearing loss. "
    "ABCD syndrome is cured by a daily vitamin tablet. "
    "Most patients recover completely within two weeks."
)


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer(deepeval_reply, slow_s=1.5) as server:
        yield server


@pytest.fixture
def judge(chat_server: ChatServer) -> DeepEvalJudge:
    return DeepEvalJudge(model=MODEL, base_url=chat_server.base_url, timeout_s=2.0, max_retries=2)


def _prompts_with(server: ChatServer, marker: str) -> list[str]:
    return [p for p in server.prompts() if marker in p]


def test_faithful_answer_scores_high_and_unfaithful_low(judge: DeepEvalJudge) -> None:
    """GIVEN one retrieved passage WHEN judging an answer that restates it and one that adds a
    cure and a recovery time the passage never mentions THEN DeepEval's faithfulness is 1.0 for
    the first and 1/3 for the second (one of three claims supported), with the unsupported claims
    as evidence and DeepEval's reason text."""
    good = judge.judge(JudgeInput(question=QUESTION, answer=FAITHFUL, context=(PASSAGE,)))
    bad = judge.judge(JudgeInput(question=QUESTION, answer=UNFAITHFUL, context=(PASSAGE,)))

    assert good.faithfulness == 1.0
    assert bad.faithfulness == pytest.approx(1 / 3)
    claims = [e for e in bad.evidence if e["metric"] == "faithfulness"]
    assert [(e["claim"], e["verdict"]) for e in claims] == [
        ("The symptoms of ABCD syndrome include hearing loss.", "yes"),
        ("ABCD syndrome is cured by a daily vitamin tablet.", "borderline"),
        ("Most patients recover completely within two weeks.", "borderline"),
    ]
    assert "vitamin" in claims[1]["reason"]
    assert bad.reasons["faithfulness"].startswith("The score is 0.33 because")
    assert good.reasons["faithfulness"].startswith("The score is 1.00 because")


def test_contradicted_figure_is_a_no_verdict(judge: DeepEvalJudge) -> None:
    """GIVEN a phone number in the context WHEN the answer gives another number in the same
    sentence THEN the claim's verdict is "no" and faithfulness is 0."""
    verdict = judge.judge(
        JudgeInput(
            question="What is the phone number of cardiology?",
            answer="The phone number of cardiology is 010 555 9999.",
            context=("The phone number of cardiology is 010 555 1234.",),
        )
    )
    assert verdict.faithfulness == 0.0
    assert [e["verdict"] for e in verdict.evidence if e["metric"] == "faithfulness"] == ["no"]


def test_relevant_answer_scores_high_and_off_topic_low(judge: DeepEvalJudge) -> None:
    """GIVEN a question about ABCD syndrome WHEN the answer stays on it, or spends two of three
    sentences on parking and the cafeteria THEN relevancy is 1.0 and 1/3, with the irrelevant
    statements marked "no" and named in DeepEval's reason."""
    on_topic = judge.judge(JudgeInput(question=QUESTION, answer=FAITHFUL, context=(PASSAGE,)))
    off_topic = judge.judge(
        JudgeInput(
            question=QUESTION,
            answer="ABCD syndrome symptoms include hearing loss. Parking costs 3 euro an hour. "
            "The cafeteria opens at eight.",
            context=(PASSAGE,),
        )
    )
    assert on_topic.relevancy == 1.0
    assert off_topic.relevancy == pytest.approx(1 / 3)
    statements = [(e["statement"], e["verdict"]) for e in off_topic.evidence if e["metric"] == "relevancy"]
    assert statements == [
        ("ABCD syndrome symptoms include hearing loss.", "yes"),
        ("Parking costs 3 euro an hour.", "no"),
        ("The cafeteria opens at eight.", "no"),
    ]
    assert "Parking" in off_topic.reasons["relevancy"]


def test_authoritative_lines_reach_the_judge_tagged_and_first(judge: DeepEvalJudge, chat_server: ChatServer) -> None:
    """GIVEN a name-heavy answer supported only by a taxonomy line WHEN judging with the line as
    authoritative THEN the truths prompt carries it tagged, before the retrieved passage, and the
    answer is faithful; without the line the same answer is not."""
    line = "Dr. Jansen works in the cardiology department, phone 010 555 1234."
    answer = "Dr. Jansen works in the cardiology department, phone 010 555 1234."
    with_line = judge.judge(
        JudgeInput(
            question="Who treats heart rhythm problems?", answer=answer, context=(PASSAGE,), authoritative=(line,)
        )
    )
    truths_prompt = _prompts_with(chat_server, '"truths" key')[0]
    text = truths_prompt.rpartition("\nText:\n")[2]
    assert text.index(f"{AUTHORITATIVE_TAG} {line}") < text.index(PASSAGE)

    without_line = judge.judge(
        JudgeInput(question="Who treats heart rhythm problems?", answer=answer, context=(PASSAGE,))
    )
    assert with_line.faithfulness == 1.0
    assert without_line.faithfulness == 0.0


def test_context_is_truncated_to_the_token_budget(chat_server: ChatServer) -> None:
    """GIVEN a budget that holds the first passage but not the second WHEN judging an answer
    taken from the second THEN the verdict records the truncation and the tokens sent, the second
    passage never reaches the judge, and the answer is unsupported."""
    second = "Treatment of ABCD syndrome consists of hearing aids and regular check-ups at the clinic."
    budget = tokens_estimate(PASSAGE) + 5
    judge = DeepEvalJudge(model=MODEL, base_url=chat_server.base_url, timeout_s=2.0, context_tokens=budget)
    item = JudgeInput(question="How is ABCD syndrome treated?", answer=second, context=(PASSAGE, second))

    verdict = judge.judge(item)

    assert verdict.truncated is True
    assert tokens_estimate(PASSAGE) <= verdict.context_tokens <= budget
    assert all("hearing aids" not in p for p in _prompts_with(chat_server, '"truths" key'))
    assert verdict.faithfulness == 0.0

    roomy = DeepEvalJudge(model=MODEL, base_url=chat_server.base_url, timeout_s=2.0, context_tokens=1000)
    untruncated = roomy.judge(item)
    assert untruncated.truncated is False
    assert untruncated.context_tokens == tokens_estimate(PASSAGE) + tokens_estimate(second)
    assert untruncated.faithfulness == 1.0


def test_requests_pin_the_model_at_temperature_zero_in_json_mode(judge: DeepEvalJudge, chat_server: ChatServer) -> None:
    """GIVEN a judge on ``judge-pinned-1`` WHEN judging THEN all seven DeepEval calls (truths,
    claims, verdicts, reason; statements, verdicts, reason) name that model, at temperature 0, in
    JSON mode, as one user message; the judge's key names the model."""
    verdict = judge.judge(JudgeInput(question=QUESTION, answer=FAITHFUL, context=(PASSAGE,)))

    assert judge.key == f"deepeval:{MODEL}"
    assert verdict.attempts == len(chat_server.requests) == 7
    for body in chat_server.requests:
        assert body["model"] == MODEL
        assert body["temperature"] == 0
        assert body["response_format"] == {"type": "json_object"}
        assert [m["role"] for m in body["messages"]] == ["user"]


@pytest.mark.parametrize("fault", [INVALID_JSON, WRONG_SHAPE, HTTP_500, SLOW])
def test_one_bad_reply_is_retried_and_counted(judge: DeepEvalJudge, chat_server: ChatServer, fault: str) -> None:
    """GIVEN the endpoint answers the first call with invalid JSON, JSON of the wrong shape, an
    HTTP 500 or too late (a 1.5 s reply against a 0.5 s timeout) WHEN judging THEN that call is retried, the scores are those of a clean run, and the verdict counts
    eight attempts (seven calls plus one retry)."""
    if fault == SLOW:
        judge = DeepEvalJudge(model=MODEL, base_url=chat_server.base_url, timeout_s=0.5, max_retries=2)
    chat_server.faults = [fault]

    verdict = judge.judge(JudgeInput(question=QUESTION, answer=UNFAITHFUL, context=(PASSAGE,)))

    assert verdict.attempts == len(chat_server.requests) == 8
    assert verdict.faithfulness == pytest.approx(1 / 3)
    assert verdict.relevancy == pytest.approx(2 / 3)


def test_always_invalid_json_makes_the_judge_unavailable(judge: DeepEvalJudge, chat_server: ChatServer) -> None:
    """GIVEN an endpoint that never answers with valid JSON WHEN judging THEN the first call is
    tried 1 + max_retries times and JudgeUnavailable is raised."""
    chat_server.fault_always = INVALID_JSON
    with pytest.raises(JudgeUnavailable, match="invalid JSON|no JSON object"):
        judge.judge(JudgeInput(question=QUESTION, answer=FAITHFUL, context=(PASSAGE,)))
    assert len(chat_server.requests) == 3


def test_persistent_server_errors_make_the_judge_unavailable(chat_server: ChatServer) -> None:
    chat_server.fault_always = HTTP_500
    judge = DeepEvalJudge(model=MODEL, base_url=chat_server.base_url, timeout_s=2.0, max_retries=1)
    with pytest.raises(JudgeUnavailable, match="InternalServerError"):
        judge.judge(JudgeInput(question=QUESTION, answer=FAITHFUL, context=(PASSAGE,)))
    assert len(chat_server.requests) == 2


def test_capitalised_verdicts_are_accepted_like_deepeval_does() -> None:
    """GIVEN a model that writes "Yes"/"Borderline" WHEN judging THEN the verdicts are coerced as
    DeepEval's own loose-JSON path does (no retry) and scored as usual."""

    sent: list[str] = []

    def capitalised(prompt: str) -> str:
        reply = re.sub(
            r'"verdict": "(\w+)"', lambda m: f'"verdict": "{m.group(1).capitalize()}"', deepeval_reply(prompt)
        )
        sent.append(reply)
        return reply

    with ChatServer(capitalised) as server:
        judge = DeepEvalJudge(model=MODEL, base_url=server.base_url, timeout_s=2.0, max_retries=0)
        verdict = judge.judge(JudgeInput(question=QUESTION, answer=UNFAITHFUL, context=(PASSAGE,)))
    assert any('"verdict": "Borderline"' in reply for reply in sent)
    assert verdict.attempts == 7
    assert verdict.faithfulness == pytest.approx(1 / 3)


def test_empty_answer_is_not_sent(judge: DeepEvalJudge, chat_server: ChatServer) -> None:
    verdict = judge.judge(JudgeInput(question=QUESTION, answer="  ", context=(PASSAGE,)))
    assert (verdict.faithfulness, verdict.relevancy, verdict.attempts) == (None, None, 0)
    assert chat_server.requests == []


def test_runs_without_an_event_loop_and_leaves_none(judge: DeepEvalJudge) -> None:
    """GIVEN a worker thread without an event loop (a Celery or request thread) WHEN judging in
    it THEN the judgement completes and no event loop was created or set in that thread
    (DeepEval's async mode would create and set one)."""
    outcome: dict[str, object] = {}

    def work() -> None:
        outcome["verdict"] = judge.judge(JudgeInput(question=QUESTION, answer=FAITHFUL, context=(PASSAGE,)))
        try:
            asyncio.get_event_loop()
            outcome["loop"] = "set"
        except RuntimeError:
            outcome["loop"] = "none"

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=30)
    assert isinstance(outcome["verdict"], JudgeVerdict) and outcome["verdict"].faithfulness == 1.0
    assert outcome["loop"] == "none"


def test_from_settings(settings, chat_server: ChatServer) -> None:  # type: ignore[no-untyped-def]
    settings.JUDGE_MODEL = "judge-from-settings"
    settings.JUDGE_BASE_URL = chat_server.base_url
    settings.JUDGE_API_KEY = "local-key"
    settings.JUDGE_TIMEOUT_S = 2.0
    settings.JUDGE_MAX_RETRIES = 1
    budget = tokens_estimate(PASSAGE) - 8  # the last sentence does not fit
    settings.JUDGE_CONTEXT_TOKENS = budget

    judge = DeepEvalJudge.from_settings()
    verdict = judge.judge(JudgeInput(question=QUESTION, answer=FAITHFUL, context=(PASSAGE,)))

    assert judge.key == "deepeval:judge-from-settings"
    assert (judge.max_retries, judge.context_tokens) == (1, budget)
    assert verdict.truncated is True and 0 < verdict.context_tokens <= budget
    assert {body["model"] for body in chat_server.requests} == {"judge-from-settings"}


@pytest.mark.parametrize(
    "kwargs",
    [{"model": ""}, {"base_url": ""}, {"max_retries": -1}, {"context_tokens": 0}, {"timeout_s": 0}],
)
def test_constructor_rejects_unusable_configuration(kwargs: dict[str, object]) -> None:
    config: dict[str, object] = {"model": MODEL, "base_url": "http://127.0.0.1:9/v1"} | kwargs
    with pytest.raises(ValueError):
        DeepEvalJudge(**config)  # type: ignore[arg-type]


_ISOLATED_RUN = """
import atexit, json, sys

outside = []

def audit(event, args):
    if event == "socket.getaddrinfo":
        host = args[0].decode() if isinstance(args[0], bytes) else args[0]
        if host not in ("127.0.0.1", "localhost", "::1"):
            outside.append(f"getaddrinfo {host}")
    elif event == "socket.connect" and isinstance(args[1], tuple) and args[1][0] not in ("127.0.0.1", "::1"):
        outside.append(f"connect {args[1][0]}")

sys.addaudithook(audit)
atexit.register(lambda: print(json.dumps({"outside": outside})))  # registered first, runs last

from evaluation.judges.base import JudgeInput
from evaluation.judges.deepeval_judge import DeepEvalJudge

item = JudgeInput(question=sys.argv[2], answer=sys.argv[3], context=(sys.argv[4],))
verdict = DeepEvalJudge(model="judge-pinned-1", base_url=sys.argv[1], timeout_s=2.0).judge(item)
print(json.dumps({"faithfulness": verdict.faithfulness}))
"""


def test_deepeval_writes_no_files_and_reaches_no_other_host(chat_server: ChatServer, tmp_path: Path) -> None:
    """GIVEN a fresh interpreter whose environment has no DEEPEVAL_*/CONFIDENT_* variables, an
    empty working directory and an empty HOME WHEN it imports the judge (and so DeepEval) and
    judges one answer, through interpreter exit THEN no file appears in either directory and no
    socket resolves or connects to anything but 127.0.0.1 (audit hooks see every attempt)."""
    cwd, home, tmp = tmp_path / "cwd", tmp_path / "home", tmp_path / "tmp"
    for folder in (cwd, home, tmp):
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DEEPEVAL_", "CONFIDENT_"))}
    env |= {"HOME": str(home), "TMPDIR": str(tmp), "PYTHONPATH": str(BASE_DIR)}

    result = subprocess.run(
        [sys.executable, "-c", _ISOLATED_RUN, chat_server.base_url, QUESTION, FAITHFUL, PASSAGE],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert reports == [{"faithfulness": 1.0}, {"outside": []}]
    assert list(cwd.rglob("*")) == []
    assert list(home.rglob("*")) == []
