from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class IngestionConfig(AppConfig):
    """Sources → documents → chunks → embeddings."""

    name = "ingestion"
    verbose_name = _("Ingestion")
