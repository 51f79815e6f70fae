import json

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.items.models import ReplySet
from annotation.items.selectors import reply_set_list
from annotation.items.services.expansion import reply_sets_expand


class Command(BaseCommand):
    help = (
        "Expand audited EiCAP reply sets into one-vs-three multi_turn_choice probes (each accepted preferred reply "
        "with the three accepted distractors of its turn; key positions seeded per probe, language and turn). "
        "Expands the named sets, or every audited set not expanded yet; safe to repeat."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("uids", nargs="*", help="reply set uids (default: every audited set not expanded yet)")
        parser.add_argument("--dimension", default="", help="only the sets of this dimension code")
        parser.add_argument(
            "--seed", type=int, default=None, help="seed of the key positions (default: as before, else 0)"
        )
        parser.add_argument("--accept", action="store_true", help="accept the probes as a lead decision")
        parser.add_argument("--user", default="", help="username recorded as the author (a lead for --accept)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: object, **options: object) -> None:
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user {options['user']}")
        if options["uids"]:
            sets = list(ReplySet.objects.filter(uid__in=options["uids"]))
            missing = sorted(set(options["uids"]) - {s.uid for s in sets})
            if missing:
                raise CommandError(f"no reply set {', '.join(missing)}")
        else:
            sets = list(reply_set_list(dimension=options["dimension"], state="audited"))
        try:
            report = reply_sets_expand(reply_sets=sets, user=user, seed=options["seed"], accept=options["accept"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
            return
        for problem in report.problems:
            self.stderr.write(f"{problem['reply_set']}: {problem['reason']}")
        if report.withdrawn:
            self.stderr.write("no longer backed by accepted replies: " + ", ".join(report.withdrawn))
        self.stdout.write(
            self.style.SUCCESS(
                f"{len(sets)} reply sets: {len(report.created)} probes created, {len(report.revised)} revised, "
                f"{len(report.unchanged)} unchanged"
            )
        )
