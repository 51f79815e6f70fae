from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.items.services import ImportFailed
from annotation.labelling.label_studio import exporting, importing
from annotation.labelling.management.commands.export_labels import comparison_set_named


class Command(BaseCommand):
    help = (
        "Label Studio interchange of a comparison set. 'export SET DIR' writes DIR/tasks.json (one task per "
        "comparison, texts anonymised) and DIR/config.xml (the Pairwise labelling config); 'import SET FILE' "
        "stores the pairwise annotations of a Label Studio JSON export as expert labels, all or nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["export", "import"])
        parser.add_argument("set", help="comparison set id or name")
        parser.add_argument("path", type=Path, help="export: a directory; import: the Label Studio JSON export")
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="ID_OR_EMAIL=ACCOUNT",
            help="import: the account (username or email) of a Label Studio annotator; repeat for each",
        )

    def handle(self, *args: object, **options: object) -> None:
        comparison_set = comparison_set_named(options["set"])
        path: Path = options["path"]
        if options["action"] == "export":
            path.mkdir(parents=True, exist_ok=True)
            (path / "config.xml").write_text(exporting.set_config(), encoding="utf-8")
            with (path / "tasks.json").open("wb") as file:
                for chunk in exporting.task_chunks(comparison_set=comparison_set):
                    file.write(chunk)
            self.stderr.write(self.style.SUCCESS(f"wrote {path / 'tasks.json'} and {path / 'config.xml'}"))
            return
        try:
            mapping = importing.mapping_parse("\n".join(options["map"]))
            data = path.read_bytes()
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise CommandError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
        try:
            result = importing.label_studio_import(comparison_set=comparison_set, data=data, user=None, mapping=mapping)
        except ImportFailed as exc:
            raise CommandError("\n".join(str(e) for e in exc.errors)) from exc
        except importing.SetClosed as exc:
            raise CommandError(str(exc)) from exc
        experts = ", ".join(result["experts"])
        self.stdout.write(
            f"{result['labels']} labels imported from {result['tasks']} tasks ({result['assignments_added']} new "
            f"assignments, {result['cancelled']} cancelled annotations skipped); experts: {experts}"
        )
