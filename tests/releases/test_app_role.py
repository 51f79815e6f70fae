"""The application's database role cannot switch the frozen-release guards off (issue 28, item 4; docs/deploy.md,
*The database roles*): it is granted SELECT, INSERT, UPDATE and DELETE but owns no table, so ``ALTER TABLE ... DISABLE
TRIGGER``, dropping or replacing a guard and ``session_replication_role`` are refused, and the triggers refuse its
updates and deletes of a frozen release's rows. The table owner could rewrite a stored file and its SHA-256
together; the credentials the web process and the workers hold cannot.

PostgreSQL only (SQLite has no roles): skipped on SQLite with the reason, unless REQUIRE_POSTGRES=1 (CI).
"""

import os
import secrets

import pytest
from django.db import connection

from annotation.releases.models import ReleaseFile

pytestmark = pytest.mark.django_db(transaction=True)

# The grants docs/deploy.md gives the application's role (``eistudio_app`` there).
GRANTS = [
    "GRANT CONNECT ON DATABASE {database} TO {role}",
    "GRANT USAGE ON SCHEMA public TO {role}",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
    "GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {role}",
]


@pytest.fixture
def app_role():
    """Create a role as docs/deploy.md describes the application's, and connect as it (dropped afterwards)."""
    if connection.vendor != "postgresql":
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail("REQUIRE_POSTGRES=1 but the tests do not run on PostgreSQL (set DATABASE_URL)")
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): SQLite has no roles")
    import psycopg
    from psycopg import sql

    role, password = f"eistudio_app_test_{secrets.token_hex(4)}", secrets.token_urlsafe(16)
    settings = connection.settings_dict
    with connection.cursor() as cursor:
        cursor.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), password).as_string())
        for grant in GRANTS:
            cursor.execute(
                sql.SQL(grant).format(database=sql.Identifier(settings["NAME"]), role=sql.Identifier(role)).as_string()
            )
    app = psycopg.connect(
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        dbname=settings["NAME"],
        user=role,
        password=password,
        autocommit=True,
    )
    try:
        yield app
    finally:
        app.close()
        with connection.cursor() as cursor:
            cursor.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)).as_string())
            cursor.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)).as_string())


def refused(app, statement: str, params: tuple = ()) -> str:
    """Run ``statement`` as the application's role; return the error PostgreSQL refused it with."""
    import psycopg

    with pytest.raises(psycopg.Error) as raised, app.cursor() as cursor:
        cursor.execute(statement, params)
    return f"{raised.value.sqlstate}: {raised.value}"


def test_the_application_role_cannot_disable_the_guards_or_rewrite_a_frozen_release(frozen, app_role):
    stored = ReleaseFile.objects.get(release=frozen, name="items.csv")
    with app_role.cursor() as cursor:
        # The grants are real: the role reads and may write what is not frozen.
        cursor.execute("SELECT sha256 FROM releases_releasefile WHERE id = %s", [stored.pk])
        assert cursor.fetchone()[0] == stored.sha256
        cursor.execute("UPDATE releases_release SET title = title WHERE status = 'draft'")
        cursor.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
        assert cursor.fetchone()[1] is False

    # 42501 insufficient_privilege: only the owner (or a superuser) may switch a trigger off, drop or replace it.
    for statement in (
        "ALTER TABLE releases_releasefile DISABLE TRIGGER releasefile_frozen_guard",
        "ALTER TABLE releases_releasefile DISABLE TRIGGER ALL",
        "ALTER TABLE releases_release DISABLE TRIGGER USER",
        "DROP TRIGGER releasefile_frozen_guard ON releases_releasefile",
        "CREATE OR REPLACE FUNCTION eistudio_refuse_frozen_release_item() RETURNS trigger AS $$ BEGIN RETURN NEW; END "
        "$$ LANGUAGE plpgsql",
        "SET session_replication_role = replica",
        "TRUNCATE releases_releasefile CASCADE",
    ):
        error = refused(app_role, statement)
        assert error.startswith("42501: "), (statement, error)

    # 23000 integrity_constraint_violation: the guard refuses the rewrite (bytes and digest together) and the delete.
    forged = b"uid\nforged\n"
    for statement, params in (
        (
            "UPDATE releases_releasefile SET content = %s, size = %s, sha256 = %s WHERE id = %s",
            (forged, len(forged), "0" * 64, stored.pk),
        ),
        ("DELETE FROM releases_releasefile WHERE id = %s", (stored.pk,)),
        ("UPDATE releases_release SET title = 'forged' WHERE id = %s", (frozen.pk,)),
        ("DELETE FROM releases_releaseitem WHERE release_id = %s", (frozen.pk,)),
    ):
        error = refused(app_role, statement, params)
        assert error.startswith("23000: frozen release cannot change"), (statement, error)

    stored.refresh_from_db()
    assert bytes(stored.content) != forged and stored.sha256 != "0" * 64
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgenabled FROM pg_trigger WHERE tgname = 'releasefile_frozen_guard' AND NOT tgisinternal"
        )
        assert cursor.fetchone()[0] == "O", "the guard is still enabled"
