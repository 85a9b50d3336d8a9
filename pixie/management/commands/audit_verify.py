"""Walk every chain of audit digests and name the first entry of each that no longer
matches (pixie.core.audit.chain). Exits 1 when one does; the audit log page shows the result,
as it shows the result of its own *Verify now* (pixie.core.audit.checks)."""

from django.core.management.base import BaseCommand, CommandError

from pixie.core.audit.checks import chain_check


class Command(BaseCommand):
    help = "Check that no recorded change was altered, removed or cut from its chain."

    def handle(self, *args, **options):
        check = chain_check()
        scope = f"{check.entries:,} entries in {check.chains:,} chains"
        if check.unchained:
            self.stdout.write(f"{check.unchained:,} entries are in no chain.")
        if check.problems:
            for problem in check.problems:
                self.stderr.write(problem)
            broken = len(check.problems)
            verb = "chain no longer matches" if broken == 1 else "chains no longer match"
            raise CommandError(f"Checked {scope}: {broken} {verb}.")
        self.stdout.write(f"Checked {scope}: every digest matches.")
