from django.apps import AppConfig
from django.core.signals import setting_changed
from django.db.models.signals import post_delete, post_migrate, post_save
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
        post_migrate.connect(_semantic_cache_clear, sender=self)
        from ingestion.models import Source
        from zolsearch.search.config import pipeline_config_live_clear, pipeline_config_rows_changed
        from zolsearch.search.models import PipelineFlag

        for model in (PipelineFlag, Source):
            uid = f"live-config-{model.__name__}"
            post_save.connect(pipeline_config_rows_changed, sender=model, dispatch_uid=uid)
            post_delete.connect(pipeline_config_rows_changed, sender=model, dispatch_uid=uid)
        setting_changed.connect(pipeline_config_live_clear, dispatch_uid="live-config-settings")


def _flags_ensure(**kwargs: object) -> None:
    """After ``migrate``: a row for every catalogued pipeline flag (the admin lists them all)."""
    from zolsearch.search.services import pipeline_flags_ensure

    pipeline_flags_ensure()


def _semantic_cache_clear(**kwargs: object) -> None:
    """After ``migrate`` (every deployment and every ``serve`` start runs it): forget the semantic
    cache. Its key (configuration hash, index version, language) does not change when the code
    does, and a new version of the pipeline may answer the same question differently; a cached
    answer of the previous code would be served until the index or the configuration changed."""
    from zolsearch.search.models import SemanticCacheEntry

    SemanticCacheEntry.objects.all().delete()
