from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MonitoringConfig(AppConfig):
    """Drift checks and alerts, retention purges; both run daily from django-celery-beat."""

    name = "evaluation.monitoring"
    label = "monitoring"
    verbose_name = _("Monitoring")
