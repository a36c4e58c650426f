"""Background judging: every stored answer is queued after commit (never awaited by the API),
sampled and budgeted by settings, always judged when the fast gate scored it low, answered
from the cache for identical requests, and taxonomy lines reach the judge as authoritative."""

from __future__ import annotations

import pytest

from evaluation.judges import JudgeInput, JudgeUnavailable, JudgeVerdict
from evaluation.judges.base import AUTHORITATIVE_TAG
from evaluation.models import Judgement
from evaluation.selectors import judge_input_for_answer
from evaluation.services.judging import (
    answer_judge,
    answer_judging_enqueue,
    answer_judging_wanted,
    judge_queue_full,
    judge_queue_read_clear,
)
from taxonomy.services import sample_hospital_load
from zolsearch.celery import app
from zolsearch.search.models import Answer
from zolsearch.search.pipeline import SearchRequest
from zolsearch.search.selectors import answer_trace
from zolsearch.search.services import search_answer

pytestmark = pytest.mark.django_db


class CountingJudge:
    """A judge that records what it was asked (wraps nothing: fixed, input-dependent scores)."""

    key = "counting-judge"

    def __init__(self, *, fail: bool = False) -> None:
        self.calls: list[JudgeInput] = []
        self.fail = fail

    def judge(self, item: JudgeInput) -> JudgeVerdict:
        self.calls.append(item)
        if self.fail:
            raise JudgeUnavailable("judge endpoint down")
        return JudgeVerdict(faithfulness=min(1.0, len(item.context) / 3), relevancy=0.8, evidence=[{"n": 1}])


def _answer(question: str = "What are the symptoms of ABCD syndrome?", **config) -> Answer:  # type: ignore[no-untyped-def]
    return search_answer(request=SearchRequest(question=question, language="en"))[1]


@pytest.fixture
def eager_tasks():  # type: ignore[no-untyped-def]
    """Celery tasks run in this process when sent (restored afterwards)."""
    original = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = original


def test_api_answers_are_judged_after_commit_through_the_task(
    client, django_capture_on_commit_callbacks, eager_tasks, settings
) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the worker in eager mode WHEN a patient's question is answered through the API
    THEN after commit the answer has a DONE judgement of the local judge with scores in [0, 1]
    and evidence per answer sentence; evaluation-run answers are not queued by the signal."""
    settings.JUDGE_SAMPLE_RATE = 1.0
    settings.JUDGE_QUEUE_MAX = 0  # the checkout's broker folder may hold a backlog of `make run`
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/search",
            {"question": "What are the symptoms of ABCD syndrome?", "language": "en"},
            content_type="application/json",
        )
    assert response.status_code == 200
    answer = Answer.objects.get(trace_id=response.json()["trace_id"])
    judgement = Judgement.objects.get(answer=answer)
    assert judgement.status == Judgement.Status.DONE and judgement.judge_key.startswith("local-v1:")
    assert 0.0 <= judgement.faithfulness <= 1.0 and 0.0 <= judgement.relevancy <= 1.0
    assert judgement.evidence and all("sentence" in e for e in judgement.evidence)

    with django_capture_on_commit_callbacks(execute=True):
        evaluation_answer = search_answer(
            request=SearchRequest(question="What causes Abetalipoproteinemia?", language="en"), channel="evaluation"
        )[1]
    assert not Judgement.objects.filter(answer=evaluation_answer).exists()


def test_a_broker_failure_never_reaches_the_patient(client, django_capture_on_commit_callbacks, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from evaluation import tasks

    def down(*args: object) -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.answer_judge_task, "delay", down)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/api/v1/search", {"question": "What is Pompe Disease?"}, content_type="application/json"
        )
    assert response.status_code == 200 and response.json()["answer"]


def test_judging_is_shed_while_the_worker_queue_is_full(tmp_path, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a filesystem broker folder with messages waiting on the worker's queue and
    JUDGE_QUEUE_MAX 3 WHEN a served answer is announced THEN it is queued while fewer than 3
    wait, and not queued (shed, counted) once 3 wait; the depth read is reused within
    JUDGE_QUEUE_CHECK_S; JUDGE_QUEUE_MAX 0 never sheds."""
    import kombu
    from prometheus_client import REGISTRY

    from evaluation import tasks
    from tests.test_metrics import _filesystem_broker, _publish

    options = _filesystem_broker(tmp_path)
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = options
    settings.JUDGE_ON_ANSWER = True
    settings.JUDGE_QUEUE_MAX = 3
    # A queue name of this test's own: kombu keeps exchange bindings per transport class, so a
    # queue another test declared in its folder would take these messages there.
    settings.CELERY_TASK_DEFAULT_QUEUE = queue = f"judging-{tmp_path.name}"
    sent: list[int] = []
    monkeypatch.setattr(tasks.answer_judge_task, "delay", lambda answer_id: sent.append(answer_id))
    answer = _answer()

    def shed() -> float:
        return REGISTRY.get_sample_value("zolsearch_judge_shed_total") or 0.0

    judge_queue_read_clear()
    try:
        with kombu.Connection("filesystem://", transport_options=options) as connection:
            _publish(connection, queue=queue, count=2)
            assert not judge_queue_full() and answer_judging_enqueue(answer=answer) is True
            assert sent == [answer.pk]
            _publish(connection, queue=queue, count=1)
            assert not judge_queue_full()  # the depth read just before is reused (JUDGE_QUEUE_CHECK_S)
            judge_queue_read_clear()
            before = shed()
            assert judge_queue_full() and answer_judging_enqueue(answer=answer) is False
            assert sent == [answer.pk] and shed() == before + 1
            settings.JUDGE_QUEUE_MAX = 0
            assert answer_judging_enqueue(answer=answer) is True and sent == [answer.pk, answer.pk]
    finally:
        judge_queue_read_clear()


