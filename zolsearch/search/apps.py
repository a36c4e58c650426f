from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class SearchConfig(AppConfig):
    """The online pipeline and the ``Answer`` record of every served answer."""

    name = "zolsearch.search"
    label = "search"
    verbose_name = _("Search")

    def ready(self) -> None:
        from core.broker import broker_folders_ensure

        broker_folders_ensure()
        post_migrate.connect(_flags_ensure, sender=self)


def _flags_ensure(**kwargs: object) -> None:
    """After ``migrate``: a row for every catalogued pipeline flag (the admin lists them all)."""
    from zolsearch.search.services import pipeline_flags_ensure

    pipeline_flags_ensure()
