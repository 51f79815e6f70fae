"""search_text in search form (case folded, Han spelled in ASCII) and a trigram index on the column itself.

The item list matches a query in the same form with a case-sensitive LIKE, which the planner serves from the new
index; the old index on UPPER(search_text) is dropped (docs/performance.md).
"""

from django.db import migrations

from annotation.items.content import searchable_text

OLD = ("items_item_search_text_trgm", 'UPPER(("search_text")::text)')
NEW = ("items_item_search_form_trgm", '("search_text")::text')


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


def _swap(schema_editor, drop, create):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {drop[0]}")
    schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {create[0]} ON items_item USING gin (({create[1]}) gin_trgm_ops)")


def index_forward(apps, schema_editor):
    _swap(schema_editor, OLD, NEW)


def index_backward(apps, schema_editor):
    _swap(schema_editor, NEW, OLD)


class Migration(migrations.Migration):
    dependencies = [("items", "0006_signature_band_covering_index")]

    operations = [
        migrations.RunPython(search_text_recompute, migrations.RunPython.noop),
        migrations.RunPython(index_forward, index_backward),
    ]
