from django.apps import AppConfig


class ZolsearchConfig(AppConfig):
    """The project wiring as an app, so its management commands (``serve``, ``demo_setup``) load."""

    name = "zolsearch"
    verbose_name = "ZOL Search"
