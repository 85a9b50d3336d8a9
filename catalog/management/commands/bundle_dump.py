from django.core.management.base import BaseCommand, CommandError

from catalog.bundle_files import write_bundle_folder
from catalog.models import BundleVersion
from catalog.services.bundle_load import bundle_spec_of
from pixie.core.errors import PixieError


class Command(BaseCommand):
    help = "Write a bundle version out as a folder that bundle_load reads back unchanged."

    def add_arguments(self, parser):
        parser.add_argument("bundle", help="The bundle's slug.")
        parser.add_argument("version", help="The version, e.g. 2.1.0.")
        parser.add_argument("path", help="An empty or new folder.")

    def handle(self, *args, bundle, version, path, **options):
        bundle_version = (
            BundleVersion.objects.select_related("bundle__publisher")
            .filter(bundle__slug=bundle, version=version)
            .first()
        )
        if bundle_version is None:
            raise CommandError(f"No bundle version {bundle} {version}.")
        try:
            write_bundle_folder(bundle_spec_of(bundle_version), path)
        except PixieError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"Wrote {bundle} {version} to {path}")
