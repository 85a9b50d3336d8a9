"""Seed a database for the load test and print what the virtual users need, as JSON.

    DATABASE_URL=... SECRET_KEY=... PIXIE_KEY_ENCRYPTION_KEY=... \\
        .venv/bin/python benchmarks/load/seed.py --accounts 20 --messages 10

Run against the production stack's database after it has migrated, with the
stack's SECRET_KEY and PIXIE_KEY_ENCRYPTION_KEY (the inbox is sealed under
them) and without REDIS_URL, so deliveries happen here, in-process. It loads the
demo catalog (`manage.py demo`), then makes one account per virtual user: an
owner with an API token and a workspace of their own holding one agent, whose
inbox holds `--messages` letters from a shared sender workspace.
"""

import argparse
import io
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, required=True)
    parser.add_argument("--messages", type=int, default=10)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pixie.settings")
    import django

    django.setup()
    print(json.dumps(seed(accounts=args.accounts, messages=args.messages)))


def seed(*, accounts: int, messages: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from agents.models import Agent
    from catalog.models import BundleVersion, Status
    from pixie.core.audit.records import audited
    from pixie.core.models import Membership, Workspace
    from pixie.sharing import services as sharing
    from pixie.sharing.models import Message

    call_command("demo", stdout=io.StringIO())
    User = get_user_model()
    admin = User.objects.get(username="admin")
    with audited(actor=admin, comment="Load test: sender workspace"):
        sender = User.objects.create_user("load-sender")
        # Listed in the directory, as the load workspaces are: each adds the other by slug.
        news = Workspace.objects.create(
            slug="load-news", name="Load news", listed_in_directory=True
        )
        Membership.objects.create(workspace=news, user=sender, role=Membership.Role.OWNER)

    seeded = []
    for number in range(1, accounts + 1):
        slug = f"load-{number}"
        with audited(actor=admin, comment=f"Load test: workspace {slug}"):
            owner = User.objects.create_user(slug)  # no password: the API token is its login
            workspace = Workspace.objects.create(
                slug=slug, name=f"Load {number}", listed_in_directory=True
            )
            Membership.objects.create(workspace=workspace, user=owner, role=Membership.Role.OWNER)
            Agent.objects.create(workspace=workspace, slug="worker", name="Worker")
            token = Token.objects.create(user=owner)
        to_them = sharing.contact_add_local(workspace=news, other_slug=slug, actor=sender)
        sharing.contact_add_local(workspace=workspace, other_slug=news.slug, actor=owner)
        for letter in range(messages):
            sharing.text_send(
                workspace=news,
                contact=to_them,
                text=f"Bulletin {letter + 1} for {workspace.name}.",
                actor=sender,
            )
        received = Message.objects.filter(
            workspace=workspace, direction=Message.Direction.INCOMING
        ).count()
        if received != messages:
            raise SystemExit(f"{slug} received {received} of {messages} messages")
        seeded.append({"token": token.key, "workspace": slug, "agent": "worker"})

    published = BundleVersion.objects.filter(status=Status.PUBLISHED).select_related("bundle")
    return {
        "accounts": seeded,
        "catalog": sorted([v.bundle.slug, v.version] for v in published),
        # The plan cycle each plan user runs: install, upgrade, uninstall.
        "bundle": "accounts-receivable",
        "install": "2.1.0",
        "upgrade": "2.2.0",
    }


if __name__ == "__main__":
    main()
