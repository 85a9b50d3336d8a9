"""Notifications, through the paths people take: each event tells each owner once, in the
home and by one email (Django's locmem outbox); the same event again tells nobody more; a
person's choices hold; a write rolled back tells nobody; members are not told. After a
yank each workspace that runs the version gets a plan ready to review, applied by no one."""

import pytest
from django.db import transaction
from django.urls import reverse
from reversion.models import Version

from catalog.models import BundleVersion, Installation, Plan, Status
from catalog.services import bundle_version_publish, bundle_version_yank
from catalog.services.workspace_skills import skill_create
from pixie.core.models import Membership, Notification, NotificationChoice
from pixie.core.tasks import send_notification_emails
from pixie.installer.after_yank import after_yank
from pixie.installer.plan_notices import notify_plan_ended, notify_plan_waiting
from pixie.installer.plans import plan_create
from pixie.sharing import services as sharing
from tests.clients import admin_for, api_for
from tests.factories import (
    add_local_contact,
    make_bundle_version,
    make_skill_version,
    make_user,
    make_workspace,
)
from tests.installer.flow import approve_and_apply, install

pytestmark = pytest.mark.django_db

Kind = Notification.Kind


@pytest.fixture
def people(db):
    return {
        name: make_user(name, email=f"{name}@example.com", is_staff=True)
        for name in ("owen", "ola", "mia", "gus")
    }


@pytest.fixture
def acme(people):
    """Owners Owen and Ola; Mia a member."""
    workspace = make_workspace("acme", owner=people["owen"], members=[people["mia"]])
    Membership.objects.create(workspace=workspace, user=people["ola"], role="owner")
    return workspace


@pytest.fixture
def globex(people):
    return make_workspace("globex", owner=people["gus"])


def told(user, kind=None):
    rows = Notification.objects.filter(user=user)
    return list(rows.filter(kind=kind) if kind else rows)


def mailed_to(outbox) -> list[str]:
    return sorted(address for message in outbox for address in message.to)


# --- a plan waits --------------------------------------------------------------------


def test_a_plan_asked_for_in_the_home_tells_the_other_owners_once(
    acme, people, demo_catalog, mailoutbox, settings, django_capture_on_commit_callbacks
):
    owen, ola, mia = people["owen"], people["ola"], people["mia"]
    with django_capture_on_commit_callbacks(execute=True):
        admin_for(owen).post(
            reverse("admin:pixie_workspace_plan", args=[acme.pk]),
            {"kind": "install", "bundle": "accounts-receivable", "version": "2.1.0"},
        )
    plan = Plan.objects.get(workspace=acme)
    [notice] = told(ola)
    assert notice.kind == Kind.PLAN_WAITING and notice.workspace == acme
    assert notice.url == reverse("admin:catalog_plan_review", args=[plan.pk])
    assert "waits for your approval (asked by owen)" in notice.title
    assert told(owen) == [] and told(mia) == []  # the asker, and a member: not told
    assert mailed_to(mailoutbox) == ["ola@example.com"]
    [email] = mailoutbox
    assert notice.title in email.subject and "Workspace: Acme" in email.body
    assert f"{settings.PIXIE_SITE_URL}{notice.url}" in email.body
    assert reverse("admin:pixie_notification_choices") in email.body

    # The same event again, and the task again: nothing more.
    with django_capture_on_commit_callbacks(execute=True):
        notify_plan_waiting(plan, asker=owen)
    send_notification_emails.delay()
    assert len(told(ola)) == 1 and len(mailoutbox) == 1
    assert Notification.objects.get(pk=notice.pk).emailed_at is not None


