"""Values read from the database and held per process for a maximum age.

A web worker reads some small tables on every request (the pipeline's flag rows, the editors'
taxonomy); holding them for ``settings.PIPELINE_CONFIG_MAX_AGE_S`` seconds (default 2) saves
those round trips, and a change reaches every worker within that time (docs/BENCHMARKS.md,
"Fewer round trips"). Used by :func:`zolsearch.search.config.pipeline_config_live` and
:func:`taxonomy.resolver.lookup_terms_live`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import connection


def held_max_age_s() -> float | None:
    """The maximum age (s) a held value may have now, or None when it must be read every time:
    ``settings.PIPELINE_CONFIG_MAX_AGE_S`` is 0, or the caller is inside a transaction (tests, an
    atomic block), where rows the transaction wrote are visible only to it."""
    max_age_s = float(settings.PIPELINE_CONFIG_MAX_AGE_S)
    if max_age_s <= 0 or connection.in_atomic_block or not connection.get_autocommit():
        return None
    return max_age_s


class MaxAgeHeld[T]:
    """``read()``'s value held per process, read again once older than the maximum age given to
    :meth:`get`, and after :meth:`clear`. Thread-safe (gunicorn threads share it): ``read`` runs
    under the lock, so a :meth:`clear` waits for a read in progress and then discards it."""

    def __init__(self, read: Callable[[], T]) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._value: tuple[float, T] | None = None  # (time.monotonic() of the read, value)

    def get(self, max_age_s: float) -> T:
        """The held value, read first when there is none or it is ``max_age_s`` seconds old."""
        with self._lock:
            now = time.monotonic()
            if self._value is None or now - self._value[0] >= max_age_s:
                self._value = (now, self._read())
            return self._value[1]

    def clear(self) -> None:
        """Forget the value (no database access): the next :meth:`get` reads it."""
        with self._lock:
            self._value = None
