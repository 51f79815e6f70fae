"""Keep the export files of a frozen release (written at freeze), and close the gaps in the database guards.

Guards added, on top of 0002's:

- SQLite: DELETE of a frozen release, of its pinned items and of its files; INSERT and UPDATE of its files.
  (``core.backends.sqlite3`` flushes with triggers switched off, as TRUNCATE skips row triggers on PostgreSQL,
  so these no longer stop the test suite's flush.)
- PostgreSQL: every change to a frozen release's files (row trigger), and TRUNCATE of the release tables while a
  frozen release exists, unless the same statement also empties every frozen release and every item revision
  (``flush`` truncates every table at once: nothing is left for a release to point at).
- Both: DELETE of an item revision that a frozen release pins (FK ``PROTECT`` stops the ORM only).

A migration reads historical models only, and writing export files takes the whole export code (records, dataset
card, manifest) as it stands at freeze: a database holding a release frozen before this migration (only a local
demo database built by an older tree could) is refused with a message, as ``demo_database_prepare`` refuses any
database it cannot rebuild. Migrate into a new, empty database instead (docs/development.md, Migrations).
"""

import django.db.models.deletion
from django.db import migrations, models

REFUSE = "BEGIN SELECT RAISE(ABORT, 'frozen release cannot change'); END"
RELEASE_OF = "(SELECT status FROM releases_release WHERE id = {row}.release_id) = 'frozen'"
PINNED = """EXISTS (SELECT 1 FROM releases_releaseitem ri JOIN releases_release r ON r.id = ri.release_id
                    WHERE ri.revision_id = OLD.id AND r.status = 'frozen')"""

SQLITE = [
    f"CREATE TRIGGER release_frozen_no_delete BEFORE DELETE ON releases_release WHEN OLD.status = 'frozen' {REFUSE}",
    f"""CREATE TRIGGER releaseitem_frozen_no_delete BEFORE DELETE ON releases_releaseitem
        WHEN {RELEASE_OF.format(row="OLD")} {REFUSE}""",
    f"""CREATE TRIGGER releasefile_frozen_no_insert BEFORE INSERT ON releases_releasefile
        WHEN {RELEASE_OF.format(row="NEW")} {REFUSE}""",
    f"""CREATE TRIGGER releasefile_frozen_no_update BEFORE UPDATE ON releases_releasefile
        WHEN {RELEASE_OF.format(row="OLD")} OR {RELEASE_OF.format(row="NEW")} {REFUSE}""",
    f"""CREATE TRIGGER releasefile_frozen_no_delete BEFORE DELETE ON releases_releasefile
        WHEN {RELEASE_OF.format(row="OLD")} {REFUSE}""",
    f"""CREATE TRIGGER itemrevision_pinned_no_delete BEFORE DELETE ON items_itemrevision WHEN {PINNED}
        BEGIN SELECT RAISE(ABORT, 'a revision pinned by a frozen release cannot be deleted'); END""",
]
SQLITE_REVERSE = [
    "DROP TRIGGER IF EXISTS release_frozen_no_delete",
    "DROP TRIGGER IF EXISTS releaseitem_frozen_no_delete",
    "DROP TRIGGER IF EXISTS releasefile_frozen_no_insert",
    "DROP TRIGGER IF EXISTS releasefile_frozen_no_update",
    "DROP TRIGGER IF EXISTS releasefile_frozen_no_delete",
    "DROP TRIGGER IF EXISTS itemrevision_pinned_no_delete",
]

