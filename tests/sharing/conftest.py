"""Two workspaces on one server that know each other, and the seed's collision example.

Alpha's owner Ann shares @daily-brief, which mentions Alpha's @meeting-prep (a
skill, so it travels), @read-calendar (a tool, left as text) and
@weather-report (nothing at all). Beta already has its own, different
@meeting-prep.
"""

import socket

import pytest

from catalog.models import WorkspaceSkill
from catalog.services.workspace_skills import skill_create
from pixie.sharing import services as sharing
from tests.factories import add_local_contact, make_user, make_workspace

DAILY_BRIEF_BODY = (
    "Every morning, run @meeting-prep for each meeting on @read-calendar,\n"
    "then add the forecast from @weather-report.\n"
    "Keep it under ten lines."
)
ALPHA_MEETING_PREP = "List the attendees and the open questions.\nUse @read-calendar."
BETA_MEETING_PREP = "Print the agenda and book the room."


def add_skill(workspace, owner, slug, body, name=None, short="What it does, in one line."):
    return skill_create(
        workspace=workspace,
        slug=slug,
        name=name or slug.replace("-", " ").title(),
        short_description=short,
        body=body,
        actor=owner,
    )


@pytest.fixture
def ann():
    return make_user("ann", is_staff=True)


@pytest.fixture
def bob():
    return make_user("bob", is_staff=True)


@pytest.fixture
def mia():
    """A member of Beta, not an owner."""
    return make_user("mia", is_staff=True)


@pytest.fixture
def alpha(ann):
    return make_workspace("alpha", owner=ann)


@pytest.fixture
def beta(bob, mia):
    return make_workspace("beta", owner=bob, members=[mia])


@pytest.fixture
def daily_brief(alpha, ann):
    add_skill(alpha, ann, "meeting-prep", ALPHA_MEETING_PREP)
    return add_skill(
        alpha, ann, "daily-brief", DAILY_BRIEF_BODY, short="A one-page brief of the day."
    )


@pytest.fixture
def beta_meeting_prep(beta, bob):
    return add_skill(beta, bob, "meeting-prep", BETA_MEETING_PREP)


@pytest.fixture
def contacts(alpha, beta, ann, bob):
    """Alpha and Beta have each added the other (by slug, on this server)."""
    return {
        "beta_at_alpha": add_local_contact(workspace=alpha, other_slug="beta", actor=ann),
        "alpha_at_beta": add_local_contact(workspace=beta, other_slug="alpha", actor=bob),
    }


@pytest.fixture
def send_share(django_capture_on_commit_callbacks):
    """Share a skill and run its delivery, as committing the request would."""

    def send(skill, contact, actor):
        with django_capture_on_commit_callbacks(execute=True):
            return sharing.share_send(
                workspace=skill.workspace, skill=skill, contact=contact, actor=actor
            )

    return send


def skills_of(workspace) -> dict[str, WorkspaceSkill]:
    return {
        skill.slug: skill
        for skill in WorkspaceSkill.objects.filter(workspace=workspace).select_related("head")
    }


@pytest.fixture
def public_dns(monkeypatch):
    """Names under .example resolve to a public address (this machine has no DNS);
    other names go to the system resolver."""
    system = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if not str(host).endswith(".example"):
            return system(host, port, *args, **kwargs)
        return [
            (
                socket.AF_INET,
                socket.SOCK_STREAM,
                socket.IPPROTO_TCP,
                "",
                ("93.184.215.14", int(port or 0)),
            )
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
