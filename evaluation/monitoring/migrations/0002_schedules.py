"""The daily schedules of the drift check and the retention purge, as django-celery-beat rows
(editable in the admin: *Periodic tasks*). Created once; a row an editor changed or deleted is
left as it is (get_or_create by name)."""

from zoneinfo import ZoneInfo

from django.conf import settings
from django.db import migrations

# Local time. The drift check runs after midnight, so its one-day window is about the day
# before (and background judging has had time to judge that day's last answers); the purge
# runs at night, when traffic is lowest.
SCHEDULES = (
    (
        "Daily drift check",
        "evaluation.monitoring.tasks.drift_check_task",
        {"minute": "30", "hour": "0"},
        "KL divergence of gate and judge scores and the refusal, red-flag and fallback rates of the last "
        "day against the 7 days before; writes a drift check and its alerts (issue 12, seed 002).",
    ),
    (
        "Daily retention purge",
        "evaluation.monitoring.tasks.retention_purge_task",
        {"minute": "30", "hour": "3"},
        "Deletes answers, feedback and judgements older than RETENTION_DAYS; golden sets and evaluation "
        "data stay (issue 13).",
    ),
)


def schedules_create(apps, schema_editor):
    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, task, when, description in SCHEDULES:
        if PeriodicTask.objects.filter(name=name).exists():
            continue
        crontab, _ = CrontabSchedule.objects.get_or_create(
            day_of_week="*",
            day_of_month="*",
            month_of_year="*",
            timezone=ZoneInfo(settings.TIME_ZONE),
            **when,
        )
        PeriodicTask.objects.create(name=name, task=task, crontab=crontab, description=description)


def schedules_delete(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=[name for name, *_ in SCHEDULES]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("monitoring", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedules_create, schedules_delete)]
