"""Django's SQLite backend, with a flush that empties tables the way TRUNCATE does on PostgreSQL.

Database triggers refuse to delete rows that must never change (a frozen release, its pinned items and files,
the item revisions it pins). ``flush`` (run between transactional tests, and by ``manage.py flush``) must still
empty every table. On PostgreSQL it uses TRUNCATE, which fires no row trigger; on SQLite it deletes row by row
in no fixed order, so here it runs with the connection's triggers switched off, and only for that statement list.
"""

import sqlite3

from django.db.backends.sqlite3 import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def execute_sql_flush(self, sql_list: list[str]) -> None:
        self.connection.ensure_connection()
        raw = self.connection.connection
        raw.setconfig(sqlite3.SQLITE_DBCONFIG_ENABLE_TRIGGER, False)
        try:
            super().execute_sql_flush(sql_list)
        finally:
            raw.setconfig(sqlite3.SQLITE_DBCONFIG_ENABLE_TRIGGER, True)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