RELEASE_TABLES = ["releases_release", "releases_releaseitem", "releases_releasefile"]
POSTGRES = [
    # 0002's function checks OLD.release_id and NEW.release_id: a file belongs to its release as an item does.
    """CREATE TRIGGER releasefile_frozen_guard BEFORE INSERT OR UPDATE OR DELETE ON releases_releasefile
       FOR EACH ROW EXECUTE FUNCTION eistudio_refuse_frozen_release_item()""",
    f"""CREATE OR REPLACE FUNCTION eistudio_refuse_pinned_revision_delete() RETURNS trigger AS $$
       BEGIN
         IF {PINNED} THEN
           RAISE EXCEPTION 'a revision pinned by a frozen release cannot be deleted'
             USING ERRCODE = 'integrity_constraint_violation';
         END IF;
         RETURN OLD;
       END $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER itemrevision_pinned_guard BEFORE DELETE ON items_itemrevision
       FOR EACH ROW EXECUTE FUNCTION eistudio_refuse_pinned_revision_delete()""",
    # Before the truncation: note (for this transaction) that a frozen release exists.
    """CREATE OR REPLACE FUNCTION eistudio_note_frozen_truncate() RETURNS trigger AS $$
       BEGIN
         IF EXISTS (SELECT 1 FROM releases_release WHERE status = 'frozen') THEN
           PERFORM set_config('eistudio.truncating_frozen', 'on', true);
         END IF;
         RETURN NULL;
       END $$ LANGUAGE plpgsql""",
    # After it (every table of the statement is empty by now): refuse unless the frozen releases went whole, and
    # with them every item revision, as in a flush of the whole database.
    """CREATE OR REPLACE FUNCTION eistudio_refuse_frozen_truncate() RETURNS trigger AS $$
       BEGIN
         IF current_setting('eistudio.truncating_frozen', true) = 'on' THEN
           PERFORM set_config('eistudio.truncating_frozen', '', true);
           IF EXISTS (SELECT 1 FROM releases_release WHERE status = 'frozen')
              OR EXISTS (SELECT 1 FROM items_itemrevision) THEN
             RAISE EXCEPTION 'frozen release cannot change' USING ERRCODE = 'integrity_constraint_violation';
           END IF;
         END IF;
         RETURN NULL;
       END $$ LANGUAGE plpgsql""",
    *[
        statement
        for table in RELEASE_TABLES
        for statement in (
            f"""CREATE TRIGGER {table}_truncate_note BEFORE TRUNCATE ON {table}
                FOR EACH STATEMENT EXECUTE FUNCTION eistudio_note_frozen_truncate()""",
            f"""CREATE TRIGGER {table}_truncate_guard AFTER TRUNCATE ON {table}
                FOR EACH STATEMENT EXECUTE FUNCTION eistudio_refuse_frozen_truncate()""",
        )
    ],
]
POSTGRES_REVERSE = [
    *[
        f"DROP TRIGGER IF EXISTS {table}_truncate_{kind} ON {table}"
        for table in RELEASE_TABLES
        for kind in ("note", "guard")
    ],
    "DROP TRIGGER IF EXISTS itemrevision_pinned_guard ON items_itemrevision",
    "DROP TRIGGER IF EXISTS releasefile_frozen_guard ON releases_releasefile",
    "DROP FUNCTION IF EXISTS eistudio_refuse_frozen_truncate()",
    "DROP FUNCTION IF EXISTS eistudio_note_frozen_truncate()",
    "DROP FUNCTION IF EXISTS eistudio_refuse_pinned_revision_delete()",
]


def run(statements_by_vendor):
    def apply(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return apply


def refuse_releases_frozen_before(apps, schema_editor):
    Release = apps.get_model("releases", "Release")
    frozen = sorted(
        f"{slug} {version}"
        for slug, version in Release.objects.filter(status="frozen").values_list("benchmark__slug", "version")
    )
    if frozen:
        raise RuntimeError(
            f"Release(s) {', '.join(frozen)} were frozen before releases kept their export files, and a migration "
            "cannot write those files (it reads historical models, not the export code). Migrate into a new, "
            "empty database instead (docs/development.md, Migrations)."
        )


class Migration(migrations.Migration):
    dependencies = [
        ("items", "0002_immutable_revisions"),
        ("releases", "0002_frozen_guard"),
        ("screening", "0002_default_criteria"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReleaseFile",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, verbose_name="file name")),
                ("content", models.BinaryField(verbose_name="content")),
                ("size", models.PositiveBigIntegerField(verbose_name="bytes")),
                ("sha256", models.CharField(max_length=64, verbose_name="SHA-256")),
                (
                    "release",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="files", to="releases.release"
                    ),
                ),
            ],
            options={
                "verbose_name": "release file",
                "verbose_name_plural": "release files",
                "ordering": ["release", "name"],
                "constraints": [models.UniqueConstraint(fields=("release", "name"), name="release_file_name_unique")],
            },
        ),
        migrations.RunPython(refuse_releases_frozen_before, migrations.RunPython.noop),
        migrations.RunPython(
            run({"sqlite": SQLITE, "postgresql": POSTGRES}),
            run({"sqlite": SQLITE_REVERSE, "postgresql": POSTGRES_REVERSE}),
        ),
    ]
