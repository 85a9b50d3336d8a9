"""Fill the database with benchmark data at catalog and fleet scale.

A thin entry point: the generator is benchmarks/bench_data.py, in the repository and
not in the installed package, so this command runs from a checkout."""

import sys

from django.core.management.base import BaseCommand, CommandError

from pixie.core.errors import PixieError

try:
    from benchmarks.bench_data import SeedSizes, seed
except ModuleNotFoundError as exc:  # an installed Pixie, without the repository's benchmarks/
    raise CommandError(
        "bench_seed runs from a checkout of Pixie's repository: its data generator is "
        "benchmarks/bench_data.py, which the installed package leaves out."
    ) from exc

DEFAULTS = SeedSizes()


class Command(BaseCommand):
    help = (
        "Write realistic, valid benchmark data in bulk (COPY on PostgreSQL): workspaces with "
        "owners, members, skills and revisions; agents with ordered, pinned skills; published "
        "bundles of published skills. Every name carries --prefix, and a prefix already in the "
        "database is refused, so a second run needs another prefix and never touches the first "
        "run's rows. One transaction: a failure writes nothing. Example, about 1.2 million rows: "
        "bench_seed --workspaces 100 --skills-per-workspace 1000 --agents-per-workspace 100 "
        "--skills-per-agent 100 --bundles 1000"
    )

    def add_arguments(self, parser):
        def size(name, default, what):
            parser.add_argument(
                f"--{name}", type=int, default=default, help=f"{what} (default {default})."
            )

        size("workspaces", DEFAULTS.workspaces, "Workspaces, each with an owner and a member")
        size("skills-per-workspace", DEFAULTS.skills_per_workspace, "Skills in each workspace")
        size("revisions-per-skill", DEFAULTS.revisions_per_skill, "Revisions of each skill")
        size("agents-per-workspace", DEFAULTS.agents_per_workspace, "Agents in each workspace")
        size(
            "skills-per-agent",
            DEFAULTS.skills_per_agent,
            "Skills attached to each agent, at most --skills-per-workspace",
        )
        size("bundles", DEFAULTS.bundles, "Bundles, each with one published version")
        size("skills-per-bundle", DEFAULTS.skills_per_bundle, "Skills in each bundle version")
        parser.add_argument(
            "--prefix",
            default="bench",
            help="Starts every slug and user name (default bench); must not be in use yet.",
        )

    def handle(self, *args, prefix, **options):
        sizes = SeedSizes(
            workspaces=options["workspaces"],
            skills_per_workspace=options["skills_per_workspace"],
            revisions_per_skill=options["revisions_per_skill"],
            agents_per_workspace=options["agents_per_workspace"],
            skills_per_agent=options["skills_per_agent"],
            bundles=options["bundles"],
            skills_per_bundle=options["skills_per_bundle"],
        )
        quiet = options["verbosity"] < 2

        def progress(message):
            if not quiet:
                print(message, file=sys.stderr, flush=True)

        try:
            result = seed(sizes=sizes, prefix=prefix, progress=progress)
        except PixieError as exc:
            lines = getattr(exc, "problems", [exc.message])
            raise CommandError(
                "Nothing was written.\n" + "\n".join(f"  - {p}" for p in lines)
            ) from None
        width = max(len(label) for label in result.rows)
        for label, count in result.rows.items():
            self.stdout.write(f"{label:<{width}}  {count:>12,}")
        rate = result.total / result.seconds if result.seconds else 0
        self.stdout.write(
            f"{'total':<{width}}  {result.total:>12,}  in {result.seconds:.1f} s "
            f"({rate:,.0f} rows/s, prefix {prefix!r})"
        )
