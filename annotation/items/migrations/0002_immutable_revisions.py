"""A database trigger that refuses changes to item revisions, whatever the client.

SQLite's flush (used between transactional tests) deletes rows with DELETE, so only UPDATE is refused by the
trigger; deletes are refused by the model and queryset.
"""

from django.db import migrations

STATEMENTS = {
    "sqlite": [
        """CREATE TRIGGER itemrevision_no_update BEFORE UPDATE ON items_itemrevision
           BEGIN SELECT RAISE(ABORT, 'item revisions are immutable'); END""",
    ],
    "postgresql": [
        """CREATE OR REPLACE FUNCTION eistudio_refuse_revision_update() RETURNS trigger AS $$
           BEGIN RAISE EXCEPTION 'item revisions are immutable' USING ERRCODE = 'integrity_constraint_violation'; END $$ LANGUAGE plpgsql""",
        """CREATE TRIGGER itemrevision_immutable BEFORE UPDATE ON items_itemrevision
           FOR EACH ROW EXECUTE FUNCTION eistudio_refuse_revision_update()""",
    ],
}
REVERSE = {
    "sqlite": ["DROP TRIGGER IF EXISTS itemrevision_no_update"],
    "postgresql": [
        "DROP TRIGGER IF EXISTS itemrevision_immutable ON items_itemrevision",
        "DROP FUNCTION IF EXISTS eistudio_refuse_revision_update()",
    ],
}


def run(statements_by_vendor):
    def apply(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [("items", "0001_initial")]

    operations = [migrations.RunPython(run(STATEMENTS), run(REVERSE))]
