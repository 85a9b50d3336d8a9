"""Every path that writes is in the history: each service that opens a revision is walked
here, and each walk must leave an audit entry for the workspace it changed (or the
catalog), with the changed object's own History showing the same revision.

The list of services is read from the source (every function that calls ``audited`` or
``reversion.create_revision``), and the walk records with a profiler which of them really
ran: a new service that writes fails this test until a step walks it.
"""

import ast
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import RequestFactory
from nacl.signing import SigningKey
from reversion.models import Revision, Version

from agents.models import Agent, AgentSkill
from agents.promote import assembly_promote
from agents.services import (
    agent_create,
    agent_skill_attach,
    agent_skill_detach,
    agent_skill_override,
    agent_skill_update,
    agent_skills_reorder,
    agent_update,
)
from catalog.models import BundleVersion, Installation, Plan, Publisher, WorkspaceSkill
from catalog.services import bundle_version_publish, bundle_version_yank
from catalog.services.catalog_review import (
    catalog_review_approve,
    catalog_review_refuse,
    publisher_trust,
)
from catalog.services.drafts import bundle_version_draft_discard, bundle_version_draft_edit
from catalog.services.publishing import skill_package_create, skill_version_publish
from catalog.services.signing import publisher_key_register, publisher_key_rotate
from catalog.services.workspace_skills import (
    skill_create,
    skill_edit,
    skill_rename,
    skill_restore,
    skill_set_advertised,
)
from egress.services import credential_confirm
from pixie.core.keys import b64
from pixie.core.models import AuditEntry, Workspace
from pixie.core.people.invitations import (
    invitation_accept,
    invitation_accept_new,
    invitation_make,
    invitation_revoke,
)
from pixie.core.people.members import member_add, member_remove, member_role_change
from pixie.core.people.tokens import token_create, token_revoke
from pixie.delivery.tokens import (
    delivery_token_create,
    delivery_token_revoke,
    delivery_token_rotate,
)
from pixie.installer.offboarding import login_deactivate
from pixie.installer.plans import plan_approve, plan_create, plan_reject
from pixie.installer.policy import policy_update
from pixie.installer.repoint import repoint_create
from pixie.installer.takeover import plan_take_over
from pixie.login_throttle import login_failed
from pixie.sharing import services as sharing
from pixie.sharing.dispatch import message_dispatch
from pixie.sharing.models import BlockedSender, Message
from pixie.sources.editing import (
    source_create,
    source_delete,
    source_pause,
    source_rewrite_accept,
    source_update,
)
from pixie.sources.models import Source
from pixie.sources.services import source_check
from tests.factories import (
    make_bundle_version,
    make_publisher,
    make_skill_version,
    make_user,
)
from tests.reliability.world import build_world
from tests.sharing.strangers import envelope as stranger_envelope
from tests.sources.git_server import git_server, upstream  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("pixie", "catalog", "agents", "egress")
# Writers that are not services: the demo command loads through the services above.
NOT_SERVICES = {
    ("pixie/core/audit/records.py", "audited"),
    ("pixie/management/commands/demo.py", "handle"),
}


def writers() -> set[tuple[str, str]]:
    """(file, function) of every function that opens a revision, read from the source."""
    found = set()
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.FunctionDef):
                    continue
                calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
                names = {getattr(c.func, "id", None) or getattr(c.func, "attr", None)
                         for c in calls}  # fmt: skip
                if names & {"audited", "create_revision"}:
                    found.add((str(path.relative_to(ROOT)), node.name))
    return found - NOT_SERVICES


