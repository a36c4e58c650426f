"""The Celery application. Broker from ``CELERY_BROKER_URL`` (embedded filesystem by default)."""

from __future__ import annotations

import os
from pathlib import Path

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")

app = Celery("zolsearch")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def broker_folders_ensure() -> None:
    """Create the filesystem broker's folders (a no-op for any other broker)."""
    from django.conf import settings

    for key in ("data_folder_in", "data_folder_out", "processed_folder"):
        folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get(key)
        if folder:
            Path(str(folder)).mkdir(parents=True, exist_ok=True)
