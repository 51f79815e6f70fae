"""Fast bulk writes for the thousands of rows of a run (plain prepared SQL, values prepared by each field)."""

from collections.abc import Callable
from decimal import Decimal

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Field

# Values that many rows of one column share (NULLs, flags, a zero cost, an empty error): prepared once per column.
_SHARED_TYPES = (type(None), bool, Decimal)


def _preparer(field: Field, connection: BaseDatabaseWrapper) -> Callable[[object], object]:
    """Return a function preparing a column's values as ``field.get_db_prep_save`` does, shared values once."""
    prepare = field.get_db_prep_save
    shared: dict[tuple[type, object], object] = {}

    def prepared(value: object) -> object:
        if isinstance(value, _SHARED_TYPES) or value == "":
            key = (type(value), value)
            if key not in shared:
                shared[key] = prepare(value, connection)
            return shared[key]
        return prepare(value, connection)

    return prepared


def update_rows(model: type, rows: list[dict], fields: list[str]) -> None:
    """Update many rows by primary key with one prepared statement (``executemany``).

    ``QuerySet.bulk_update`` builds a CASE expression per field and row, which costs far more CPU than the
    database work for a few hundred rows; values are prepared by each field, so JSON, decimals and dates are
    stored exactly as the ORM would store them.
    """
    if not rows:
        return
    # The connection itself, not the ``django.db.connection`` proxy: every value's preparation reads it.
    connection = connections[DEFAULT_DB_ALIAS]
    meta = model._meta
    quote = connection.ops.quote_name
    columns = [meta.get_field(name) for name in fields]
    preparers = [(f.name, _preparer(f, connection)) for f in columns]
    assignments = ", ".join(f"{quote(f.column)} = %s" for f in columns)
    sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(meta.pk.column)} = %s"
    params = [[prepare(row[name]) for name, prepare in preparers] + [row["pk"]] for row in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def insert_rows(model: type, rows: list[dict], fields: list[str], *, batch_size: int = 500) -> None:
    """Insert many rows with multi-row INSERT statements, without returning their ids.

    For the thousands of items of a run: on SQLite, ``bulk_create`` spends most of its time compiling statements.
    """
    if not rows:
        return
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor == "postgresql":
        # There bulk_create sends one array per column (INSERT ... SELECT FROM UNNEST), which beats any VALUES list.
        model.objects.bulk_create([model(**{name: row[name] for name in fields}) for row in rows], batch_size=5000)
        return
    meta = model._meta
    quote = connection.ops.quote_name
    columns = [meta.get_field(name) for name in fields]
    preparers = [(f.attname, _preparer(f, connection)) for f in columns]
    names = ", ".join(quote(f.column) for f in columns)
    placeholder = "(" + ", ".join(["%s"] * len(columns)) + ")"
    with connection.cursor() as cursor:
        for start in range(0, len(rows), batch_size):
            batch = rows[start : start + batch_size]
            sql = f"INSERT INTO {quote(meta.db_table)} ({names}) VALUES {', '.join([placeholder] * len(batch))}"
            cursor.execute(sql, [prepare(row[name]) for row in batch for name, prepare in preparers])
