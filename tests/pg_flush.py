"""Empty the PostgreSQL test database after a transactional test with ``DELETE`` instead of ``TRUNCATE``.

Every test that uses ``transactional_db`` (``live_server``, worker processes, the browser) ends with Django's
``flush``: on PostgreSQL one ``TRUNCATE`` of every table, which gives each table, index and TOAST table a new file
and costs seconds per test on a loaded machine, for tables that hold a few rows. ``DELETE`` of the same tables leaves
the same empty database at a fraction of the cost. Like ``TRUNCATE``, it fires no row trigger (the frozen-release
guards would refuse it) and checks no foreign key half-way: ``session_replication_role = replica`` for the flush's
transaction only, which needs a superuser (CI's and the local cluster's ``postgres``). Everything else of ``flush``
is unchanged (the ``post_migrate`` signal rebuilds content types, permissions and the role groups).

Used only when the flush empties every table of the models with sequences kept and no cascade, the teardown of a
transactional test; any other flush (a subset, ``RESTART IDENTITY``, ``CASCADE``, a non-superuser) is Django's own.
"""

from django.db.backends.postgresql.operations import DatabaseOperations

_truncate_sql_flush = DatabaseOperations.sql_flush


def _superuser(connection: object) -> bool:
    cached = getattr(connection, "_eistudio_test_superuser", None)
    if cached is None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('is_superuser') = 'on'")
            cached = bool(cursor.fetchone()[0])
        connection._eistudio_test_superuser = cached
    return cached


def _delete_sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):  # noqa: ANN001, ANN202
    connection = self.connection
    if tables and not reset_sequences and not allow_cascade and _superuser(connection):
        every_table = set(connection.introspection.django_table_names(only_existing=True, include_views=False))
        if set(tables) == every_table:
            return ["SET LOCAL session_replication_role = replica"] + [
                f"DELETE FROM {self.quote_name(table)}" for table in tables
            ]
    return _truncate_sql_flush(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)


def install() -> None:
    """Make the test session's flushes on PostgreSQL delete rows (see the module's docstring)."""
    DatabaseOperations.sql_flush = _delete_sql_flush
