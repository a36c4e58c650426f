"""Prometheus ``GET /metrics``: our search and judge metrics, django-prometheus's request metrics,
values written by other processes (multiprocess mode) and the scrape-time background queue depth.
The scrapes here come from the test client's loopback address, which the local profile's
``METRICS_ALLOWED_IPS`` admits; the access rules themselves have their own test.

Counters and histograms are cumulative over every process that shares the multiprocess folder
(``.data/prometheus``: earlier test sessions, and other sessions in this checkout running at the
same time), so the tests assert on the difference between two scrapes. Series that only a test
writes carry a label value unique to it (a judge key, a queue name) and are asserted exactly;
series any search writes (stage timings, outcomes) are asserted as "at least this request's
contribution", since a concurrent session may add to them between the two scrapes.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import kombu
import pytest
import redis
from django.conf import settings
from django.test import Client, override_settings
from prometheus_client.parser import text_string_to_metric_families

from core.observability import judge_observe, multiprocess_enabled, queue_depth
from zolsearch.search.metrics import search_observe
from zolsearch.search.models import Answer

pytestmark = pytest.mark.django_db

BASE_DIR = Path(settings.BASE_DIR)
REDIS_URL = "redis://127.0.0.1:6379/0"
ABCD = {"question": "What are the symptoms of ABCD syndrome?", "language": "en"}

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _scrape(client: Client) -> Samples:
    """GET /metrics and parse the exposition into {(sample name, labels): value}."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def _value(samples: Samples, name: str, **labels: str) -> float:
    """The value of one series; 0 when absent (a labelled series appears on its first write)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def _delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return _value(after, name, **labels) - _value(before, name, **labels)


def _bucket_for(value: float, samples: Samples, name: str) -> str:
    """The ``le`` label of the smallest bucket of histogram ``name`` that holds ``value``."""
    bounds = {dict(labels)["le"] for (sample, labels) in samples if sample == f"{name}_bucket"}
    return min((le for le in bounds if value <= float(le)), key=float)


def _post_search(client: Client, payload: dict[str, object]) -> dict:
    response = client.post("/api/v1/search", data=payload, content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def test_prometheus_client_runs_in_multiprocess_mode() -> None:
    """GIVEN the settings loaded (they set PROMETHEUS_MULTIPROC_DIR) WHEN prometheus_client was
    imported THEN it writes mmap files into that existing folder, not per-process memory."""
    folder = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    assert folder == Path(settings.PROMETHEUS_MULTIPROC_DIR) and folder.is_dir()
    assert multiprocess_enabled()
    assert list(folder.glob(f"*_{os.getpid()}.db"))  # this process's own files


def test_metrics_speak_openmetrics_when_asked() -> None:
    """GIVEN Prometheus's Accept header preferring OpenMetrics WHEN /metrics is scraped THEN the
    answer is OpenMetrics (ends with '# EOF'); without the header it is the text format 0.0.4."""
    client = Client()
    openmetrics = client.get("/metrics", HTTP_ACCEPT="application/openmetrics-text;version=1.0.0,text/plain;q=0.5")
    assert openmetrics.status_code == 200
    assert openmetrics["Content-Type"].startswith("application/openmetrics-text")
    assert openmetrics.content.decode().rstrip().endswith("# EOF")
    plain = client.get("/metrics")
    assert plain["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert "# TYPE zolsearch_gate_score histogram" in plain.content.decode()
    assert client.post("/metrics").status_code == 405


def test_metrics_need_an_allowed_address_or_the_token(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the local profile's allow-list (loopback) and no token WHEN /metrics is asked from
    loopback and from another address THEN 200 and 403; GIVEN a METRICS_TOKEN and an empty
    allow-list THEN 401 with a Bearer challenge without it or with a wrong one, 200 with it; an
    allow-listed network (CIDR) is admitted without the token."""
    assert settings.METRICS_ALLOWED_IPS == ["127.0.0.1", "::1"] and not settings.METRICS_TOKEN
    client = Client()
    assert client.get("/metrics").status_code == 200
    refused = client.get("/metrics", REMOTE_ADDR="192.0.2.10")
    assert refused.status_code == 403 and b"zolsearch_" not in refused.content

    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "scrape-secret-1", []
    anonymous = client.get("/metrics")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    scraped = client.get("/metrics", REMOTE_ADDR="192.0.2.10", headers={"Authorization": "Bearer scrape-secret-1"})
    assert scraped.status_code == 200 and "# TYPE zolsearch_gate_score histogram" in scraped.content.decode()
    settings.METRICS_ALLOWED_IPS = ["10.20.0.0/16"]
    assert client.get("/metrics", REMOTE_ADDR="10.20.3.4").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="10.21.3.4").status_code == 401


