from django.core.management.base import BaseCommand, CommandError

from catalog.models import Publisher
from catalog.services.signing import publisher_key_rotate
from pixie.core.errors import PixieError
from pixie.core.people.actors import command_actor


class Command(BaseCommand):
    help = (
        "Give a publisher a new signing key, made and held by Pixie; its current key is "
        "retired and kept, so what it signed still verifies."
    )

    def add_arguments(self, parser):
        parser.add_argument("publisher", help="The publisher's slug.")
        parser.add_argument("--user", help="Record the change as this user (default: system).")

    def handle(self, *args, publisher, user, **options):
        found = Publisher.objects.filter(slug=publisher).first()
        if found is None:
            raise CommandError(f"No publisher {publisher!r}.")
        try:
            key = publisher_key_rotate(publisher=found, actor=command_actor(user))
        except PixieError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(f"{found}: new signing key {key.fingerprint} ({key.public_key})")
