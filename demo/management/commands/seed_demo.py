from django.core.management.base import BaseCommand

from demo import base as demo


class Command(BaseCommand):
    help = "Load the taxonomy, demo accounts (one per role) and demo items; running it again duplicates nothing."

    def handle(self, *args: object, **options: object) -> None:
        summary = demo.demo_seed()
        self.stdout.write(self.style.SUCCESS(summary["message"]))
        for username, role in summary["accounts"]:
            self.stdout.write(f"  {role:<12} {username} / {demo.DEMO_PASSWORD}")