def test_search_records_stage_gate_answer_and_request_metrics(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN the ingested corpus WHEN a question is posted to the real URL /api/v1/search
    THEN /metrics shows, for every stage of that answer's timings (total included), one more
    observation whose bucket holds its time in seconds; one more 'passed' gate decision and gate
    score in the bucket of the answer's score; one more answered answer on channel api; and
    django-prometheus's request metrics for the POST on the search view."""
    settings.GATE_THRESHOLDS = {"use-multilingual-v3": 0.5}  # the test needs a passed gate decision
    client = Client()
    before = _scrape(client)
    body = _post_search(client, ABCD)
    after = _scrape(client)

    assert body["outcome"] == "answered" and body["gate"]["passed"] is True
    stages = body["timings_ms"]
    assert {"understand", "embed_query", "dense", "lexical", "fusion", "generate", "gate", "total"} <= set(stages)
    for stage, elapsed_ms in stages.items():
        seconds = elapsed_ms / 1000
        assert _delta(before, after, "zolsearch_search_stage_seconds_count", stage=stage) >= 1, stage
        assert _delta(before, after, "zolsearch_search_stage_seconds_sum", stage=stage) >= seconds - 1e-9, stage
        le = _bucket_for(seconds, after, "zolsearch_search_stage_seconds")  # a ms value would land in +Inf only
        assert _delta(before, after, "zolsearch_search_stage_seconds_bucket", stage=stage, le=le) >= 1, (stage, le)

    assert _delta(before, after, "zolsearch_gate_decisions_total", decision="passed") >= 1
    score = body["gate"]["score"]
    assert 0.5 < score <= 1.0
    assert (
        _delta(before, after, "zolsearch_gate_score_bucket", le=_bucket_for(score, after, "zolsearch_gate_score")) >= 1
    )
    assert _delta(before, after, "zolsearch_answers_total", outcome="answered", channel="api") >= 1

    assert _delta(before, after, "django_http_requests_total_by_method_total", method="POST") >= 1
    search_views = {
        dict(labels)["view"]
        for (name, labels) in after
        if name == "django_http_requests_latency_seconds_by_view_method_count"
        and dict(labels)["method"] == "POST"
        and "search" in dict(labels)["view"]
    }
    assert search_views, "no request latency series for the search view"
    assert any(
        _delta(before, after, "django_http_requests_latency_seconds_by_view_method_count", view=v, method="POST") >= 1
        for v in search_views
    )
    assert any(
        _delta(
            before,
            after,
            "django_http_responses_total_by_status_view_method_total",
            status="200",
            view=v,
            method="POST",
        )
        >= 1
        for v in search_views
    )


def test_a_gate_rejection_counts_as_a_refusal() -> None:
    """GIVEN a gate threshold nothing reaches WHEN a question is posted to /api/v1/search THEN
    /metrics counts one more 'rejected' gate decision, one more refusal with reason
    gate_rejected and one more gate_rejected answer on channel api."""
    client = Client()
    before = _scrape(client)
    with override_settings(GATE_THRESHOLDS={"use-multilingual-v3": 1.01}):
        body = _post_search(client, ABCD)
    after = _scrape(client)

    assert body["outcome"] == "gate_rejected"
    assert _delta(before, after, "zolsearch_gate_decisions_total", decision="rejected") >= 1
    assert _delta(before, after, "zolsearch_refusals_total", reason="gate_rejected") >= 1
    assert _delta(before, after, "zolsearch_answers_total", outcome="gate_rejected", channel="api") >= 1


def test_an_answer_the_gate_did_not_score_counts_as_not_run() -> None:
    """GIVEN a no_results answer of a batch run, which stopped before the gate (no gate dict)
    WHEN its metrics are recorded THEN the gate decision is 'not_run', the refusal reason is
    no_results, the answer counts on channel batch, and its stage timings are observed."""
    answer = Answer(
        outcome=Answer.Outcome.NO_RESULTS,
        channel=Answer.Channel.BATCH,
        gate={},
        gate_score=None,
        timings_ms={"understand": 1.5, "fusion": 0.25, "total": 4.0},
    )
    client = Client()
    before = _scrape(client)
    search_observe(answer=answer)
    after = _scrape(client)

    assert _delta(before, after, "zolsearch_gate_decisions_total", decision="not_run") >= 1
    assert _delta(before, after, "zolsearch_refusals_total", reason="no_results") >= 1
    assert _delta(before, after, "zolsearch_answers_total", outcome="no_results", channel="batch") >= 1
    for stage in ("understand", "fusion", "total"):
        assert _delta(before, after, "zolsearch_search_stage_seconds_count", stage=stage) >= 1


def test_search_observe_logs_instead_of_raising(caplog: pytest.LogCaptureFixture) -> None:
    """GIVEN an answer whose timings are not numbers WHEN its metrics are recorded THEN nothing
    is raised into the caller (the request that served it) and the failure is logged."""
    answer = Answer(outcome=Answer.Outcome.ANSWERED, channel=Answer.Channel.API, timings_ms={"total": "slow"})
    with caplog.at_level(logging.ERROR, logger="core.observability"):
        search_observe(answer=answer)
    assert "recording the search metrics of answer" in caplog.text


def test_judge_observe_values_appear_in_metrics() -> None:
    """GIVEN a judge key no other test uses WHEN two judgements (done with scores and latency,
    cached without) and one failure are observed THEN /metrics counts them by status, puts the
    faithfulness 0.85 in bucket 0.9 (not 0.8), the relevancy 0.4 in bucket 0.4, and the latency
    1,500 ms as 1.5 s in bucket 2.5 (not 1.0)."""
    judge = f"test-judge-{uuid.uuid4().hex[:8]}"
    client = Client()
    before = _scrape(client)
    judge_observe(judge_key=judge, status="done", faithfulness=0.85, relevancy=0.4, latency_ms=1500.0)
    judge_observe(judge_key=judge, status="cached", faithfulness=None, relevancy=None, latency_ms=None)
    judge_observe(judge_key=judge, status="failed", faithfulness=None, relevancy=None, latency_ms=800.0)
    after = _scrape(client)

    def delta(name: str, **labels: str) -> float:
        return _delta(before, after, name, **labels)

    assert delta("zolsearch_judgements_total", judge=judge, status="done") == 1
    assert delta("zolsearch_judgements_total", judge=judge, status="cached") == 1
    assert delta("zolsearch_judgements_total", judge=judge, status="failed") == 1
    assert delta("zolsearch_judgements_total", judge=judge, status="skipped") == 0
    faithfulness = {"metric": "faithfulness", "judge": judge}
    assert delta("zolsearch_judge_score_count", **faithfulness) == 1
    assert delta("zolsearch_judge_score_sum", **faithfulness) == pytest.approx(0.85)
    assert delta("zolsearch_judge_score_bucket", le="0.8", **faithfulness) == 0
    assert delta("zolsearch_judge_score_bucket", le="0.9", **faithfulness) == 1
    relevancy = {"metric": "relevancy", "judge": judge}
    assert delta("zolsearch_judge_score_bucket", le="0.3", **relevancy) == 0
    assert delta("zolsearch_judge_score_bucket", le="0.4", **relevancy) == 1
    assert delta("zolsearch_judge_seconds_count", judge=judge) == 2
    assert delta("zolsearch_judge_seconds_sum", judge=judge) == pytest.approx(2.3)
    assert delta("zolsearch_judge_seconds_bucket", judge=judge, le="1.0") == 1  # the 0.8 s failure
    assert delta("zolsearch_judge_seconds_bucket", judge=judge, le="2.5") == 2


def test_judge_observe_rejects_an_unknown_status() -> None:
    with pytest.raises(ValueError, match="unknown judgement status 'finished'"):
        judge_observe(judge_key="local", status="finished", faithfulness=None, relevancy=None, latency_ms=None)


def test_values_of_a_separate_process_appear_in_metrics() -> None:
    """GIVEN a separate Python process (like a Celery worker child) on the same
    PROMETHEUS_MULTIPROC_DIR WHEN it records a judgement and exits THEN this process's /metrics
    includes it: the exposition sums the files of every process, including exited ones."""
    judge = f"subprocess-judge-{uuid.uuid4().hex[:8]}"
    script = (
        "import os, sys\n"
        "from core.observability import judge_observe, multiprocess_enabled\n"
        "assert multiprocess_enabled()\n"
        f"judge_observe(judge_key={judge!r}, status='done', faithfulness=0.95, relevancy=None, latency_ms=250.0)\n"
        "print(os.getpid())\n"
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": os.environ["PROMETHEUS_MULTIPROC_DIR"]}
    client = Client()
    before = _scrape(client)
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    child_pid = int(result.stdout.strip().splitlines()[-1])
    assert child_pid != os.getpid()
    assert list(Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).glob(f"*_{child_pid}.db"))
    after = _scrape(client)

    assert _delta(before, after, "zolsearch_judgements_total", judge=judge, status="done") == 1
    faithfulness = {"metric": "faithfulness", "judge": judge}
    assert _delta(before, after, "zolsearch_judge_score_sum", **faithfulness) == pytest.approx(0.95)
    assert _delta(before, after, "zolsearch_judge_seconds_sum", judge=judge) == pytest.approx(0.25)


def _filesystem_broker(tmp_path: Path) -> dict[str, object]:
    folders = {key: tmp_path / name for key, name in (("queue", "queue"), ("processed", "processed"))}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folders["queue"]),
        "data_folder_out": str(folders["queue"]),
        "processed_folder": str(folders["processed"]),
        "control_folder": str(tmp_path / "control"),
        "store_processed": False,
    }