def test_sampling_budget_and_low_gate(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN sampling rate 0 THEN a good answer is skipped but a low-gate answer is judged;
    GIVEN a daily budget of 1 THEN the second judge call of the day is skipped."""
    judge = CountingJudge()
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}  # everything passes the gate
    settings.JUDGE_ALWAYS_BELOW_GATE = -1.0
    good = _answer()
    settings.JUDGE_SAMPLE_RATE = 0.0
    assert answer_judging_wanted(answer=good, judge_key=judge.key) == (False, "not sampled (rate 0.0)")
    skipped = answer_judge(answer_id=good.pk, judge=judge, background=True)
    assert skipped.status == Judgement.Status.SKIPPED and not judge.calls
    assert answer_judge(answer_id=good.pk, judge=judge, background=True).pk == skipped.pk  # status guard

    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 1.01}  # everything is rejected
    low = _answer("What causes Abetalipoproteinemia?")
    assert low.outcome == Answer.Outcome.GATE_REJECTED
    judged = answer_judge(answer_id=low.pk, judge=judge, background=True)
    assert judged.status == Judgement.Status.DONE and len(judge.calls) == 1
    assert judge.calls[0].answer  # the rejected draft is what gets judged

    settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}
    settings.JUDGE_SAMPLE_RATE = 1.0
    settings.JUDGE_DAILY_BUDGET = 1
    other = _answer("What are the treatments for Pompe Disease?")
    wanted, why = answer_judging_wanted(answer=other, judge_key=judge.key)
    assert not wanted and "budget of 1" in why


def test_identical_requests_are_answered_from_the_cache() -> None:
    judge = CountingJudge()
    first, second = _answer(), _answer()
    a = answer_judge(answer_id=first.pk, judge=judge)
    b = answer_judge(answer_id=second.pk, judge=judge)
    assert len(judge.calls) == 1
    assert b.cached and b.cache_key == a.cache_key and b.faithfulness == a.faithfulness and b.latency_ms == 0.0
    assert b.reasons["cached_from"] == a.pk


def test_a_failing_judge_is_recorded_and_raised_for_retry() -> None:
    answer = _answer()
    with pytest.raises(JudgeUnavailable):
        answer_judge(answer_id=answer.pk, judge=CountingJudge(fail=True))
    judgement = Judgement.objects.get(answer=answer)
    assert judgement.status == Judgement.Status.FAILED and "judge endpoint down" in judgement.error
    retried = answer_judge(answer_id=answer.pk, judge=CountingJudge())  # the task's retry
    assert retried.pk == judgement.pk and retried.status == Judgement.Status.DONE and retried.attempts == 2
    assert answer_judge(answer_id=10**9, judge=CountingJudge()) is None  # answer gone: quietly nothing


def test_taxonomy_lines_reach_the_judge_as_authoritative_context(settings) -> None:
    """GIVEN the sample hospital WHEN a Dutch heart-failure question is answered with the graph's
    routing line pinned first THEN the judge sees that line as authoritative (tagged), not as a
    claim of the answer, and the local judge counts it as supported."""
    from evaluation.judges import judge_get

    sample_hospital_load()
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": -1.0}
    settings.RERANKER = ""  # no CRAG: the test needs a retrieved part beside the graph line
    answer = search_answer(request=SearchRequest(question="Waar kan ik terecht met hartfalen?", language="nl"))[1]
    facts = [f.text for f in answer_trace(answer=answer).taxonomy.facts]
    assert facts and facts[0] in answer.answer
    item = judge_input_for_answer(answer=answer)
    assert item.authoritative == tuple(facts)
    assert facts[0] not in item.answer
    assert item.context_with_tags()[0] == f"{AUTHORITATIVE_TAG} {facts[0]}"
    verdict = judge_get().judge(
        JudgeInput(question=item.question, answer=facts[0], context=item.context, authoritative=item.authoritative)
    )
    assert verdict.faithfulness == 1.0


def test_entity_recall_synonyms_come_from_aliases_and_snomed(settings) -> None:
    """GIVEN the SAMPLE hospital and the SNOMED CT heart-failure subset WHEN synonyms of expected
    entities are looked up THEN an entity name brings its other-language name, its approved
    aliases and its concept's SNOMED descriptions; a SNOMED term alone brings its concept's other
    terms; an unknown name brings nothing."""
    from pathlib import Path

    from evaluation.selectors import entity_synonyms
    from taxonomy.snomed import snomed_import

    snomed_import(path=Path("data/snomed/heartfailure-subset"))
    sample_hospital_load()
    synonyms = entity_synonyms(names=["Hartfalen", "Cardiac failure", "Nergens"])
    assert {"Heart failure", "hartzwakte", "hartinsufficiëntie", "Weak heart"} <= set(synonyms["Hartfalen"])
    assert "Heart failure, NOS" not in synonyms["Hartfalen"]  # an inactive description
    assert "Heart failure" in synonyms["Cardiac failure"]
    assert "Nergens" not in synonyms and "Hartfalen" not in synonyms["Hartfalen"]


def test_a_judgement_claimed_by_another_worker_is_not_judged_twice() -> None:
    """GIVEN a judgement another worker claimed a minute ago WHEN the task runs again (a
    redelivery) THEN the judge is not called; GIVEN a claim older than the lease (that worker
    died) THEN it is taken over and judged."""
    from datetime import timedelta

    from django.utils import timezone

    from evaluation.services.judging import CLAIM_LEASE

    answer, judge = _answer(), CountingJudge()
    running = Judgement.objects.create(
        answer=answer,
        judge_key=judge.key,
        status=Judgement.Status.RUNNING,
        claimed_at=timezone.now() - timedelta(minutes=1),
    )
    assert answer_judge(answer_id=answer.pk, judge=judge).status == Judgement.Status.RUNNING and not judge.calls
    Judgement.objects.filter(pk=running.pk).update(claimed_at=timezone.now() - CLAIM_LEASE - timedelta(seconds=1))
    assert answer_judge(answer_id=answer.pk, judge=judge).status == Judgement.Status.DONE and len(judge.calls) == 1