class Ran:
    """The functions of ours that ran, by (file, name): a profiler, not a stand-in."""

    def __init__(self):
        self.seen: set[tuple[str, str]] = set()

    def __call__(self, frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code.co_filename.startswith(str(ROOT)):
                self.seen.add((str(Path(code.co_filename).relative_to(ROOT)), code.co_name))

    def __enter__(self):
        sys.setprofile(self)
        return self

    def __exit__(self, *exc):
        sys.setprofile(None)


def test_every_service_that_writes_leaves_an_entry_its_objects_history_shows(
    demo_catalog, django_capture_on_commit_callbacks, request, settings, tmp_path
):
    capture = django_capture_on_commit_callbacks
    world = build_world(demo_catalog, capture)
    acme = world.acme
    owner, stranger = world.users["owner"], world.users["stranger"]
    operator = world.users["superuser"]
    globex = Workspace.objects.get(slug="globex")
    agent = Agent.objects.get(pk=world.ids["agent"])
    local = WorkspaceSkill.objects.get(pk=world.ids["local_skill"])
    chase = WorkspaceSkill.objects.get(pk=world.ids["skill"])
    initech = Workspace.objects.create(slug="initech", name="Initech")
    ivy = make_user("ivy")
    initech.memberships.create(user=ivy, role="owner")
    state: dict = {}

    def upgrade_and_approve():
        # A pin on the installed @invoice-chase, left behind by the upgrade for a repoint.
        attachment = AgentSkill.objects.get(agent=agent, skill=chase)
        agent_skill_update(attachment=attachment, actor=owner, pin=True)
        plan_reject(plan=Plan.objects.get(pk=world.ids["plan"]), actor=owner, reason="Later")
        upgrade = plan_create(
            workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
        )
        with capture(execute=True):
            plan_approve(plan=upgrade, actor=owner)
        upgrade.refresh_from_db()
        assert upgrade.status == "applied", upgrade.error

    def repoint():
        plan = repoint_create(
            workspace=acme, actor=owner, installation=Installation.objects.get(workspace=acme)
        )
        with capture(execute=True):
            plan_approve(plan=plan, actor=owner)
        plan.refresh_from_db()
        assert plan.status == "applied" and plan.progress_done > 0, plan.error

    def made():
        return WorkspaceSkill.objects.get(workspace=acme, slug="walk-through")

    def attachment():
        return AgentSkill.objects.get(agent=agent, skill__slug="walk-through")

    def reorder():
        slugs = list(
            AgentSkill.objects.filter(agent=agent).order_by("-position")
            .values_list("skill__slug", flat=True)
        )  # fmt: skip
        agent_skills_reorder(agent=agent, slugs=slugs, actor=owner)

    def second_brief():
        briefer = Agent.objects.get(workspace=globex, slug="briefer")
        state["again"] = assembly_promote(
            agent=briefer, actor=stranger, slug="globex-brief", name="Globex brief",
            version="1.1.0",
        )  # fmt: skip

    def to_initech():
        return sharing.contact_add_local(workspace=acme, other_slug="initech", actor=owner)

    def text():
        state["sent"] = sharing.text_send(
            workspace=acme, contact=state["contact"], text="Hello", actor=owner
        )

    def retry():
        # A delivery that failed (reaching a failing server is tests/sharing's subject).
        Message.objects.filter(pk=state["sent"].pk).update(delivery=Message.Delivery.FAILED)
        with capture(execute=True):
            sharing.message_retry(message=Message.objects.get(pk=state["sent"].pk), actor=owner)

    def receive(name):
        state[name] = sharing.envelope_receive(raw=stranger_envelope(acme))

    def block():
        sharing.sender_block(
            workspace=acme, opened=sharing.message_open(message=state["third"]),
            delete_pending=True, actor=owner,
        )  # fmt: skip

    def plan_expiry():
        # A plan left waiting past the workspace's required expiry: the beat task's.
        from datetime import timedelta

        from django.utils import timezone

        from pixie.installer.tasks import expire_plans

        plan = plan_create(
            workspace=acme, kind="uninstall", bundle_version=demo_catalog["2.2.0"], actor=owner
        )
        Plan.objects.filter(pk=plan.pk).update(created_at=timezone.now() - timedelta(days=30))
        state["expired"] = plan
        assert expire_plans.delay().get() == [plan.pk]

    def expire():
        # A stranger's letter nobody reviewed, older than the expiry: the periodic task's.
        from datetime import timedelta

        from django.utils import timezone

        from pixie.sharing.tasks import expire_unknown_messages

        receive("fourth")
        long_ago = timezone.now() - timedelta(days=400)
        Message.objects.filter(pk=state["fourth"].pk).update(created_at=long_ago)
        assert expire_unknown_messages.delay().get() == 1

    def a_source():
        # A repository served on loopback (tests/sources/git_server.py).
        served = request.getfixturevalue("upstream")
        settings.DATA_DIR = tmp_path / "data"
        served.skill("walk-upstream", "Walk upstream.")
        served.commit("A skill")
        served.push()
        state["source"] = Source.objects.create(
            url=served.url, ref="main", metadata={"slug": "walkers-upstream"}
        )
        assert source_check(state["source"], actor=operator).last_result == "draft"

    def a_rewrite_accepted():
        # What a check that met a force-push leaves (tests/sources has the push itself).
        Source.objects.filter(pk=state["added"].pk).update(last_result="rewritten")
        source_rewrite_accept(Source.objects.get(pk=state["added"].pk), actor=operator)

    pending = BundleVersion.objects.get(pk=world.ids["pending_version"])
    publisher = make_publisher("walkers")
    scrap = make_bundle_version("walkers-scrap", skills=[make_skill_version("scrapped")])
    steps = [
        ("an owner's edit", lambda: skill_edit(skill=local, actor=owner, body="Close it."),
         [local]),
        ("a restore", lambda: skill_restore(skill=local, number=1, actor=owner), [local]),
        ("a rename", lambda: skill_rename(skill=local, new_slug="close-month", actor=owner),
         [local]),
        ("advertising", lambda: skill_set_advertised(skill=chase, advertised=False, actor=owner),
         [chase]),
        ("a credential confirmed",
         lambda: credential_confirm(workspace=acme, name="LEDGER_API_TOKEN", actor=owner), []),
        ("a new skill", lambda: skill_create(
            workspace=acme, slug="walk-through", name="Walk through", body="Walk it.",
            short_description="A walk.", actor=owner), []),
        ("a new agent", lambda: agent_create(workspace=acme, slug="reception",
                                             name="Reception", actor=owner), []),
        ("an agent renamed", lambda: agent_update(agent=agent, name="Renamed", actor=owner),
         [agent]),
        ("an attach", lambda: agent_skill_attach(agent=agent, skill=made(), actor=owner),
         [attachment]),
        ("a disable", lambda: agent_skill_update(attachment=attachment(), actor=owner,
                                                 enabled=False), []),
        ("an override", lambda: agent_skill_override(attachment=attachment(),
                                                     body="Walk it slowly.", actor=owner), []),
        ("a reorder", reorder, []),
        ("a detach", lambda: agent_skill_detach(attachment=attachment(), actor=owner), [agent]),
        ("an upgrade, approved and applied", upgrade_and_approve, [chase]),
        ("a repoint", repoint, []),
        ("a skill package", lambda: skill_package_create(slug="walking", publisher=publisher,
                                                         actor=operator), []),
        ("a skill version published", lambda: state.update(version=skill_version_publish(
            skill_version=make_skill_version("walked", publisher=publisher), actor=operator)),
         []),
        ("a draft's notes and order", lambda: state.update(kit=bundle_version_draft_edit(
            bundle_version=make_bundle_version("walkers-kit", skills=[state["version"]]),
            actor=operator, notes="Walks first.", order=["walked"])), []),
        # A draft discarded with the draft skill version only it held: the entry keeps both.
        ("a draft discarded", lambda: bundle_version_draft_discard(
            bundle_version=scrap, actor=operator), []),
        ("a bundle published", lambda: bundle_version_publish(
            bundle_version=state["kit"], actor=operator), []),
        ("a bundle loaded", lambda: call_command(
            "bundle_load", "catalog/demo/support-desk-1.0.0", "--publish"), []),
        ("a yank", lambda: bundle_version_yank(
            bundle_version=BundleVersion.objects.get(bundle__slug="support-desk"),
            actor=operator, reason="Superseded"), []),
        ("a review approved", lambda: catalog_review_approve(bundle_version=pending,
                                                             actor=operator), []),
        ("a promote", second_brief, []),
        ("a review refused", lambda: catalog_review_refuse(bundle_version=state["again"],
                                                           actor=operator, reason="No"), []),
        ("a publisher trusted", lambda: publisher_trust(
            publisher=Publisher.objects.get(pk=pending.bundle.publisher_id), trusted=True,
            actor=operator), []),
        ("a key rotated", lambda: publisher_key_rotate(
            publisher=Publisher.objects.get(pk=pending.bundle.publisher_id), actor=operator), []),
        ("a key registered", lambda: publisher_key_register(
            slug="northwind", name="Northwind Labs", actor=operator,
            public_key=b64(bytes(SigningKey.generate().verify_key))), []),
        ("a workspace listed", lambda: sharing.directory_listing_set(
            workspace=initech, listed=True, actor=ivy), []),
        ("a contact", lambda: state.update(contact=to_initech()), []),
        ("a text sent", text, []),
        ("a delivery", lambda: message_dispatch(message_pk=state["sent"].pk, final_attempt=True),
         []),
        ("a retry", retry, []),
        ("a share sent", lambda: sharing.share_send(workspace=acme, skill=local,
                                                    contact=state["contact"], actor=owner), []),
        ("an import", lambda: sharing.share_import(
            workspace=acme, message=Message.objects.get(pk=world.ids["message"]), actor=owner),
         []),
        ("a stranger's letter", lambda: receive("first"), []),
        ("another", lambda: receive("second"), []),
        ("kept", lambda: sharing.messages_keep(workspace=acme, messages=[state["first"]],
                                               actor=owner), []),
        ("deleted", lambda: sharing.messages_delete(workspace=acme, messages=[state["second"]],
                                                    actor=owner), []),
        ("a third", lambda: receive("third"), []),
        ("a block", block, []),
        ("an unblock", lambda: [
            sharing.sender_unblock(blocked=blocked, actor=owner)
            for blocked in BlockedSender.objects.filter(workspace=acme)], []),
        ("an expiry", expire, [acme]),
        ("an approval policy", lambda: policy_update(
            workspace=acme, actor=owner, changes={"expiry": "required", "expiry_days": 7}),
         [acme]),
        ("a plan expired", plan_expiry, [lambda: state["expired"]]),
        ("an invitation", lambda: state.update(invited=invitation_make(
            workspace=acme, actor=owner, email="stu@example.com", role="member")),
         [lambda: state["invited"].invitation]),
        ("an invitation accepted", lambda: invitation_accept(
            secret=state["invited"].link.rstrip("/").rsplit("/", 1)[1],
            user=world.users["staff"]), [lambda: state["invited"].invitation]),
        ("a login made to accept one", lambda: invitation_accept_new(
            secret=world.ids["invitation_secret"], username="newbie",
            password="a long new password 7"), []),
        ("an invitation revoked", lambda: invitation_revoke(
            workspace=acme, actor=owner, invitation_id=invitation_make(
                workspace=acme, actor=owner, email="no@example.com", role="member"
            ).invitation.pk), []),
        ("a login made by an owner", lambda: member_add(
            workspace=acme, actor=owner, username="newbie2"), []),
        ("a role changed", lambda: member_role_change(
            workspace=acme, actor=owner, username="stu", role="owner"), []),
        ("a plan by the new owner", lambda: state.update(left=plan_create(
            workspace=acme, kind="uninstall", bundle_version=demo_catalog["2.2.0"],
            actor=world.users["staff"])), []),
        ("a login deactivated", lambda: login_deactivate(
            user=world.users["staff"], actor=operator), [acme]),
        ("a plan taken over", lambda: plan_take_over(plan=state["left"], actor=owner),
         [lambda: state["left"]]),
        ("a token made", lambda: state.update(token=token_create(
            user=owner, actor=owner, name="Walk")[0]), [lambda: state["token"]]),
        ("a token revoked", lambda: token_revoke(token=state["token"], actor=owner),
         [lambda: state["token"]]),
        ("a delivery token made", lambda: state.update(delivery=delivery_token_create(
            workspace=acme, actor=owner, name="Walk laptops", agent=agent)[0]),
         [lambda: state["delivery"]]),
        ("a delivery token rotated", lambda: state.update(delivery=delivery_token_rotate(
            token=state["delivery"], actor=owner)[0]), [lambda: state["delivery"]]),
        ("a delivery token revoked", lambda: delivery_token_revoke(
            token=state["delivery"], actor=owner), [lambda: state["delivery"]]),
        ("a member removed", lambda: member_remove(
            workspace=acme, actor=owner, username="mia"), [acme]),
        # Its own address and name: on CI's pass the counters live in Redis, which the
        # other worker's login tests count in too (from 127.0.0.1), so the fifth wrong
        # password here could be some other count, and no lockout recorded.
        ("a login locked", lambda: [login_failed(RequestFactory().post(
            "/admin/login/", REMOTE_ADDR="203.0.113.79"), "ghost-of-the-walk")
                                    for _ in range(5)], []),
        ("a source's draft", a_source, [lambda: state["source"]]),
        ("a source checked again", lambda: source_check(state["source"], actor=operator),
         [lambda: state["source"]]),
        # An operator's changes to sources (pixie.sources.editing: the admin's and the API's).
        ("a source added", lambda: state.update(added=source_create(
            actor=operator, url="https://example.com/walk.git", ref="main")),
         [lambda: state["added"]]),
        ("a source changed", lambda: source_update(
            state["added"], actor=operator, ref="release", skills=["walk-upstream"]),
         [lambda: state["added"]]),
        ("a source paused", lambda: source_pause(state["added"], actor=operator, paused=True),
         [lambda: state["added"]]),
        ("a rewrite accepted", a_rewrite_accepted, [lambda: state["added"]]),
        ("a source deleted", lambda: source_delete(state["added"], actor=operator), []),
    ]  # fmt: skip
    auditors = Group.objects.get(name="auditors")
    assert auditors  # the world's groups exist: a write path is walked as its user takes it
    ran = set()
    for label, step, targets in steps:
        before = Revision.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        with Ran() as profile:
            step()
        ran |= profile.seen
        new = list(Revision.objects.filter(pk__gt=before).order_by("pk"))
        assert new, f"{label}: wrote nothing to the history"
        entries = AuditEntry.objects.filter(revision__in=new)
        assert entries.count() == len(new), f"{label}: a revision without its audit entry"
        for target in targets:
            target = target() if callable(target) else target
            target.refresh_from_db()
            history = Version.objects.get_for_object(target).values_list("revision_id", flat=True)
            assert set(history) & {r.pk for r in new}, f"{label}: not in {target}'s History"
    missing = sorted(writers() - ran)
    assert missing == [], f"services that write but no step walked: {missing}"
    # The object's History and the audit log agree: one entry a revision, none empty.
    assert AuditEntry.objects.count() == Revision.objects.count()
    assert not AuditEntry.objects.filter(object_count=0).exists()
    assert not Revision.objects.exclude(pk__in=Version.objects.values("revision_id")).exists()