def _publish(connection: kombu.Connection, *, queue: str, count: int, priority: int = 0) -> None:
    """Publish ``count`` messages to ``queue`` the way Celery does (direct exchange = queue name)."""
    target = kombu.Queue(queue, kombu.Exchange(queue, type="direct"), routing_key=queue)
    with connection.Producer() as producer:
        for n in range(count):
            producer.publish({"n": n}, routing_key=queue, exchange=target.exchange, declare=[target], priority=priority)


def test_queue_depth_counts_the_message_files_of_the_default_queue(tmp_path: Path) -> None:
    """GIVEN a filesystem broker folder where 3 messages wait on the default queue 'celery' and 2
    on another queue WHEN /metrics is scraped THEN the queue depth gauge of 'celery' is 3."""
    options = _filesystem_broker(tmp_path)
    with kombu.Connection("filesystem://", transport_options=options) as connection:
        _publish(connection, queue="celery", count=3)
        _publish(connection, queue="other", count=2)
    assert len(list((tmp_path / "queue").iterdir())) == 5  # five message files in the folder

    with override_settings(CELERY_BROKER_URL="filesystem://", CELERY_BROKER_TRANSPORT_OPTIONS=options):
        samples = _scrape(Client())
        assert queue_depth(queue="other") == 2
    assert _value(samples, "zolsearch_background_queue_depth", queue="celery") == 3


