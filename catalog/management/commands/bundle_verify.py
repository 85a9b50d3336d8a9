from django.core.management.base import BaseCommand, CommandError

from catalog.models import Bundle, BundleVersion
from catalog.services.signing import ContentNotAsSigned, bundle_version_verify, signature_summary


class Command(BaseCommand):
    help = (
        "Check every published bundle version (or one bundle's) against what its publisher "
        "signed, reading every stored byte; name each that fails and exit 1 if any does."
    )

    def add_arguments(self, parser):
        parser.add_argument("bundle", nargs="?", help="Only this bundle's versions (its slug).")

    def handle(self, *args, bundle, **options):
        versions = (
            BundleVersion.objects.exclude(status="draft")
            .select_related("bundle__publisher", "signing_key")
            .order_by("bundle__slug", "created_at")
        )
        if bundle:
            # "All 0 versions match" would pass a mistyped slug or a folder's path as checked.
            if not Bundle.objects.filter(slug=bundle).exists():
                raise CommandError(
                    f"No bundle {bundle!r} in the catalog: name a bundle by its slug (a "
                    "folder's bundle.signature.json is checked when bundle_load loads it)"
                )
            versions = versions.filter(bundle__slug=bundle)
        failed, checked = [], 0
        for version in versions.iterator(chunk_size=200):
            checked += 1
            try:
                bundle_version_verify(bundle_version=version)
            except ContentNotAsSigned as exc:
                failed.append(version)
                self.stdout.write(f"FAILED {version.bundle.slug} {version.version}: {exc}")
                continue
            summary = signature_summary(version)
            trust = "operator-approved" if summary.signer_trusted else "not operator-approved"
            retired = ", retired" if summary.key_retired else ""
            self.stdout.write(
                f"ok     {version.bundle.slug} {version.version}: signed by {summary.signer} "
                f"({trust}; key {summary.key_fingerprint}{retired})"
            )
        if failed:
            raise CommandError(
                f"{len(failed)} of {checked} published versions do not match what their "
                "publisher signed: "
                + ", ".join(f"{v.bundle.slug} {v.version}" for v in failed)
            )
        if bundle and not checked:
            raise CommandError(
                f"{bundle} has no published version to check (drafts are not signed)"
            )
        self.stdout.write(f"All {checked} published versions match what their publisher signed.")
