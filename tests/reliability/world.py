"""A small world for permission and secrets tests: two workspaces, every kind of row,
and one user for each role that asks."""

from dataclasses import dataclass

import reversion
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token

from agents.models import Agent, AgentSkill
from agents.promote import assembly_promote
from agents.services import agent_skill_attach, turn_start
from catalog.models import Installation, Plan, WorkspaceSkill
from catalog.services.workspace_skills import skill_create, skill_edit
from egress.models import CredentialRequirement, EgressRule
from pixie.core.models import AuditEntry, LoginLockout, Membership, Notification, Workspace
from pixie.core.people.invitations import invitation_make
from pixie.core.people.permissions import AUDITORS_GROUP, OPERATORS_GROUP
from pixie.core.people.tokens import token_create
from pixie.delivery.tokens import delivery_token_create
from pixie.installer.plans import plan_create
from pixie.sharing import services as sharing
from pixie.sharing.dispatch import message_dispatch
from pixie.sharing.models import Message
from pixie.sources.models import Source
from tests.factories import add_local_contact
from tests.installer.flow import install
from tests.sharing.strangers import envelope as stranger_envelope

ROLES = [
    "anonymous", "inactive", "stranger", "member", "owner", "staff", "operator", "auditor",
    "superuser",
]  # fmt: skip


@dataclass
class World:
    acme: Workspace
    users: dict
    tokens: dict
    ids: dict