def test_queue_depth_is_zero_for_an_empty_or_missing_filesystem_folder(tmp_path: Path) -> None:
    options = _filesystem_broker(tmp_path)
    with override_settings(CELERY_BROKER_URL="filesystem://", CELERY_BROKER_TRANSPORT_OPTIONS=options):
        assert queue_depth() == 0
    missing = {**options, "data_folder_in": str(tmp_path / "never-created")}
    with override_settings(CELERY_BROKER_URL="filesystem://", CELERY_BROKER_TRANSPORT_OPTIONS=missing):
        assert queue_depth() == 0


def test_queue_depth_on_redis_sums_the_queue_and_its_priority_keys() -> None:
    """GIVEN Redis at 127.0.0.1:6379 as broker and a queue of this test's own, holding 2 messages
    of priority 0 and 1 of priority 5 (kombu keeps that one under a separate priority key)
    WHEN /metrics is scraped with that queue as Celery's default THEN its depth gauge is 3.
    The queue's Redis keys are removed afterwards."""
    queue = f"zoltest-metrics-{uuid.uuid4().hex[:12]}"
    client = redis.Redis.from_url(REDIS_URL)
    try:
        with kombu.Connection(REDIS_URL) as connection:
            _publish(connection, queue=queue, count=2)
            _publish(connection, queue=queue, count=1, priority=5)
        assert client.llen(queue) == 2  # the priority-5 message is under another key
        with override_settings(
            CELERY_BROKER_URL=REDIS_URL, CELERY_BROKER_TRANSPORT_OPTIONS={}, CELERY_TASK_DEFAULT_QUEUE=queue
        ):
            samples = _scrape(Client())
            assert queue_depth() == 3
        assert _value(samples, "zolsearch_background_queue_depth", queue=queue) == 3
    finally:
        with kombu.Connection(REDIS_URL) as connection:
            kombu.Queue(queue, kombu.Exchange(queue, type="direct"), routing_key=queue)(
                connection.default_channel
            ).declare()
            connection.default_channel.queue_delete(queue)
        leftover = client.keys(f"*{queue}*")
        client.close()
    assert not leftover


