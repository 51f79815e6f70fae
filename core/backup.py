"""Backups of the whole database and their restore, for PostgreSQL (pg_dump/pg_restore) and SQLite (its backup API).

A backup is one file: PostgreSQL's custom format (compressed, restorable table by table) or an SQLite database
copied page by page while the application keeps running. A restore goes into an EMPTY database named by URL and
never into one that has tables, so it cannot overwrite a live database by mistake.
"""

import glob
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.db import connection

from core.errors import ServiceError


class BackupError(ServiceError):
    """A backup or restore that cannot be done, with the reason."""


def postgres_tool(name: str) -> str:
    """Return the path of a PostgreSQL client program (PATH first, then Debian's newest /usr/lib/postgresql)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(p.split("/")[4]))
    if not candidates:
        raise BackupError(f"{name} was not found: install the PostgreSQL client (apt-get install postgresql-client).")
    return candidates[-1]


def current_database_url() -> str:
    """Return a URL for the database this process uses (the one a backup copies)."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    if connection.vendor != "postgresql":
        raise BackupError(f"backups support PostgreSQL and SQLite, not {connection.vendor}")
    user = settings.get("USER") or ""
    password = f":{settings['PASSWORD']}" if settings.get("PASSWORD") else ""
    auth = f"{user}{password}@" if user else ""
    port = f":{settings['PORT']}" if settings.get("PORT") else ""
    return f"postgresql://{auth}{settings.get('HOST') or 'localhost'}{port}/{settings['NAME']}"


def _sqlite_path(url: str) -> Path:
    return Path(unquote(urlsplit(url).path)[1:] if url.startswith("sqlite:////") else unquote(url[len("sqlite:///") :]))


def _is_postgres(url: str) -> bool:
    return urlsplit(url).scheme in {"postgres", "postgresql", "pgsql"}


def database_backup(*, out: Path, url: str | None = None) -> Path:
    """Write a backup of the database at ``url`` (default: this process's) to ``out``; return ``out``.

    Written to a temporary name first, so a failed backup never leaves a truncated file under the final name.
    """
    url = url or current_database_url()
    partial = out.with_name(out.name + ".partial")
    if _is_postgres(url):
        result = subprocess.run(
            [postgres_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges", "--file", str(partial), url],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            partial.unlink(missing_ok=True)
            raise BackupError(f"pg_dump failed: {result.stderr.strip()}")
    elif url.startswith("sqlite:///"):
        source = sqlite3.connect(_sqlite_path(url))
        target = sqlite3.connect(partial)
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
    else:
        raise BackupError(f"backups support postgres:// and sqlite:/// URLs, not {urlsplit(url).scheme}://")
    partial.replace(out)
    return out


def database_restore(*, backup: Path, into: str) -> None:
    """Restore ``backup`` into the empty database at ``into``; refuse a database that already has tables."""
    if not backup.is_file():
        raise BackupError(f"no backup file at {backup}")
    if _is_postgres(into):
        psql = postgres_tool("psql")
        count = subprocess.run(
            [psql, "-At", "-c", "select count(*) from pg_tables where schemaname = 'public'", into],
            capture_output=True,
            text=True,
        )
        if count.returncode != 0:
            raise BackupError(f"cannot reach the target database: {count.stderr.strip()}")
        if int(count.stdout.strip() or 0):
            raise BackupError(
                f"the target database has {count.stdout.strip()} tables: restore into a new, empty database "
                "(createdb NAME), then point DATABASE_URL at it"
            )
        result = subprocess.run(
            [
                postgres_tool("pg_restore"),
                "--no-owner",
                "--no-privileges",
                "--exit-on-error",
                "--single-transaction",
                "--dbname",
                into,
                str(backup),
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise BackupError(f"pg_restore failed (nothing was restored): {result.stderr.strip()}")
    elif into.startswith("sqlite:///"):
        target = _sqlite_path(into)
        if target.exists() and target.stat().st_size > 0:
            raise BackupError(f"{target} exists: restore into a new file, then point DATABASE_URL at it")
        partial = target.with_name(target.name + ".partial")
        shutil.copyfile(backup, partial)
        check = sqlite3.connect(partial)
        try:
            if check.execute("pragma integrity_check").fetchone()[0] != "ok":
                raise BackupError(f"{backup} is not a sound SQLite database")
        except sqlite3.DatabaseError as exc:
            raise BackupError(f"{backup} is not an SQLite backup: {exc}") from exc
        finally:
            check.close()
        os.replace(partial, target)
    else:
        raise BackupError(f"restore supports postgres:// and sqlite:/// URLs, not {urlsplit(into).scheme}://")
