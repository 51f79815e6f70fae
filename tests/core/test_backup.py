"""Backups and the restore path of docs/deploy.md: back up, restore into a new database, and the restored database
serves the same data (a frozen release exports byte for byte the same and verifies against its manifest)."""

import subprocess
import sys
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from annotation.items.models import Item, ItemRevision
from tests.factories import make_frozen_release, make_item
from tests.simulator import ROOT, subprocess_env
from tests.workers import database_url_for_workers

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def target(tmp_path):
    """A URL for a new, empty database (dropped afterwards on PostgreSQL)."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / 'restored.sqlite3'}"
        return
    name = f"restore_{uuid.uuid4().hex[:10]}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    url = database_url_for_workers().rsplit("/", 1)[0] + f"/{name}"
    yield url
    connection.close()
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(*args: str, url: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=subprocess_env(DATABASE_URL=url),
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_backup_restores_into_a_new_database_that_serves_the_same_data(taxonomy, lead, admin_user, tmp_path, target):
    for n in range(3):
        make_item(uid=f"backup-{n}", user=lead, status="accepted")
    make_frozen_release(version="9.0.0", user=admin_user)
    original = tmp_path / "original"
    call_command("export_release", "facet", "9.0.0", "--out", str(original))

    backup = tmp_path / "eistudio.backup"
    call_command("db_backup", "--out", str(backup))
    assert backup.stat().st_size > 10_000
    assert not backup.with_name(backup.name + ".partial").exists()
    call_command("db_restore", str(backup), "--into", target)

    # The restored database is complete: no migration missing, the same rows, the same frozen bytes.
    pending = manage("migrate", "--check", url=target)
    assert pending.returncode == 0, pending.stdout + pending.stderr
    restored = tmp_path / "restored"
    exported = manage("export_release", "facet", "9.0.0", "--out", str(restored), url=target)
    assert exported.returncode == 0, exported.stderr
    names = sorted(p.name for p in original.iterdir())
    assert names == sorted(p.name for p in restored.iterdir())
    for name in names:
        assert (original / name).read_bytes() == (restored / name).read_bytes(), name
    verified = manage("verify_release", str(restored), url=target)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    counts = manage(
        "shell",
        "-c",
        "from annotation.items.models import Item, ItemRevision; "
        "print(Item.objects.count(), ItemRevision.objects.count())",
        url=target,
    )
    expected = [str(Item.objects.count()), str(ItemRevision.objects.count())]
    assert counts.stdout.strip().splitlines()[-1].split() == expected


def test_restore_refuses_a_database_with_tables_and_a_missing_file(tmp_path, taxonomy):
    backup = tmp_path / "eistudio.backup"
    call_command("db_backup", "--out", str(backup))
    with pytest.raises(CommandError, match="restore into a new"):
        call_command("db_restore", str(backup), "--into", database_url_for_workers())
    with pytest.raises(CommandError, match="no backup file at"):
        call_command("db_restore", str(tmp_path / "missing.backup"), "--into", f"sqlite:///{tmp_path / 'x.sqlite3'}")
