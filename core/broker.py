"""The embedded Celery broker's folders (kombu filesystem transport)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def broker_folders_ensure() -> None:
    """Create the filesystem broker's folders (a no-op for any other broker)."""
    for key in ("data_folder_in", "data_folder_out", "processed_folder"):
        folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get(key)
        if folder:
            Path(str(folder)).mkdir(parents=True, exist_ok=True)
