from django.core.management.base import BaseCommand, CommandError

from pixie.sources.models import Source
from pixie.sources.services import SourceBusy, source_check, sources_due


class Command(BaseCommand):
    help = (
        "Check every unpaused source that is due (or one, with --source), one line each: "
        "for a cron line where no Celery beat runs. Exits 1 if a check failed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--source", type=int, help="Check this source (its id) now.")

    def handle(self, *args, source=None, **options):
        if source is not None:
            sources = list(Source.objects.filter(pk=source))
            if not sources:
                raise CommandError(f"There is no source #{source}")
        else:
            sources = list(sources_due())
        failed = []
        for each in sources:
            try:
                checked = source_check(each)
            except SourceBusy as exc:
                self.stdout.write(f"busy      #{each.pk} {each.url}: {exc}")
                continue
            result = checked.last_result or "-"
            self.stdout.write(f"{result:<9} #{each.pk} {each.url}: {checked.last_message}")
            if result not in {Source.Result.UNCHANGED, Source.Result.DRAFT}:
                failed.append(each.pk)
        if not sources:
            self.stdout.write("No source is due.")
        if failed:
            raise CommandError(
                f"{len(failed)} of {len(sources)} sources need an operator: "
                + ", ".join(f"#{pk}" for pk in failed)
            )
