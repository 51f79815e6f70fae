"""Make sure the local demo database matches this version's migrations before ``make run`` migrates it."""

import shutil
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone


def stale_migrations() -> list[str]:
    """Return migrations recorded in the database that this code base does not have (an older layout's)."""
    loader = MigrationLoader(connection, ignore_no_migrations=True)
    recorded = loader.applied_migrations
    return sorted(f"{app}.{name}" for app, name in recorded if (app, name) not in loader.disk_migrations)


class Command(BaseCommand):
    help = (
        "Check that the database was built by this version's migrations. A local SQLite demo database from an "
        "older layout is moved aside (kept as a backup) so that a fresh one is built; any other database is left "
        "alone and the command says what to do."
    )

    def handle(self, *args: object, **options: object) -> None:
        if "django_migrations" not in connection.introspection.table_names():
            return
        stale = [name for name in stale_migrations() if not name.startswith(("admin.", "auth.", "contenttypes."))]
        if not stale:
            return
        shown = ", ".join(stale[:5]) + (" ..." if len(stale) > 5 else "")
        if connection.vendor != "sqlite":
            raise CommandError(
                f"This database was built by an older version of EI Studio (migrations {shown} are unknown to this "
                "version, whose migrations were re-baselined). Export what you need, then point DATABASE_URL at a "
                "new, empty database and run migrate."
            )
        path = Path(connection.settings_dict["NAME"])
        connection.close()
        backup = path.with_name(f"{path.name}.old-{timezone.now():%Y%m%d-%H%M%S}")
        shutil.move(path, backup)
        self.stdout.write(
            self.style.WARNING(
                f"The demo database {path.name} was built by an older version (migrations {shown}); it was moved to "
                f"{backup.name} and a new demo database will be built now."
            )
        )
