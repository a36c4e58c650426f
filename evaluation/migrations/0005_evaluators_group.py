"""The "Evaluators" group: golden sets, runs, studies, judgements, answers and the pipeline's
flags (least privilege: no content, no taxonomy). Only this group's members (and superusers)
may launch ablation studies or apply their recommendations to the live flags."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "Evaluators"
PERMISSIONS = {
    "evaluation": [
        "view_goldenset", "add_goldenset", "change_goldenset",
        "view_goldenquestion", "add_goldenquestion", "change_goldenquestion",
        "view_evaluationrun", "add_evaluationrun",
        "view_evaluationresult", "view_judgement",
        "view_ablationstudy", "add_ablationstudy", "change_ablationstudy", "apply_recommendations",
        "view_ablationconfiguration",
    ],
    "search": ["view_answer", "view_pipelineflag", "change_pipelineflag", "view_pipelineflagchange"],
}  # fmt: skip


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    for app_config in apps.get_app_configs():  # permissions are made after migrate otherwise
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    for app_label, codenames in PERMISSIONS.items():
        found = Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames)
        missing = set(codenames) - set(found.values_list("codename", flat=True))
        if missing:
            raise RuntimeError(f"permissions not found: {sorted(missing)}")
        group.permissions.add(*found)


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0004_ablation_study"),
        ("search", "0006_pipeline_flags"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
