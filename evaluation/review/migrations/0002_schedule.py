"""The schedule of the review queue sync, as a django-celery-beat row (editable in the admin:
*Periodic tasks*). Created once; a row an operator changed or deleted is left as it is.

Most answers reach the queue within seconds (the sync of one answer is queued when its
background judgement finishes or a patient gives feedback); this run every 10 minutes over the
last 2 days catches the rest (judging turned off, a broker outage)."""

import json

from django.db import migrations

NAME = "Review queue sync"
TASK = "evaluation.review.tasks.review_queue_sync_task"


def schedule_create(apps, schema_editor):
    IntervalSchedule = apps.get_model("django_celery_beat", "IntervalSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    if PeriodicTask.objects.filter(name=NAME).exists():
        return
    every, _ = IntervalSchedule.objects.get_or_create(every=10, period="minutes")
    PeriodicTask.objects.create(
        name=NAME,
        task=TASK,
        interval=every,
        kwargs=json.dumps({"days": 2}),
        description="Queues for review the answers of the last 2 days that qualify and are not queued yet "
        "(gate rejections, CRAG and guard refusals, red flags, low judge scores, thumbs down; issue 12).",
    )


def schedule_delete(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0001_initial"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedule_create, schedule_delete)]
