"""manage.py login_deactivate USERNAME: a person leaves (pixie.installer.offboarding)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from pixie.core.errors import PixieError
from pixie.installer.offboarding import login_deactivate


class Command(BaseCommand):
    help = (
        "Deactivate a login: revoke its API tokens, remove its memberships, mark its "
        "waiting plans for another owner. Its history stays attributed to it."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"There is no login called {username!r}.")
        try:
            done = login_deactivate(user=user, actor=None)
        except PixieError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"Deactivated {username}: {done['tokens']} token(s) revoked, "
            f"{done['memberships']} membership(s) removed, {done['plans']} waiting plan(s) "
            "marked for another owner."
        )
