"""Search indexes for the item list: trigram GIN indexes on PostgreSQL, and search_text with its CJK form.

Only indexes and a recomputation of the derived ``search_text``; no schema change (docs/performance.md).
"""

from django.contrib.postgres.operations import TrigramExtension
from django.db import migrations

from annotation.items.content import searchable_text

# Expressions exactly as Django writes ``icontains`` on PostgreSQL, so the planner matches them to the index.
INDEXES = {
    "items_item_uid_trgm": 'UPPER(("uid")::text)',
    "items_item_search_text_trgm": 'UPPER(("search_text")::text)',
}


def search_text_recompute(apps, schema_editor):
    Item = apps.get_model("items", "Item")
    changed = []
    items = (
        Item.objects.exclude(current_revision=None)
        .select_related("current_revision")
        .only("id", "search_text", "current_revision__content")
    )
    for item in items.iterator(chunk_size=1000):
        text = searchable_text(item.current_revision.content or {})
        if text != item.search_text:
            item.search_text = text
            changed.append(item)
        if len(changed) >= 1000:
            Item.objects.bulk_update(changed, ["search_text"])
            changed = []
    Item.objects.bulk_update(changed, ["search_text"])


def indexes_create(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, expression in INDEXES.items():
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON items_item USING gin (({expression}) gin_trgm_ops)"
        )


def indexes_drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("items", "0003_status_decisions")]

    operations = [
        TrigramExtension(),
        migrations.RunPython(search_text_recompute, migrations.RunPython.noop),
        migrations.RunPython(indexes_create, indexes_drop),
    ]
