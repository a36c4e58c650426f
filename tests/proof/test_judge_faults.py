"""The judge endpoint (DeepEval through ``JUDGE_MODEL`` at ``JUDGE_BASE_URL``) down, failing
or slow, on the real local chat server (``tests/chat_server.py``) with DeepEval's real client.

The patient never waits for the judge (judging runs after commit, on the worker:
``tests/evaluation/test_judging.py``); what must hold is that a failing judge leaves a FAILED
judgement with the reason, raises :class:`JudgeUnavailable` so the task retries with backoff,
and that the same answer is judged once the endpoint is back (a FAILED judgement is claimable
again). ``tests/evaluation/test_judge_deepeval.py`` covers the judge's own retries on bad JSON.

Rerun: ``EMBEDDED_PGDATA=/tmp/pg-proof .venv/bin/python -m pytest tests/proof/test_judge_faults.py -q``.
"""

from __future__ import annotations

import pytest

from evaluation.judges import JudgeUnavailable
from evaluation.models import Judgement
from evaluation.services.judging import answer_judge
from tests.chat_server import HTTP_500, SLOW, ChatServer, deepeval_reply
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.services import search_answer

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("fault", ["down", HTTP_500, SLOW])
def test_a_failing_judge_leaves_a_failed_judgement_and_the_answer_is_judged_when_it_is_back(
    settings, fault: str
) -> None:
    """GIVEN a served answer and the judge endpoint refusing connections, answering 500, or
    answering after JUDGE_TIMEOUT_S
    WHEN the answer is judged
    THEN JudgeUnavailable is raised (the task's retry signal) and the judgement is FAILED with
    the reason; with the endpoint answering again the same answer is judged DONE."""
    settings.JUDGE_ON_ANSWER = False
    _, answer = search_answer(request=SearchRequest(question="Who is at risk for Acinetobacter?", language="en"))
    with ChatServer(deepeval_reply, slow_s=2.0) as server:
        settings.JUDGE_MODEL = "local-judge-1"
        settings.JUDGE_TIMEOUT_S, settings.JUDGE_MAX_RETRIES = 0.5, 1
        if fault == "down":
            with ChatServer(deepeval_reply) as stopped:
                settings.JUDGE_BASE_URL = stopped.base_url
        else:
            settings.JUDGE_BASE_URL = server.base_url
            server.fault_always = fault
        with pytest.raises(JudgeUnavailable):
            answer_judge(answer_id=answer.pk, background=True)
        failed = Judgement.objects.get(answer=answer)
        assert failed.status == Judgement.Status.FAILED and failed.error

        settings.JUDGE_BASE_URL, server.fault_always = server.base_url, None
        settings.JUDGE_TIMEOUT_S = 30.0
        judged = answer_judge(answer_id=answer.pk, background=True)
    assert judged is not None and judged.pk == failed.pk
    assert judged.status == Judgement.Status.DONE and judged.faithfulness is not None
