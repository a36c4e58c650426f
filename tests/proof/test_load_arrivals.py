"""The load benchmark's arrival models and burst measures (``benchmarks/arrivals.py``)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.arrivals import arrival_pattern, poisson_throughput


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _starts(rate: float, task_s: float, n: int, seed: int) -> np.ndarray:
    """Start times of one simulated user whose tasks take ``task_s`` seconds each."""
    clock = _Clock()
    wait = poisson_throughput(rate, seed, clock=clock)
    user = SimpleNamespace()
    starts = []
    for _ in range(n):
        starts.append(clock.now)
        clock.now += task_s
        clock.now += wait(user)
    return np.array(starts)


def test_poisson_gaps_have_the_rate_as_mean_and_a_coefficient_of_variation_of_one() -> None:
    gaps = np.diff(_starts(3.75, 0.0, 20_000, seed=13))
    assert gaps.mean() == pytest.approx(1 / 3.75, rel=0.03)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, abs=0.03)


def test_a_task_slower_than_its_gap_is_followed_at_once_and_the_mean_gap_is_kept_otherwise() -> None:
    # 50 ms tasks at 3.75/s: a gap is max(drawn, 50 ms), never less than the task.
    gaps = np.diff(_starts(3.75, 0.05, 20_000, seed=7))
    assert gaps.min() >= 0.05 - 1e-9
    assert np.isclose(gaps, 0.05).mean() == pytest.approx(1 - np.exp(-3.75 * 0.05), abs=0.01)


def test_the_same_seed_draws_the_same_gaps() -> None:
    assert np.array_equal(_starts(2.0, 0.01, 50, seed=3), _starts(2.0, 0.01, 50, seed=3))
    assert not np.array_equal(_starts(2.0, 0.01, 50, seed=3), _starts(2.0, 0.01, 50, seed=4))


def test_a_rate_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        poisson_throughput(0.0, 1)


def test_evenly_spaced_starts_have_no_spread_and_the_expected_overlap() -> None:
    # Every 62.5 ms (exact in binary) a request that takes 130 ms: two earlier ones are still out
    # at each start.
    records = [{"t": i * 0.0625, "ms": 130.0} for i in range(200)]
    pattern = arrival_pattern(records)
    assert pattern["gap_cv"] == pytest.approx(0.0, abs=1e-6)
    assert pattern["starts_in_100ms_max"] == 2  # t and t + 62.5 ms
    assert pattern["in_flight_at_start_p95"] == 2.0
    assert pattern["in_flight_at_start_mean"] == pytest.approx(2.0, abs=0.02)


def test_bursts_show_as_a_coefficient_of_variation_above_one() -> None:
    # 8 users starting within 10 ms of each other every 267 ms (the cadence's worst alignment).
    records = [{"t": c * 0.267 + u * 0.00125, "ms": 40.0} for c in range(100) for u in range(8)]
    pattern = arrival_pattern(records)
    assert pattern["gap_cv"] > 2.0
    assert pattern["starts_in_100ms_max"] == 8
    rng = random.Random(1)
    t, poisson = 0.0, []
    for _ in range(2000):
        t += rng.expovariate(30.0)
        poisson.append({"t": t, "ms": 40.0})
    assert arrival_pattern(poisson)["gap_cv"] == pytest.approx(1.0, abs=0.07)


def test_fewer_than_three_records_give_no_pattern() -> None:
    assert arrival_pattern([{"t": 1.0, "ms": 5.0}, {"t": 2.0}]) == {}
