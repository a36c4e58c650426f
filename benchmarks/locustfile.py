"""Locust user for :mod:`benchmarks.load`: patients posting questions to ``/api/v1/search``.

Run by ``benchmarks/load.py`` as ``locust -f benchmarks/locustfile.py --headless …``; configured
through the environment (the orchestrator sets every variable):

- ``LOAD_QUESTIONS``: JSON file, a list of ``{"question": str, "language": "nl"|"en", "set": str}``.
- ``LOAD_RECORDS``: JSONL file this run appends one line per request to: ``t`` (start, Unix s),
  ``ms`` (latency measured by the client, ms), ``status`` (HTTP status, 0 when the connection
  failed), ``outcome``, ``cache_hit`` (the semantic cache served it), ``timings_ms`` (the
  answer's per-stage times), ``error`` (None or why the request failed), ``qi`` (question index).
- ``LOAD_OFFSET``: index of the first question (questions are taken in turn by all users, so each
  text is sent once until the list is used up, then again from the start).
- ``LOAD_MAX_REQUESTS``: stop the whole run after this many requests (besides ``--run-time``).
- ``LOAD_TOTAL_RPS``: 0 for closed-loop users (each sends its next request as soon as the answer
  is back); above 0, each of the ``LOAD_USERS`` users is paced to ``LOAD_TOTAL_RPS / LOAD_USERS``
  requests per second, an open-loop rate as long as the server keeps up, with the gaps between
  one user's request starts given by ``LOAD_ARRIVALS``:

  - ``cadence``: locust's ``constant_throughput``, every gap exactly ``LOAD_USERS /
    LOAD_TOTAL_RPS`` s. The users' phases stay where locust's spawning and the first answers put
    them, so their requests can come in bursts (measured in five runs on 2026-11-27: a
    coefficient of variation of 1.15 to 1.99 of the gaps between consecutive starts of all
    users, 8 starts within 100 ms in every run; docs/BENCHMARKS.md);
  - ``poisson``: :func:`benchmarks.arrivals.poisson_throughput`, exponential gaps of the same
    mean, so that the starts of all users together are a Poisson process of ``LOAD_TOTAL_RPS`` a
    second (coefficient of variation 1), the standard model of independent clients.
- ``LOAD_SEED``: seed of the ``poisson`` gaps (each user draws from its own generator, seeded
  with this plus its number), so that a rerun draws the same gaps.

A request fails when the status is not 200, the body is not the answer's JSON, or it has no
``timings_ms``; a 429 (rate limit) is a failure too.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gevent
from locust import FastHttpUser, constant, constant_throughput, events, task
from locust.exception import StopUser

from benchmarks.arrivals import poisson_throughput

QUESTIONS: list[dict[str, str]] = json.loads(Path(os.environ["LOAD_QUESTIONS"]).read_text())
OFFSET = int(os.environ.get("LOAD_OFFSET", "0"))
MAX_REQUESTS = int(os.environ.get("LOAD_MAX_REQUESTS", "0")) or 10**9
TOTAL_RPS = float(os.environ.get("LOAD_TOTAL_RPS", "0"))
USERS = max(1, int(os.environ.get("LOAD_USERS", "1")))
ARRIVALS = os.environ.get("LOAD_ARRIVALS", "poisson")
SEED = int(os.environ.get("LOAD_SEED", "13"))
if ARRIVALS not in ("cadence", "poisson"):
    raise SystemExit(f"LOAD_ARRIVALS must be 'cadence' or 'poisson', not {ARRIVALS!r}")

# Open for the whole run (each request appends a line); flushed when the test stops.
_records = Path(os.environ["LOAD_RECORDS"]).open("a", encoding="utf-8")  # noqa: SIM115
_sent = 0


@events.test_stop.add_listener
def _close(**kwargs: Any) -> None:
    _records.flush()


def _wait_time() -> Callable[[Any], float]:
    if TOTAL_RPS <= 0:
        return constant(0)
    if ARRIVALS == "cadence":
        return constant_throughput(TOTAL_RPS / USERS)
    return poisson_throughput(TOTAL_RPS / USERS, SEED)


class Patient(FastHttpUser):
    """One client asking questions one after another (see the module docstring)."""

    wait_time = _wait_time()

    @task
    def ask(self) -> None:
        global _sent
        if _sent >= MAX_REQUESTS:
            raise StopUser()
        index = (OFFSET + _sent) % len(QUESTIONS)
        _sent += 1
        if _sent == MAX_REQUESTS:
            gevent.spawn_later(0, self.environment.runner.quit)  # the bound in count is reached
        question = QUESTIONS[index]["question"]
        record: dict[str, Any] = {"t": time.time(), "qi": index, "status": 0, "error": None}
        started = time.perf_counter()
        with self.client.post(
            "/api/v1/search", json={"question": question}, name="/api/v1/search", catch_response=True
        ) as response:
            record["ms"] = round((time.perf_counter() - started) * 1000, 3)
            record["status"] = response.status_code or 0
            try:
                body = response.json() if response.status_code == 200 else None
            except (ValueError, TypeError):
                body = None
            if body is None or "timings_ms" not in body:
                record["error"] = f"HTTP {response.status_code}: {(response.text or '')[:200]}"
                response.failure(record["error"])
            else:
                timings = body["timings_ms"]
                record["outcome"] = body.get("outcome")
                record["cache_hit"] = "semantic_cache" in timings and "dense" not in timings
                record["timings_ms"] = timings
                response.success()
        _records.write(json.dumps(record) + "\n")
