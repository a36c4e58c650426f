"""Real Celery worker processes for tests: the environment that points a worker at this test
process's embedded PostgreSQL server and test database, a worker context manager, and a switch
of this process's broker transport options."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from zolsearch.celery import app

BASE_DIR = Path(settings.BASE_DIR)


def worker_env(**overrides: str) -> dict[str, str]:
    """Environment of the worker: same embedded server and test database as this process."""
    env = dict(os.environ)
    for key in ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_BROKER_DIR", "CELERY_TASK_ALWAYS_EAGER"):
        env.pop(key, None)
    env.update(
        DJANGO_SETTINGS_MODULE="zolsearch.settings",
        EMBEDDED_PGDATA=str(settings.DATABASES["default"]["EMBEDDED_PGDATA"]),
        EMBEDDED_PGDATABASE=str(connection.settings_dict["NAME"]),  # the test database
        PYTHONUNBUFFERED="1",
    )
    env.update(overrides)
    return env


@contextlib.contextmanager
def worker(*, queue: str, env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """A ``celery worker --pool=solo`` process consuming ``queue``; always stopped on exit."""
    command = [
        sys.executable, "-m", "celery", "-A", "zolsearch", "worker",
        "--pool=solo", "-l", "WARNING", "-Q", queue, "-n", f"{queue}@%h",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=BASE_DIR, env=env, stdout=output, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)  # warm shutdown
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=30)


@contextlib.contextmanager
def broker_transport_options(options: dict[str, object]) -> Iterator[None]:
    """Make this process's Celery app use ``options`` for new connections; restored on exit."""
    original = app.conf.broker_transport_options
    app.conf.broker_transport_options = options
    try:
        yield
    finally:
        app.conf.broker_transport_options = original


def wait_for[T](predicate: Callable[[], T], *, process: subprocess.Popen, log: Path, what: str, timeout_s: float) -> T:
    """Poll ``predicate`` every 0.5 s until it returns something truthy, and return that; fail
    the test with the worker's log when the worker exits first or after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if process.poll() is not None:
            pytest.fail(f"worker exited with {process.returncode} before {what}:\n{log.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not done after {timeout_s:.0f} s; worker log:\n{log.read_text()}")
        time.sleep(0.5)


def filesystem_broker_make(folder: Path) -> dict[str, object]:
    """Create a fresh kombu filesystem broker under ``folder`` (queue, processed and control
    folders, as ``settings`` lays them out for ``CELERY_BROKER_DIR``) and return its transport
    options."""
    options: dict[str, object] = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }
    for name in ("queue", "processed", "control"):
        (folder / name).mkdir(parents=True)
    return options
