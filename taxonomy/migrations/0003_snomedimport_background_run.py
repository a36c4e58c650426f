"""SNOMED CT imports become background runs (``core.runs.BackgroundRun``): pending status,
progress (``done`` of ``total`` files), worker, code version, ``created_at``; ``started_at``
becomes the time a worker claimed the run. Existing rows are mapped by migration 0004."""

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("taxonomy", "0002_snomed_term_fulltext")]

    operations = [
        migrations.AlterModelOptions(name="snomedimport", options={"ordering": ["-created_at"]}),
        migrations.AddField(
            model_name="snomedimport",
            name="created_at",
            field=models.DateTimeField(auto_now_add=True, default=django.utils.timezone.now),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="snomedimport",
            name="total",
            field=models.PositiveIntegerField(default=0, help_text="Units to process (records, questions)."),
        ),
        migrations.AddField(
            model_name="snomedimport",
            name="done",
            field=models.PositiveIntegerField(default=0, help_text="Units processed so far."),
        ),
        migrations.AddField(
            model_name="snomedimport",
            name="worker",
            field=models.CharField(blank=True, help_text="host:pid of the worker that ran it.", max_length=200),
        ),
        migrations.AddField(
            model_name="snomedimport",
            name="code_version",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AlterField(
            model_name="snomedimport",
            name="status",
            field=models.CharField(
                choices=[
                    ("pending", "Pending"),
                    ("running", "Running"),
                    ("succeeded", "Succeeded"),
                    ("failed", "Failed"),
                ],
                db_index=True,
                default="pending",
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="snomedimport",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
