"""Arrival models of the load benchmark's paced phases, and how bursty a phase's starts were.

Kept apart from ``benchmarks/locustfile.py`` (which imports locust, and locust patches the
standard library with gevent on import) so that tests and :mod:`benchmarks.load` can use them.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def poisson_throughput(
    task_runs_per_second: float, seed: int, clock: Callable[[], float] = time.perf_counter
) -> Callable[[Any], float]:
    """A locust ``wait_time`` whose gaps between one user's task starts are exponential with mean
    ``1 / task_runs_per_second`` s (a Poisson process of that rate), drawn from a generator per
    user seeded with ``seed`` plus the user's number (0, 1, … in the order the users first wait on this function).

    The starts of ``n`` such users together are a Poisson process of ``n ×`` the rate, the
    standard model of independent clients (Kleinrock, *Queueing Systems* I, 1975, §2.1; the open
    arrivals of Schroeder, Wierman and Harchol-Balter, "Open versus closed: a cautionary tale",
    NSDI 2006), as long as the server answers within the gaps. Shaped like locust's
    ``constant_throughput``: the wait returned (s, ≥ 0) is the drawn gap less the time the last
    task took, so a task slower than its gap is followed at once (a user never has two requests
    out). ``clock`` gives the time in seconds (``time.perf_counter``; a test gives its own).
    Raises ``ValueError`` when the rate is not positive.
    """
    if task_runs_per_second <= 0:
        raise ValueError(f"task_runs_per_second must be > 0, not {task_runs_per_second}")
    user_numbers = itertools.count()

    def wait_time_func(user: Any) -> float:
        now = clock()
        if not hasattr(user, "_pp_random"):
            user._pp_random = random.Random(seed + next(user_numbers))
            user._pp_last_run, user._pp_last_wait = now, 0.0
        run_time = now - user._pp_last_run - user._pp_last_wait
        user._pp_last_wait = max(0.0, user._pp_random.expovariate(task_runs_per_second) - run_time)
        user._pp_last_run = now
        return user._pp_last_wait

    return wait_time_func


def arrival_pattern(records: list[dict[str, Any]]) -> dict[str, float]:
    """How bursty a phase's request starts were, from the client's records (``t``: start, Unix s;
    ``ms``: latency, ms; a record without ``ms`` counts as answered at once).

    - ``gap_cv``: coefficient of variation of the gaps between consecutive starts of all users
      together (1 for a Poisson process, 0 for evenly spaced starts; above 1, bursts);
    - ``starts_in_100ms_p95`` / ``_max``: starts in the 100 ms from each start, that one
      included (p95, max);
    - ``in_flight_at_start_mean`` / ``_p95``: requests of the phase already out and not yet
      answered when a request starts (what it queues behind, as the client sees it).

    Empty when there are fewer than 3 records.
    """
    starts = sorted((r["t"], r["t"] + r.get("ms", 0.0) / 1000) for r in records)
    if len(starts) < 3:
        return {}
    t = np.array([s for s, _ in starts])
    ends = np.array([e for _, e in starts])
    gaps = np.diff(t)
    within = np.searchsorted(t, t + 0.1, side="left") - np.arange(len(t))
    in_flight = np.array([int(np.sum(ends[:i] > t[i])) for i in range(len(t))])
    return {
        "gap_cv": round(float(gaps.std() / gaps.mean()), 2) if gaps.mean() > 0 else 0.0,
        "starts_in_100ms_p95": float(np.percentile(within, 95)),
        "starts_in_100ms_max": int(within.max()),
        "in_flight_at_start_mean": round(float(in_flight.mean()), 2),
        "in_flight_at_start_p95": float(np.percentile(in_flight, 95)),
    }
