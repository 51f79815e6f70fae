"""The default screening criteria of the FACET pipeline (editable in the admin afterwards)."""

from django.db import migrations

from annotation.screening.criteria import DEFAULT_CRITERIA, default_criteria_create


def create(apps, schema_editor):
    default_criteria_create(apps.get_model("screening", "Criterion"))


def remove(apps, schema_editor):
    apps.get_model("screening", "Criterion").objects.filter(
        dimension=None, code__in=[d[0] for d in DEFAULT_CRITERIA]
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("screening", "0001_initial")]

    operations = [migrations.RunPython(create, remove)]
