from django.core.management.base import BaseCommand, CommandError

from catalog.services.signing import publisher_key_register
from pixie.core.errors import PixieError
from pixie.core.people.actors import command_actor


class Command(BaseCommand):
    help = (
        "Register the public signing key of a publisher that holds its private key outside "
        "Pixie (a third party, or this publisher on another Pixie server). It becomes the "
        "publisher's active key: its versions must then arrive signed (bundle.signature.json). "
        "The publisher is created as a third party if it does not exist yet."
    )

    def add_arguments(self, parser):
        parser.add_argument("publisher", help="The publisher's slug.")
        parser.add_argument("public_key", help="The base64 of its Ed25519 public key.")
        parser.add_argument("--name", help="The publisher's name, when it is created here.")
        parser.add_argument("--user", help="Record the change as this user (default: system).")

    def handle(self, *args, publisher, public_key, name, user, **options):
        try:
            key = publisher_key_register(
                slug=publisher, public_key=public_key, actor=command_actor(user), name=name
            )
        except PixieError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"{key.publisher}: registered signing key {key.fingerprint}, held outside Pixie. "
            "Ask the publisher to compare that fingerprint with theirs."
        )