def test_a_plan_rolled_back_tells_nobody(
    acme, people, demo_catalog, mailoutbox, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    with capture(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        plan_create(
            workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
            actor=people["owen"],
        )  # fmt: skip
        raise RuntimeError("the request failed after the plan was made")
    assert Notification.objects.count() == 0 and mailoutbox == []


# --- each person's choices --------------------------------------------------------------


def test_a_person_chooses_what_they_receive_and_where(
    acme, people, demo_catalog, mailoutbox, django_capture_on_commit_callbacks
):
    owen, ola = people["owen"], people["ola"]
    choices = api_for(ola).put(
        reverse("notification-choices"),
        {"plan_waiting": {"in_home": True, "by_email": False}},
        format="json",
    )
    assert choices.status_code == 200, choices.content
    assert choices.json()["plan_waiting"] == {"in_home": True, "by_email": False}
    assert choices.json()["share_arrived"] == {"in_home": True, "by_email": True}
    with django_capture_on_commit_callbacks(execute=True):
        plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                    actor=owen)  # fmt: skip
    assert len(told(ola)) == 1 and mailoutbox == []  # in the home only

    # Off in the home, on by email: mailed, never shown in the home.
    admin_for(ola).post(
        reverse("admin:pixie_notification_choices"), {"plan_waiting-by_email": "on"}
    )
    assert NotificationChoice.objects.get(user=ola, kind=Kind.PLAN_WAITING).in_home is False
    with django_capture_on_commit_callbacks(execute=True):
        plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.2.0"],
                    actor=owen)  # fmt: skip
    assert mailed_to(mailoutbox) == ["ola@example.com"]
    listed = api_for(ola).get(reverse("notification-list", args=["acme"])).json()
    assert listed["results"] == []
    page = admin_for(ola).get(reverse("admin:pixie_workspace_dashboard", args=[acme.pk]))
    assert "waits for your approval" not in page.content.decode()

    # Both off: nothing is kept at all.
    api_for(ola).put(
        reverse("notification-choices"),
        {"plan_waiting": {"in_home": False, "by_email": False}},
        format="json",
    )
    before = Notification.objects.filter(user=ola).count()
    with django_capture_on_commit_callbacks(execute=True):
        plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                    actor=owen)  # fmt: skip
    assert Notification.objects.filter(user=ola).count() == before and len(mailoutbox) == 1


def test_the_choices_api_refuses_what_it_does_not_know(people):
    client = api_for(people["ola"])
    unknown_kind = client.put(
        reverse("notification-choices"),
        {"plan_eaten": {"in_home": True, "by_email": True}},
        format="json",
    )
    assert unknown_kind.status_code == 400
    unknown_key = client.put(
        reverse("notification-choices"),
        {"plan_waiting": {"in_home": True, "by_email": True, "by_pigeon": True}},
        format="json",
    )
    assert unknown_key.status_code == 400 and "by_pigeon" in unknown_key.content.decode()
    assert NotificationChoice.objects.count() == 0
    everything = client.get(reverse("notification-choices")).json()
    assert set(everything) == set(Kind.values)


# --- an apply fails, a plan goes stale ----------------------------------------------------


def test_an_apply_that_fails_tells_every_owner_once(
    acme, people, demo_catalog, mailoutbox, settings, django_capture_on_commit_callbacks
):
    owen = people["owen"]
    plan = plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                       actor=owen)  # fmt: skip
    Notification.objects.all().delete()
    mailoutbox.clear()
    settings.PIXIE_FAILPOINTS = {"plan.apply.finish"}
    plan = approve_and_apply(plan, owen, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.FAILED
    for person in (owen, people["ola"]):  # the asker too: it was theirs
        [notice] = told(person)
        assert notice.kind == Kind.PLAN_FAILED and "failed" in notice.title
        assert "injected fault at plan.apply.finish" in notice.title
    assert told(people["mia"]) == []
    assert mailed_to(mailoutbox) == ["ola@example.com", "owen@example.com"]
    with django_capture_on_commit_callbacks(execute=True):
        notify_plan_ended([plan])
    send_notification_emails.delay()
    assert Notification.objects.count() == 2 and len(mailoutbox) == 2


def test_a_plan_that_went_stale_tells_every_owner(
    acme, people, demo_catalog, mailoutbox, django_capture_on_commit_callbacks
):
    owen = people["owen"]
    plan = plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                       actor=owen)  # fmt: skip
    # The workspace changes under the plan: a skill of its own takes a slug the plan adds.
    skill_create(workspace=acme, slug="invoice-chase", name="Chase", short_description="Mine.",
                 body="Chase them my way.", actor=owen)  # fmt: skip
    Notification.objects.all().delete()
    mailoutbox.clear()
    plan = approve_and_apply(plan, owen, django_capture_on_commit_callbacks)
    assert plan.status == Plan.State.STALE
    [notice] = told(people["ola"], Kind.PLAN_FAILED)
    assert "went stale" in notice.title
    assert mailed_to(mailoutbox) == ["ola@example.com", "owen@example.com"]
    assert told(people["mia"]) == []


