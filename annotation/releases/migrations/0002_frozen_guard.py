"""Database triggers that refuse changes to frozen releases and their pinned items, whatever the client.

SQLite's flush (used between transactional tests) deletes rows with DELETE, so on SQLite only UPDATE and
INSERT are refused by triggers; deletes are refused by the models and querysets. PostgreSQL refuses all three
(TRUNCATE, used by flush there, does not fire row triggers).
"""

from django.db import migrations

SQLITE = [
    """CREATE TRIGGER release_frozen_no_update BEFORE UPDATE ON releases_release
       WHEN OLD.status = 'frozen'
       BEGIN SELECT RAISE(ABORT, 'frozen release cannot change'); END""",
    """CREATE TRIGGER releaseitem_frozen_no_insert BEFORE INSERT ON releases_releaseitem
       WHEN (SELECT status FROM releases_release WHERE id = NEW.release_id) = 'frozen'
       BEGIN SELECT RAISE(ABORT, 'frozen release cannot change'); END""",
    """CREATE TRIGGER releaseitem_frozen_no_update BEFORE UPDATE ON releases_releaseitem
       WHEN (SELECT status FROM releases_release WHERE id = OLD.release_id) = 'frozen'
         OR (SELECT status FROM releases_release WHERE id = NEW.release_id) = 'frozen'
       BEGIN SELECT RAISE(ABORT, 'frozen release cannot change'); END""",
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS release_frozen_no_update",
    "DROP TRIGGER IF EXISTS releaseitem_frozen_no_insert",
    "DROP TRIGGER IF EXISTS releaseitem_frozen_no_update",
]

POSTGRES = [
    """CREATE OR REPLACE FUNCTION eistudio_refuse_frozen_release() RETURNS trigger AS $$
       BEGIN
         IF OLD.status = 'frozen' THEN RAISE EXCEPTION 'frozen release cannot change' USING ERRCODE = 'integrity_constraint_violation'; END IF;
         IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
         RETURN NEW;
       END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER release_frozen_guard BEFORE UPDATE OR DELETE ON releases_release
       FOR EACH ROW EXECUTE FUNCTION eistudio_refuse_frozen_release()""",
    """CREATE OR REPLACE FUNCTION eistudio_refuse_frozen_release_item() RETURNS trigger AS $$
       BEGIN
         IF TG_OP <> 'INSERT' AND (SELECT status FROM releases_release WHERE id = OLD.release_id) = 'frozen' THEN
           RAISE EXCEPTION 'frozen release cannot change' USING ERRCODE = 'integrity_constraint_violation';
         END IF;
         IF TG_OP <> 'DELETE' AND (SELECT status FROM releases_release WHERE id = NEW.release_id) = 'frozen' THEN
           RAISE EXCEPTION 'frozen release cannot change' USING ERRCODE = 'integrity_constraint_violation';
         END IF;
         IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
         RETURN NEW;
       END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER releaseitem_frozen_guard BEFORE INSERT OR UPDATE OR DELETE ON releases_releaseitem
       FOR EACH ROW EXECUTE FUNCTION eistudio_refuse_frozen_release_item()""",
]
POSTGRES_REVERSE = [
    "DROP TRIGGER IF EXISTS release_frozen_guard ON releases_release",
    "DROP TRIGGER IF EXISTS releaseitem_frozen_guard ON releases_releaseitem",
    "DROP FUNCTION IF EXISTS eistudio_refuse_frozen_release()",
    "DROP FUNCTION IF EXISTS eistudio_refuse_frozen_release_item()",
]


def run(statements_by_vendor):
    def apply(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


class Migration(migrations.Migration):
    dependencies = [("releases", "0001_initial")]

    operations = [
        migrations.RunPython(
            run({"sqlite": SQLITE, "postgresql": POSTGRES}),
            run({"sqlite": SQLITE_REVERSE, "postgresql": POSTGRES_REVERSE}),
        )
    ]
