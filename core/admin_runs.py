"""Admin pieces every background-run kind shares."""

from __future__ import annotations

from django.contrib import admin
from django.utils.html import format_html

from core.runs import BackgroundRun


class BackgroundRunAdminMixin:
    """A progress column (a ``<progress>`` bar with ``done / total`` and the percentage) and the
    run machinery's fields read-only."""

    run_readonly_fields = (
        "status",
        "total",
        "done",
        "error",
        "worker",
        "code_version",
        "created_at",
        "started_at",
        "finished_at",
    )

    @admin.display(description="progress")
    def progress(self, obj: BackgroundRun) -> str:
        return format_html(
            '<progress value="{}" max="{}" title="{} / {}"></progress> {}%',
            obj.done,
            obj.total or 1,
            obj.done,
            obj.total,
            obj.progress_percent,
        )