# --- a share arrives ---------------------------------------------------------------------


def test_a_share_that_arrives_tells_the_recipient_workspaces_owners(
    acme, globex, people, mailoutbox, django_capture_on_commit_callbacks
):
    gus = people["gus"]
    to_acme = add_local_contact(workspace=globex, other_slug="acme", actor=gus)
    add_local_contact(workspace=acme, other_slug="globex", actor=people["owen"])
    brief = skill_create(workspace=globex, slug="daily-brief", name="Daily brief",
                         short_description="Brief.", body="Brief the team.", actor=gus)  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        sharing.share_send(workspace=globex, skill=brief, contact=to_acme, actor=gus)
    from pixie.sharing.models import Message

    received = Message.objects.get(workspace=acme, direction=Message.Direction.INCOMING)
    for person in (people["owen"], people["ola"]):
        [notice] = told(person)
        assert notice.kind == Kind.SHARE_ARRIVED
        assert notice.url == reverse("admin:pixie_message_review", args=[received.pk])
        assert "from Globex" in notice.title
    assert told(people["mia"]) == [] and told(gus) == []
    assert mailed_to(mailoutbox) == ["ola@example.com", "owen@example.com"]
    send_notification_emails.delay()
    assert len(mailoutbox) == 2


# --- a newer version is published --------------------------------------------------------


def test_a_newer_version_tells_the_workspaces_on_an_older_one(
    acme, globex, people, demo_catalog, operator, mailoutbox, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.1.0"], people["owen"], django_capture_on_commit_callbacks)
    install(globex, demo_catalog["2.2.0"], people["gus"], django_capture_on_commit_callbacks)
    Notification.objects.all().delete()
    mailoutbox.clear()
    draft = make_bundle_version(
        "accounts-receivable",
        version="2.3.0",
        skills=[make_skill_version(body="Use @query-ledger.")],
    )
    with django_capture_on_commit_callbacks(execute=True):
        bundle_version_publish(bundle_version=draft, actor=operator)
    for person in (people["owen"], people["ola"], people["gus"]):
        [notice] = told(person, Kind.VERSION_PUBLISHED)
        assert "Accounts Receivable 2.3.0 is published" in notice.title
    assert "newer than the 2.1.0 Acme runs" in told(people["owen"])[0].title
    assert told(people["mia"]) == []
    assert mailed_to(mailoutbox) == ["gus@example.com", "ola@example.com", "owen@example.com"]


def test_an_older_version_published_late_tells_nobody(
    acme, people, demo_catalog, operator, mailoutbox, django_capture_on_commit_callbacks
):
    install(acme, demo_catalog["2.2.0"], people["owen"], django_capture_on_commit_callbacks)
    Notification.objects.all().delete()
    draft = make_bundle_version(
        "accounts-receivable",
        version="2.1.5",
        skills=[make_skill_version(body="Use @query-ledger.")],
    )
    with django_capture_on_commit_callbacks(execute=True):
        bundle_version_publish(bundle_version=draft, actor=operator)
    assert Notification.objects.count() == 0


# --- after a yank ------------------------------------------------------------------------


def yank(client, version, capture, reason="Charges twice"):
    """The operator's yank, confirmed on its page, as committing the request would."""
    with capture(execute=True):
        client.post(
            reverse("admin:catalog_bundleversion_changelist"),
            {"action": "yank", "_selected_action": [str(version.pk)], "post": "yes",
             "reason": reason},
        )  # fmt: skip
    assert BundleVersion.objects.get(pk=version.pk).status == Status.YANKED


def test_a_yank_gives_each_workspace_that_runs_it_a_ready_upgrade_applied_by_no_one(
    acme, globex, people, demo_catalog, operator_client, mailoutbox,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], people["owen"], capture)
    install(globex, demo_catalog["2.1.0"], people["gus"], capture)
    installed = dict(Installation.objects.values_list("pk", "bundle_version_id"))
    Notification.objects.all().delete()
    mailoutbox.clear()

    yank(operator_client, demo_catalog["2.1.0"], capture)

    for workspace, owners in ((acme, ("owen", "ola")), (globex, ("gus",))):
        [plan] = Plan.objects.filter(workspace=workspace, status=Plan.State.PROPOSED)
        assert plan.kind == Plan.Kind.UPGRADE and plan.bundle_version == demo_catalog["2.2.0"]
        assert plan.created_by is None and plan.decided_by is None
        assert plan.prepared_because == (
            "Prepared by Pixie after Accounts Receivable 2.1.0 was yanked: Charges twice"
        )
        for name in owners:
            [notice] = told(people[name])
            assert notice.kind == Kind.VERSION_YANKED and notice.workspace == workspace
            assert notice.url == reverse("admin:catalog_plan_review", args=[plan.pk])
            assert "Pixie prepared an upgrade to 2.2.0" in notice.title
    assert told(people["mia"]) == []
    assert mailed_to(mailoutbox) == ["gus@example.com", "ola@example.com", "owen@example.com"]
    # Nothing applied: every installation is on the version it was.
    assert dict(Installation.objects.values_list("pk", "bundle_version_id")) == installed

    # The task again (a redelivered message): no second plan, no second email.
    with capture(execute=True):
        after_yank(bundle_version_id=demo_catalog["2.1.0"].pk)
    send_notification_emails.delay()
    assert Plan.objects.filter(prepared_because__startswith="Prepared by Pixie").count() == 2
    assert Plan.objects.filter(status=Plan.State.PROPOSED).count() == 2
    assert Notification.objects.count() == 3 and len(mailoutbox) == 3

    # Its page says who asked; the API shows it with no asker; the history records it.
    plan = Plan.objects.get(workspace=acme, status=Plan.State.PROPOSED)
    [made] = Version.objects.get_for_object(plan)
    assert made.revision.user is None and "Prepared by Pixie after" in made.revision.comment
    page = admin_for(people["ola"]).get(reverse("admin:catalog_plan_review", args=[plan.pk]))
    assert "Prepared by Pixie after Accounts Receivable 2.1.0 was yanked" in page.content.decode()
    shown = api_for(people["ola"]).get(reverse("plan-detail", args=["acme", plan.pk])).json()
    assert shown["created_by"] is None and shown["prepared_because"].startswith("Prepared by")