def test_queue_depth_through_kombu_for_other_transports() -> None:
    """GIVEN kombu's in-memory transport (neither filesystem nor Redis) with 4 messages waiting
    WHEN the depth is asked THEN kombu's passive queue_declare gives 4; a queue never declared is 0."""
    queue = f"zoltest-memory-{uuid.uuid4().hex[:8]}"
    with kombu.Connection("memory://") as connection:
        _publish(connection, queue=queue, count=4)
        with override_settings(CELERY_BROKER_URL="memory://", CELERY_BROKER_TRANSPORT_OPTIONS={}):
            assert queue_depth(queue=queue) == 4
            assert queue_depth(queue=f"{queue}-never-declared") == 0
        connection.default_channel.queue_delete(queue)


@pytest.mark.parametrize(
    ("broker_url", "transport"), [("redis://127.0.0.1:1/0", "redis"), ("amqp://guest:guest@127.0.0.1:1//", "amqp")]
)
def test_an_unreachable_broker_leaves_the_gauge_out_and_counts_an_error(broker_url: str, transport: str) -> None:
    """GIVEN a broker nothing listens on WHEN /metrics is scraped THEN the scrape still answers
    200, without the queue depth gauge, and the error counter of that transport went up by one."""
    client = Client()
    before = _scrape(client)
    with override_settings(CELERY_BROKER_URL=broker_url, CELERY_BROKER_TRANSPORT_OPTIONS={}):
        during = _scrape(client)
    assert not [key for key in during if key[0] == "zolsearch_background_queue_depth"]
    assert _delta(before, during, "zolsearch_background_queue_depth_errors_total", transport=transport) == 1
