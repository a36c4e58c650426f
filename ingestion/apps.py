from django.apps import AppConfig


class IngestionConfig(AppConfig):
    """Sources → documents → chunks → embeddings."""

    name = "ingestion"
    verbose_name = "Ingestion"
