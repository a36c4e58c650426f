from django.apps import AppConfig


class WebConfig(AppConfig):
    """The patient-facing pages: search at ``/``, feedback without JavaScript, the accessibility
    statement. Templates, static files and the page's own translations (``locale/``) live here."""

    name = "zolsearch.web"
    label = "web"
    verbose_name = "Patient search page"
