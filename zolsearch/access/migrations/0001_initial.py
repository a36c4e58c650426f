"""Staff API tokens, the audit trail of answer views and the rate counters (UNLOGGED: cheap
writes, emptied after a crash of PostgreSQL, which only forgives the current window)."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='RateCounter',
            fields=[
                ('key', models.CharField(max_length=100, primary_key=True, serialize=False)),
                ('window_start', models.DateTimeField(db_index=True)),
                ('hits', models.PositiveIntegerField(default=0)),
            ],
            options={
                'verbose_name': 'rate counter',
            },
        ),
        migrations.CreateModel(
            name='StaffToken',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(help_text="What the token is for, e.g. 'taxonomy sync script'.", max_length=100)),
                ('prefix', models.CharField(editable=False, max_length=8, unique=True)),
                ('digest', models.CharField(editable=False, max_length=64)),
                ('created_by', models.CharField(blank=True, editable=False, max_length=150)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('expires_at', models.DateTimeField(blank=True, help_text='Empty: the token does not expire.', null=True)),
                ('last_used_at', models.DateTimeField(blank=True, editable=False, null=True)),
                ('revoked_at', models.DateTimeField(blank=True, editable=False, null=True)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='staff_tokens', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'staff API token',
                'ordering': ['-created_at'],
            },
        ),
        migrations.CreateModel(
            name='AuditEntry',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                ('username', models.CharField(max_length=150)),
                ('action', models.CharField(choices=[('answers_viewed', 'Answers viewed')], default='answers_viewed', max_length=32)),
                ('where', models.CharField(max_length=100)),
                ('answer_ids', django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), default=list, size=None)),
                ('user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'audit entry',
                'verbose_name_plural': 'audit entries',
                'ordering': ['-at'],
                'indexes': [django.contrib.postgres.indexes.GinIndex(fields=['answer_ids'], name='access_audit_answer_ids_gin')],
            },
        ),
        migrations.RunSQL(
            "ALTER TABLE access_ratecounter SET UNLOGGED",
            reverse_sql="ALTER TABLE access_ratecounter SET LOGGED",
        ),
    ]
