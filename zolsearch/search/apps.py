from django.apps import AppConfig


class SearchConfig(AppConfig):
    """The online pipeline and the ``Answer`` record of every served answer."""

    name = "zolsearch.search"
    label = "search"
    verbose_name = "Search"

    def ready(self) -> None:
        from core.broker import broker_folders_ensure

        broker_folders_ensure()
