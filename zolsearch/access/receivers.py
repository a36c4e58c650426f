"""Signal receivers of the access app (connected in ``AccessConfig.ready``)."""

from __future__ import annotations

from typing import Any

from zolsearch.access.services import audit_answers_viewed, groups_sync


def groups_sync_after_migrate(sender: Any, using: str = "default", **kwargs: Any) -> None:
    """After every ``migrate`` (and test database flush): the groups as declared."""
    groups_sync(using=using)


def answers_viewed_record(sender: Any, user: Any, answer_ids: list[int], where: str, **kwargs: Any) -> None:
    """``zolsearch.search.services.answers_viewed_signal``: one audit entry."""
    audit_answers_viewed(user=user, answer_ids=answer_ids, where=where)
