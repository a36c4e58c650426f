from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class AccessConfig(AppConfig):
    """Groups synced after every migrate (so models added later are covered), staff API tokens,
    request limits and the audit trail of answer views."""

    name = "zolsearch.access"
    label = "access"
    verbose_name = _("Access and privacy")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from zolsearch.access import receivers
        from zolsearch.search.services import answers_viewed_signal

        post_migrate.connect(receivers.groups_sync_after_migrate, sender=self, dispatch_uid="access-groups-sync")
        answers_viewed_signal.connect(receivers.answers_viewed_record, dispatch_uid="access-answers-viewed")
