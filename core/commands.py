"""Management commands that need the migrated database."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


def migrations_unapplied(*, database: str = DEFAULT_DB_ALIAS) -> list[str]:
    """``"app.migration"`` names of the project's migrations not yet applied to ``database``, in
    the order ``migrate`` would apply them (empty when it is up to date). Opens the connection
    (an embedded server starts); raises what the database driver raises when it is unreachable."""
    executor = MigrationExecutor(connections[database])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{migration.app_label}.{migration.name}" for migration, _ in plan]


class DatabaseCommand(BaseCommand):
    """A command that reads or writes the project's tables. On a database that is not migrated
    (a fresh ``EMBEDDED_PGDATA`` folder, an upgrade without ``migrate``) it stops before doing
    anything with a :class:`CommandError` that says to run ``manage.py migrate``, instead of a
    "relation does not exist" traceback from the middle of its work."""

    def execute(self, *args: Any, **options: Any) -> str | None:
        pending = migrations_unapplied()
        if pending:
            shown = ", ".join(pending[:3]) + (f" and {len(pending) - 3} more" if len(pending) > 3 else "")
            raise CommandError(
                f"the database is not migrated ({len(pending)} migration(s) to apply: {shown}); "
                "run `manage.py migrate` first (with the same EMBEDDED_PGDATA or DATABASE_URL)"
            )
        return super().execute(*args, **options)
