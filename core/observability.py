"""Prometheus metrics of ZOL Search, correct across the web and worker processes.

prometheus_client runs in multiprocess mode: ``zolsearch.settings`` sets
``PROMETHEUS_MULTIPROC_DIR`` (and creates the folder) before anything imports prometheus_client,
because the library picks its value class once, when ``prometheus_client.values`` is first
imported. Every process (web, each prefork worker child, management commands, tests) then writes
its samples to its own mmap files in that folder, and :func:`metrics_export` (``GET /metrics``)
sums them with ``MultiProcessCollector`` into a fresh registry at scrape time. Counters and
histograms of exited processes stay counted until ``manage.py serve`` starts the next run
(:func:`metrics_dir_reset`). A ``Gauge`` added here needs an explicit ``multiprocess_mode``
(``livesum``, ``max``, …); the queue depth is not one: it is measured at scrape time
(:class:`QueueDepthCollector`).

``GET /metrics`` answers only a scraper with the bearer token ``METRICS_TOKEN`` or from an
address in ``METRICS_ALLOWED_IPS`` (:func:`metrics_access_allowed`); everyone else gets 401 (a
token is configured) or 403.

Metric names follow the Prometheus conventions: ``zolsearch_`` prefix, base units in the name
(seconds), ``_total`` on counters. Label values come from code (stage names, outcomes, channels,
judge keys, statuses), never from user input, so their number stays bounded.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client import values as prometheus_values
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.django import PrometheusDjangoView
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

logger = logging.getLogger(__name__)

# Pipeline stages take from under a millisecond (fusion) to seconds (an LLM draft).
STAGE_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# Gate scores are cosines in [-1, 1]; the calibrated thresholds lie in 0.5-0.9 (settings.GATE_THRESHOLDS).
GATE_SCORE_BUCKETS = (-0.5, 0.0, 0.25, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)
JUDGE_SCORE_BUCKETS = tuple(round(0.1 * i, 1) for i in range(11))  # 0.0, 0.1, …, 1.0
# A remote LLM judge takes seconds to minutes (JUDGE_TIMEOUT_S 60 s, with retries).
JUDGE_LATENCY_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)

JUDGEMENT_STATUSES = ("done", "failed", "skipped", "cached")

SEARCH_STAGE_SECONDS = Histogram(
    "zolsearch_search_stage_seconds",
    "Wall time of one pipeline stage of a served answer, in seconds; stage 'total' is the whole run.",
    ["stage"],
    buckets=STAGE_BUCKETS_S,
)
GATE_DECISIONS_TOTAL = Counter(
    "zolsearch_gate_decisions_total",
    "Decisions of the fast quality gate on served answers (passed, rejected, not_run).",
    ["decision"],
)
GATE_SCORE = Histogram(
    "zolsearch_gate_score",
    "Fast quality gate score of served answers (0.7 context alignment + 0.3 question similarity, in [-1, 1]).",
    buckets=GATE_SCORE_BUCKETS,
)
REFUSALS_TOTAL = Counter(
    "zolsearch_refusals_total",
    "Served answers that were the fallback instead of an answer, by reason (the answer's outcome).",
    ["reason"],
)
GUARD_FAILURES_TOTAL = Counter(
    "zolsearch_guard_failures_total",
    "Safety-model calls that failed (timeout, connection, bad reply), by stage and the policy applied (open, closed).",
    ["stage", "policy"],
)
SEMANTIC_CACHE_TOTAL = Counter(
    "zolsearch_semantic_cache_total",
    "Semantic cache lookups of live requests, by result (hit, miss); hit rate = hit / (hit + miss).",
    ["result"],
)
RED_FLAGS_TOTAL = Counter(
    "zolsearch_red_flags_total",
    "Requests routed to a phone number before search, by category (emergency, urgent, poison, suicide).",
    ["category"],
)
FEEDBACK_TOTAL = Counter(
    "zolsearch_feedback_total",
    "Patients' 'was this helpful?' answers, by helpful (yes, no) and whether a comment came with it.",
    ["helpful", "comment"],
)
FEEDBACK_RATE_LIMITED_TOTAL = Counter(
    "zolsearch_feedback_rate_limited_total",
    "Feedback requests refused with 429 because the client sent too many.",
)
ANSWERS_TOTAL = Counter(
    "zolsearch_answers_total",
    "Stored answers by outcome and channel (api, batch, evaluation).",
    ["outcome", "channel"],
)
JUDGE_SCORE = Histogram(
    "zolsearch_judge_score",
    "Scores given by the answer judge, in [0, 1], by metric (faithfulness, relevancy) and judge.",
    ["metric", "judge"],
    buckets=JUDGE_SCORE_BUCKETS,
)
JUDGE_SECONDS = Histogram(
    "zolsearch_judge_seconds",
    "Wall time of one judgement of an answer, in seconds, by judge.",
    ["judge"],
    buckets=JUDGE_LATENCY_BUCKETS_S,
)
JUDGEMENTS_TOTAL = Counter(
    "zolsearch_judgements_total",
    "Judgements of answers by judge and status (done, failed, skipped, cached).",
    ["judge", "status"],
)
JUDGE_SHED_TOTAL = Counter(
    "zolsearch_judge_shed_total",
    "Served answers not queued for background judging because the worker's queue was full (JUDGE_QUEUE_MAX).",
)
QUEUE_DEPTH_ERRORS_TOTAL = Counter(
    "zolsearch_background_queue_depth_errors_total",
    "Scrapes where the background queue depth could not be read (broker unreachable), by transport.",
    ["transport"],
)

RATE_LIMITED_TOTAL = Counter(
    "zolsearch_rate_limited_total",
    "Patient API requests refused with 429 because the client sent too many, by endpoint.",
    ["endpoint"],
)

QUEUE_DEPTH_TIMEOUT_S = 2.0  # a scrape must stay fast when the broker hangs


def multiprocess_enabled() -> bool:
    """True when prometheus_client writes per-process mmap files (multiprocess mode).

    False means prometheus_client was imported before ``PROMETHEUS_MULTIPROC_DIR`` was set: each
    process then counts in memory only and ``/metrics`` misses the samples of the others.
    """
    return bool(getattr(prometheus_values.ValueClass, "_multiprocess", False))


if not multiprocess_enabled():
    logger.error(
        "prometheus_client was imported before PROMETHEUS_MULTIPROC_DIR was set (zolsearch.settings sets it): "
        "/metrics will miss the samples of other processes"
    )


def judge_observe(
    *, judge_key: str, status: str, faithfulness: float | None, relevancy: float | None, latency_ms: float | None
) -> None:
    """Record one judgement of an answer by the judge ``judge_key``.

    ``status``: one of :data:`JUDGEMENT_STATUSES` (``done``, ``failed``, ``skipped``, ``cached``),
    counted in ``zolsearch_judgements_total``. ``faithfulness`` and ``relevancy`` (scores in
    [0, 1]) are observed in ``zolsearch_judge_score`` when not None, so pass None for scores that
    should not count again (e.g. on a cache hit if only fresh judgements should shape the
    distribution). ``latency_ms``: wall time of the judgement in ms, observed in seconds in
    ``zolsearch_judge_seconds`` when not None.

    Raises ``ValueError`` for a status outside :data:`JUDGEMENT_STATUSES` (a programming error,
    and it keeps the label set bounded). A failure to write the metrics is logged, never raised.
    """
    if status not in JUDGEMENT_STATUSES:
        raise ValueError(f"unknown judgement status {status!r}: expected one of {', '.join(JUDGEMENT_STATUSES)}")
    try:
        JUDGEMENTS_TOTAL.labels(judge=judge_key, status=status).inc()
        for metric, score in (("faithfulness", faithfulness), ("relevancy", relevancy)):
            if score is not None:
                JUDGE_SCORE.labels(metric=metric, judge=judge_key).observe(float(score))
        if latency_ms is not None:
            JUDGE_SECONDS.labels(judge=judge_key).observe(float(latency_ms) / 1000.0)
    except Exception:
        logger.exception("recording the metrics of a %s judgement by %s failed", status, judge_key)


def _queue_default() -> str:
    return str(getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", None) or "celery")


def _broker_transport() -> str:
    return urlsplit(str(settings.CELERY_BROKER_URL)).scheme or "amqp"


def queue_depth(*, queue: str | None = None) -> int:
    """Number of messages waiting in ``queue`` (default: Celery's default queue) of the broker.

    Reads the broker of the settings (``CELERY_BROKER_URL``, ``CELERY_BROKER_TRANSPORT_OPTIONS``)
    at call time, not the Celery app's cached configuration:

    - ``filesystem://``: the message files of ``queue`` in ``data_folder_in`` (kombu names them
      ``<ms>_<uuid>.<queue>.msg``); a missing folder counts 0.
    - ``redis://``, ``rediss://``: the sum of ``LLEN`` over the queue's key and its
      priority keys (kombu's layout: ``priority_steps``, ``sep``, ``global_keyprefix``).
    - anything else: kombu's ``queue_declare(passive=True).message_count``; a queue that does
      not exist yet counts 0.

    Raises ``OSError`` / the client's connection error when the broker cannot be read (timeout
    :data:`QUEUE_DEPTH_TIMEOUT_S` seconds).
    """
    queue = queue or _queue_default()
    url = str(settings.CELERY_BROKER_URL)
    options = dict(getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", None) or {})
    transport = _broker_transport()
    if transport == "filesystem":
        return _queue_depth_filesystem(queue=queue, options=options)
    if transport in ("redis", "rediss"):
        return _queue_depth_redis(queue=queue, url=url, options=options)
    return _queue_depth_kombu(queue=queue, url=url, options=options)


def _queue_depth_filesystem(*, queue: str, options: dict[str, object]) -> int:
    folder = options.get("data_folder_in")
    if not folder:
        raise OSError("the filesystem broker has no data_folder_in in CELERY_BROKER_TRANSPORT_OPTIONS")
    suffix = f"{queue}.msg"
    try:
        with os.scandir(str(folder)) as entries:
            return sum(1 for entry in entries if entry.name.partition(".")[2] == suffix)
    except FileNotFoundError:
        return 0  # no message was ever published on this broker folder


def _queue_depth_redis(*, queue: str, url: str, options: dict[str, object]) -> int:
    import redis
    from kombu.transport.redis import PRIORITY_STEPS
    from kombu.transport.redis import Channel as RedisChannel

    prefix = str(options.get("global_keyprefix", ""))
    separator = str(options.get("sep", RedisChannel.sep))
    steps = list(options.get("priority_steps", PRIORITY_STEPS))  # type: ignore[call-overload]
    keys = [f"{prefix}{queue}"] + [f"{prefix}{queue}{separator}{step}" for step in steps if step]
    client = redis.Redis.from_url(
        url, socket_timeout=QUEUE_DEPTH_TIMEOUT_S, socket_connect_timeout=QUEUE_DEPTH_TIMEOUT_S
    )
    try:
        with client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.llen(key)
            return int(sum(pipe.execute()))
    finally:
        client.close()


def _queue_depth_kombu(*, queue: str, url: str, options: dict[str, object]) -> int:
    import kombu
    from kombu.exceptions import ChannelError

    with kombu.Connection(url, transport_options=options, connect_timeout=QUEUE_DEPTH_TIMEOUT_S) as connection:
        connection.ensure_connection(max_retries=0)  # one attempt: the next scrape is the retry
        channel = connection.channel()
        try:
            return int(channel.queue_declare(queue=queue, passive=True).message_count)
        except ChannelError as exc:
            if "404" in str(getattr(exc, "code", "")) or "NOT_FOUND" in str(exc):
                return 0  # declared by the first worker or publisher; nothing waits yet
            raise
        finally:
            channel.close()


class QueueDepthCollector(Collector):
    """Scrape-time gauge ``zolsearch_background_queue_depth{queue}`` (see :func:`queue_depth`).

    When the broker cannot be read the gauge is absent from the scrape (so ``absent()`` alerts
    fire) and ``zolsearch_background_queue_depth_errors_total{transport}`` counts the failure;
    the scrape itself never fails.
    """

    def collect(self) -> Iterator[Metric]:
        queue = _queue_default()
        try:
            depth = queue_depth(queue=queue)
        except Exception as exc:
            logger.warning("background queue depth unavailable (%s broker): %s", _broker_transport(), exc)
            QUEUE_DEPTH_ERRORS_TOTAL.labels(transport=_broker_transport()).inc()
            return
        family = GaugeMetricFamily(
            "zolsearch_background_queue_depth",
            "Messages waiting in the background (Celery) queue, measured at scrape time.",
            labels=["queue"],
        )
        family.add_metric([queue], depth)
        yield family


def metrics_registry() -> CollectorRegistry:
    """A fresh registry with the samples of every process (multiprocess files) and the queue depth."""
    registry = CollectorRegistry()
    # Collected in registration order: the queue depth first, so that the error it may count
    # is already in the files when MultiProcessCollector reads them for this same scrape.
    registry.register(QueueDepthCollector())
    MultiProcessCollector(registry)
    return registry


def metrics_access_allowed(request: HttpRequest) -> bool:
    """True if ``request`` may read the metrics: it carries ``Authorization: Bearer
    <METRICS_TOKEN>`` (a token is set; compared in constant time) or its ``REMOTE_ADDR`` lies in
    ``METRICS_ALLOWED_IPS`` (addresses or CIDR networks; default loopback in the local profile,
    none in production). ``X-Forwarded-For`` is never believed here: behind a reverse proxy on the
    same host every request comes from the proxy's address, so use the token there."""
    token = str(getattr(settings, "METRICS_TOKEN", "") or "")
    if token:
        scheme, _, given = str(request.headers.get("Authorization", "")).partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return True
    try:
        remote = ipaddress.ip_address(str(request.META.get("REMOTE_ADDR", "")).strip())
    except ValueError:
        return False
    for entry in getattr(settings, "METRICS_ALLOWED_IPS", []):
        try:
            if remote in ipaddress.ip_network(str(entry).strip(), strict=False):
                return True
        except ValueError:
            logger.error("METRICS_ALLOWED_IPS entry %r is not an address or network", entry)
    return False


