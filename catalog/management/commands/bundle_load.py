from django.core.management.base import BaseCommand, CommandError

from catalog.bundle_files import read_bundle_folder
from catalog.services import bundle_load
from catalog.services.findings import finding_line
from pixie.core.errors import PixieError
from pixie.core.people.actors import command_actor


class Command(BaseCommand):
    help = "Load a bundle version from a folder (bundle.toml + skills/<slug>/SKILL.md)."

    def add_arguments(self, parser):
        parser.add_argument("path", help="The bundle folder.")
        parser.add_argument("--publish", action="store_true", help="Publish it after loading.")
        parser.add_argument(
            "--override-findings",
            metavar="REASON",
            default="",
            help="Publish despite findings that refuse publishing (hidden text), for this "
            "reason, recorded with the version.",
        )
        parser.add_argument("--user", help="Record the change as this user (default: system).")

    def handle(self, *args, path, publish, user, override_findings, **options):
        actor = command_actor(user)
        try:
            spec = read_bundle_folder(path)
            result = bundle_load(
                spec=spec, actor=actor, publish=publish, findings_override=override_findings
            )
        except PixieError as exc:
            lines = getattr(exc, "problems", [exc.message])
            raise CommandError(
                f"{path}: nothing was loaded.\n" + "\n".join(f"  - {p}" for p in lines)
            ) from None
        version = result.bundle_version
        if result.created:
            verb = "Loaded"
        elif result.published:
            verb = "Already loaded;"
        else:
            verb = "Unchanged:"
        state = " and published" if result.published else ""
        files = sum(len(skill.files) for skill in spec.skills)
        # What a load wrote; a version already loaded wrote nothing, so it says no counts.
        written = (
            f", {result.skill_versions_created} new skill versions, "
            f"{result.skill_versions_reused} unchanged skill versions reused"
            if result.created
            else ""
        )
        self.stdout.write(
            f"{verb} {version.bundle.slug} {version.version}{state} "
            f"({version.get_status_display().lower()}, {len(spec.skills)} skills, "
            f"{files} supporting files{written})"
        )
        if not version.is_draft and not version.in_catalog:
            # A third party's or a workspace's publisher: the catalog waits for a review.
            self.stdout.write(
                f"  catalog review: {version.get_catalog_review_display().lower()} "
                "(an operator decides in the admin's review queue)"
            )
            for flag in version.catalog_review_flags:
                self.stdout.write(f"  held because {flag}")
        for notice in result.notices:
            self.stdout.write(f"  notice: {notice}")
        for finding in version.findings or []:
            self.stdout.write(f"  finding ({finding['severity']}): {finding_line(finding)}")