def build_world(demo_catalog, capture) -> World:
    User = get_user_model()
    users = {
        "inactive": User.objects.create_user("ina", password="pw-inactive-1", is_active=False),
        "stranger": User.objects.create_user("sam", password="pw-stranger-1", is_staff=True),
        "member": User.objects.create_user("mia", password="pw-member-1", is_staff=True),
        "owner": User.objects.create_user("owen", password="pw-owner-1", is_staff=True),
        "staff": User.objects.create_user("stu", password="pw-staff-1", is_staff=True),
        # An operator who is not a superuser: staff, in the group operators (which holds
        # the catalog's model permissions), member of no workspace.
        "operator": User.objects.create_user("opal", password="pw-operator-1", is_staff=True),
        # An auditor: staff, in the group auditors (views of the catalog's models), member
        # of no workspace; reads every workspace through the admin's scoping.
        "auditor": User.objects.create_user("aud", password="pw-auditor-1", is_staff=True),
        "superuser": User.objects.create_superuser("sue", password="pw-super-1"),
    }
    acme = Workspace.objects.create(slug="acme", name="Acme")
    globex = Workspace.objects.create(slug="globex", name="Globex")
    Membership.objects.create(workspace=acme, user=users["owner"], role="owner")
    Membership.objects.create(workspace=acme, user=users["member"], role="member")
    Membership.objects.create(workspace=acme, user=users["inactive"], role="owner")
    Membership.objects.create(workspace=globex, user=users["stranger"], role="owner")
    owner = users["owner"]
    agent = Agent.objects.create(workspace=acme, slug="collections", name="Collections")
    install(acme, demo_catalog["2.1.0"], owner, capture, [agent])
    local = skill_create(
        workspace=acme, slug="month-end", name="Month end", short_description="Close it.",
        body="Close the month with @query-ledger.", actor=owner,
    )  # fmt: skip
    # A second revision, so an owner has an earlier one to restore.
    skill_edit(skill=local, actor=owner, body="Close the month with @query-ledger, then rest.")
    turn = turn_start(agent=agent)
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    to_globex = add_local_contact(workspace=acme, other_slug="globex", actor=owner)
    to_acme = add_local_contact(workspace=globex, other_slug="acme", actor=users["stranger"])
    theirs = skill_create(
        workspace=globex, slug="daily-brief", name="Daily brief", short_description="Brief.",
        body="Brief the team.", actor=users["stranger"],
    )  # fmt: skip
    with capture(execute=True):
        sent = sharing.share_send(
            workspace=globex, skill=theirs, contact=to_acme, actor=users["stranger"]
        )
    message_dispatch(message_pk=sent.pk, final_attempt=True)
    received = Message.objects.get(workspace=acme, direction=Message.Direction.INCOMING)
    users["operator"].groups.add(operators_group())
    users["auditor"].groups.add(Group.objects.get(name=AUDITORS_GROUP))
    # Globex promotes an assembly of its own: published, awaiting an operator's review.
    briefer = Agent.objects.create(workspace=globex, slug="briefer", name="Briefer")
    agent_skill_attach(agent=briefer, skill=theirs, actor=users["stranger"])
    pending = assembly_promote(
        agent=briefer, actor=users["stranger"], slug="globex-brief", name="Globex brief"
    )
    # A stranger wrote too, and the owner blocked them (keeping what they sent).
    from_stranger = sharing.envelope_receive(raw=stranger_envelope(acme))
    sharing.sender_block(
        workspace=acme,
        opened=sharing.message_open(message=from_stranger),
        delete_pending=False,
        actor=owner,
    )
    tokens = {role: Token.objects.create(user=user).key for role, user in users.items()}
    # Limited to acme: the one kind of token acme's owners see and revoke.
    api_token, _ = token_create(
        user=users["member"], actor=users["member"], name="Laptop", workspace=acme
    )
    # A delivery token of acme's collections agent (pixie.delivery), and its secret.
    delivery, delivery_secret = delivery_token_create(
        workspace=acme, actor=owner, name="Collections laptops", agent=agent
    )
    # An invitation waiting, whose link everyone may open (pixie.invitation_page).
    invited = invitation_make(workspace=acme, actor=owner, email="new@example.com", role="member")
    # An account locked out of the login (the lockouts' pages read it).
    LoginLockout.objects.create(
        kind="account", username="someone", address="203.0.113.7", failures=5, seconds=900
    )
    # An unread notification each for the member (from when they were an owner, say) and
    # the owner, so marking them read changes something.
    for role in ("member", "owner"):
        Notification.objects.create(
            user=users[role], workspace=acme, kind="plan_waiting", event=f"world:{role}",
            title="A plan waits for your approval",
        )  # fmt: skip
    Group.objects.get_or_create(name="auditors")
    # A source the catalog follows (pixie.sources), never checked: nothing reaches out.
    source = Source.objects.create(url="https://example.com/skills.git", ref="main")
    with reversion.create_revision():  # history for the pages that show it
        for obj in (acme, agent, turn, source):
            obj.save()
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    ids = {
        "agent": agent.pk,
        "turn": turn.pk,
        "plan": plan.pk,
        "api_token": api_token.pk,
        "delivery_token": delivery.pk,
        "delivery_secret": delivery_secret,
        "invitation": invited.invitation.pk,
        "invitation_secret": invited.link.rstrip("/").rsplit("/", 1)[1],
        "skill": chase.pk,
        "local_skill": local.pk,
        "installation": Installation.objects.get(workspace=acme).pk,
        "contact": to_globex.pk,
        "message": received.pk,
        "credential": CredentialRequirement.objects.get(workspace=acme).pk,
        "egress": EgressRule.objects.get(workspace=acme).pk,
        "attachment": AgentSkill.objects.filter(agent=agent).first().pk,
        "applied_plan": Plan.objects.filter(workspace=acme, status="applied").first().pk,
        "pending_version": pending.pk,
        "publisher": pending.bundle.publisher_id,
        "bundle": demo_catalog["2.1.0"].bundle_id,
        "source": source.pk,
        "revision": AuditEntry.objects.filter(workspace=acme).latest("revision_id").revision_id,
    }
    return World(acme=acme, users=users, tokens=tokens, ids=ids)


def operators_group() -> Group:
    """The group operators, as every migrate leaves it."""
    return Group.objects.get(name=OPERATORS_GROUP)