class MetricsView(PrometheusDjangoView):
    """``GET /metrics``: the exposition of :func:`metrics_registry`, built fresh for each scrape.

    prometheus_client's Django view: the text format 0.0.4 by default, OpenMetrics or text 1.0.0
    when the ``Accept`` header asks (Prometheus does), gzip on ``Accept-Encoding``, and
    ``?name[]=`` to select metrics. Other methods than GET, HEAD and OPTIONS get 405. Requests
    that :func:`metrics_access_allowed` refuses get 401 with ``WWW-Authenticate: Bearer`` when a
    ``METRICS_TOKEN`` is set, else 403, before anything is collected.
    """

    def dispatch(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        if not metrics_access_allowed(request):
            if getattr(settings, "METRICS_TOKEN", ""):
                response = HttpResponse("a bearer token is required\n", status=401, content_type="text/plain")
                response["WWW-Authenticate"] = 'Bearer realm="metrics"'
                return response
            return HttpResponse("forbidden\n", status=403, content_type="text/plain")
        return super().dispatch(request, *args, **kwargs)

    def get(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        self.registry = metrics_registry()
        return super().get(request, *args, **kwargs)


metrics_export = MetricsView.as_view()


def metrics_dir_reset() -> int:
    """Delete the metric files of processes that are no longer running; returns how many.

    Called by ``manage.py serve`` before it starts the worker, so that a new run's counters start
    from zero. Files of running processes stay: the calling process may already have written some
    (URL checks import this module), and other processes (another server, a test session) can
    share the folder. Files are ``<type>[_<gauge mode>]_<pid>.db``.
    """
    folder = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    removed = 0
    for path in folder.glob("*.db"):
        pid = path.stem.rpartition("_")[2]
        if pid.isdigit() and not _process_alive(int(pid)):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by another user
    return True


def metrics_process_dead(*, pid: int) -> None:
    """Drop the live-gauge files (``livesum``, ``liveall``, …) of the exited process ``pid``."""
    mark_process_dead(pid)
