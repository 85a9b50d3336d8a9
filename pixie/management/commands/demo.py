"""Load the demo catalog and the demo workspace. Running it again changes nothing."""

import json
import os
import secrets
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from agents.models import Agent
from catalog.bundle_files import read_bundle_folder
from catalog.roles import auditors_group_ensure, operators_group_ensure
from catalog.services import bundle_load
from catalog.validators import version_key
from pixie.core.audit.records import audited
from pixie.core.errors import PixieError
from pixie.core.models import Membership, Workspace

DEMO_DIR = Path(apps.get_app_config("catalog").path) / "demo"
# (username, env variable with its password, superuser?, role in acme); the operator
# is in the group operators instead (publishes and reviews the catalog, no workspace).
DEMO_USERS = [
    ("admin", "PIXIE_ADMIN_PASSWORD", True, None),
    ("operator", "PIXIE_OPERATOR_PASSWORD", False, None),
    ("owner", "PIXIE_OWNER_PASSWORD", False, Membership.Role.OWNER),
    ("member", "PIXIE_MEMBER_PASSWORD", False, Membership.Role.MEMBER),
    ("auditor", "PIXIE_AUDITOR_PASSWORD", False, None),
]
DEMO_AGENTS = [
    ("collections", "Collections agent", "You chase overdue invoices for Acme Ltd, politely."),
    ("front-desk", "Front desk agent", "You answer Acme Ltd's customers about their accounts."),
]


def demo_folders() -> list[Path]:
    """Bundle folders in load order: by bundle, then by semantic version."""
    folders = [p for p in DEMO_DIR.iterdir() if (p / "bundle.toml").exists()]
    specs = [(read_bundle_folder(p), p) for p in folders]
    specs.sort(key=lambda pair: (pair[0].slug, version_key(pair[0].version)))
    return [p for _, p in specs]


class Command(BaseCommand):
    help = (
        "Load and publish the demo catalog, and create the demo workspace 'acme' with an "
        "owner, a member, two agents and an admin login. Idempotent."
    )

    def handle(self, *args, **options):
        logins_file = Path(settings.DATA_DIR) / "demo-logins.json"
        known = json.loads(logins_file.read_text()) if logins_file.exists() else {}
        users = {}
        for username, env_name, superuser, _role in DEMO_USERS:
            users[username], known = self._user(username, env_name, superuser, known)
        logins_file.parent.mkdir(parents=True, exist_ok=True)
        logins_file.write_text(json.dumps(known, indent=2))
        logins_file.chmod(0o600)

        users["operator"].groups.add(operators_group_ensure())
        users["auditor"].groups.add(auditors_group_ensure())
        admin = users["admin"]
        try:
            for folder in demo_folders():
                result = bundle_load(spec=read_bundle_folder(folder), actor=admin, publish=True)
                version = result.bundle_version
                verb = "loaded" if result.created else "already there"
                self.stdout.write(f"Catalog: {version.bundle.name} {version.version} {verb}")
        except PixieError as exc:
            raise CommandError(f"Demo catalog could not be loaded: {exc.message}") from None

        with audited(actor=admin, comment="Demo workspace created by manage.py demo"):
            workspace, made = Workspace.objects.get_or_create(
                slug="acme", defaults={"name": "Acme Ltd"}
            )
            for username, _env, _superuser, role in DEMO_USERS:
                if role:
                    Membership.objects.get_or_create(
                        workspace=workspace, user=users[username], defaults={"role": role}
                    )
            for slug, name, prompt in DEMO_AGENTS:
                Agent.objects.get_or_create(
                    workspace=workspace, slug=slug, defaults={"name": name, "system_prompt": prompt}
                )
        self.stdout.write(f"Workspace: {workspace.name} ({'created' if made else 'already there'})")
        self.stdout.write("Logins (also in data/demo-logins.json):")
        for username, *_ in DEMO_USERS:
            password = known.get(username, "(unchanged: set with manage.py changepassword)")
            self.stdout.write(f"  {username:<8} {password}")

    def _user(self, username, env_name, superuser, known):
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        wanted = os.environ.get(env_name)
        if user is None:
            password = wanted or known.get(username) or secrets.token_urlsafe(12)
            user = User.objects.create_user(
                username=username,
                password=password,
                is_staff=True,
                is_superuser=superuser,
                email=f"{username}@acme.example",
            )
            known = {**known, username: password}
        elif wanted and not user.check_password(wanted):
            user.set_password(wanted)
            user.save(update_fields=["password"])
            known = {**known, username: wanted}
        return user, known
