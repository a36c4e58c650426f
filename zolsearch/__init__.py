"""ZOL Search project package: settings, URLs, the Celery app, the API root and the pipeline."""

from zolsearch.celery import app as celery_app

__all__ = ["celery_app"]