def test_a_yank_offers_a_rollback_or_says_why_there_is_no_plan(
    acme, globex, people, demo_catalog, operator_client, mailoutbox,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    capture = django_capture_on_commit_callbacks
    owen = people["owen"]
    install(acme, demo_catalog["2.1.0"], owen, capture)
    upgrade = plan_create(workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"],
                          actor=owen)  # fmt: skip
    assert approve_and_apply(upgrade, owen, capture).status == Plan.State.APPLIED
    install(globex, demo_catalog["2.2.0"], people["gus"], capture)  # no earlier generation
    Notification.objects.all().delete()
    mailoutbox.clear()

    yank(operator_client, demo_catalog["2.2.0"], capture, reason="Loses invoices")

    [rollback] = Plan.objects.filter(workspace=acme, status=Plan.State.PROPOSED)
    assert rollback.kind == Plan.Kind.ROLLBACK
    assert rollback.bundle_version == demo_catalog["2.1.0"]
    assert rollback.options["generation"] == 1 and rollback.created_by is None
    [notice] = told(owen)
    assert "Pixie prepared a rollback to generation 1 (2.1.0)" in notice.title
    assert notice.url == reverse("admin:catalog_plan_review", args=[rollback.pk])

    assert not Plan.objects.filter(workspace=globex, status=Plan.State.PROPOSED).exists()
    [none] = told(people["gus"])
    assert "Pixie could not prepare a plan: no newer version" in none.title
    assert "Why it was yanked: Loses invoices" in none.title
    assert mailed_to(mailoutbox) == ["gus@example.com", "ola@example.com", "owen@example.com"]
    assert Installation.objects.get(workspace=acme).bundle_version == demo_catalog["2.2.0"]


def test_a_yank_rolled_back_prepares_nothing_and_tells_nobody(
    acme, people, demo_catalog, operator, mailoutbox, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], people["owen"], capture)
    Notification.objects.all().delete()
    mailoutbox.clear()
    with capture(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        bundle_version_yank(bundle_version=demo_catalog["2.1.0"], actor=operator, reason="Oops")
        raise RuntimeError("the request failed after the yank")
    assert not Plan.objects.filter(status=Plan.State.PROPOSED).exists()
    assert Notification.objects.count() == 0 and mailoutbox == []


def test_one_workspace_that_fails_does_not_stop_the_others(
    acme, globex, people, demo_catalog, operator, monkeypatch,
    django_capture_on_commit_callbacks,
):  # fmt: skip
    from pixie.installer import after_yank as module

    capture = django_capture_on_commit_callbacks
    install(acme, demo_catalog["2.1.0"], people["owen"], capture)
    install(globex, demo_catalog["2.1.0"], people["gus"], capture)
    real = module._ready_plan

    def broken_for_acme(installation, yanked, because):
        if installation.workspace_id == acme.pk:
            raise RuntimeError("the database hiccuped")
        return real(installation, yanked, because)

    monkeypatch.setattr(module, "_ready_plan", broken_for_acme)
    with capture(execute=True):
        bundle_version_yank(bundle_version=demo_catalog["2.1.0"], actor=operator, reason="Bad")
    assert Plan.objects.filter(workspace=globex, status=Plan.State.PROPOSED).exists()
    assert not Plan.objects.filter(workspace=acme, status=Plan.State.PROPOSED).exists()
    [notice] = told(people["owen"], Kind.VERSION_YANKED)
    assert "could not prepare a plan: an unexpected error stopped it" in notice.title


# --- the home and the API -----------------------------------------------------------------


def test_the_home_lists_the_viewers_notifications_and_marks_them_read(
    acme, people, demo_catalog, django_capture_on_commit_callbacks
):
    owen, ola = people["owen"], people["ola"]
    for version in ("2.1.0", "2.2.0"):
        plan_create(workspace=acme, kind="install", bundle_version=demo_catalog[version],
                    actor=owen)  # fmt: skip
    client = admin_for(ola)
    home = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    html = client.get(home).content.decode()
    section = html[html.index('id="dashboard-notifications"') :]
    assert section.count("waits for your approval") == 2 and "Mark all read" in section
    assert reverse("admin:pixie_notification_choices") in section
    assert "waits for your approval" not in admin_for(owen).get(home).content.decode()

    listed = api_for(ola).get(reverse("notification-list", args=["acme"])).json()
    assert listed["count"] == 2 and all(n["read_at"] is None for n in listed["results"])
    client.post(reverse("admin:pixie_notification_read", args=[acme.pk]))
    assert not Notification.objects.filter(user=ola, read_at__isnull=True).exists()
    html = client.get(home).content.decode()
    assert "Mark all read" not in html[html.index('id="dashboard-notifications"') :]


def test_the_api_marks_only_the_persons_own_read(acme, people, demo_catalog):
    plan_create(workspace=acme, kind="install", bundle_version=demo_catalog["2.1.0"],
                actor=people["owen"])  # fmt: skip
    [notice] = told(people["ola"])
    url = reverse("notification-read", args=["acme"])
    assert api_for(people["mia"]).post(url, {}, format="json").json() == {"marked": 0}
    assert api_for(people["ola"]).post(url, {"ids": [notice.pk]}, format="json").json() == {
        "marked": 1
    }
    assert api_for(people["ola"]).post(url, {"every": True}, format="json").status_code == 400
    assert (
        api_for(people["gus"]).get(reverse("notification-list", args=["acme"])).status_code == 404
    )


def test_the_home_costs_the_same_queries_for_one_notification_or_many(
    acme, people, demo_catalog, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    ola = people["ola"]
    home = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    Notification.objects.create(user=ola, workspace=acme, kind=Kind.PLAN_WAITING, event="e0",
                                title="One")  # fmt: skip
    client = admin_for(ola)
    with CaptureQueriesContext(connection) as one:
        client.get(home)
    Notification.objects.bulk_create(
        Notification(
            user=ola, workspace=acme, kind=Kind.PLAN_WAITING, event=f"e{i}", title=f"Number {i}"
        )  # fmt: skip
        for i in range(1, 60)
    )
    with CaptureQueriesContext(connection) as many:
        html = client.get(home).content.decode()
    assert len(many) <= len(one) + 1  # the count, once there are more than are shown
    assert "The first 20 of 60, unread first." in html
