"""A History entry read as a person reads it: foreign keys by name, times as the admin
writes them, and what changed against the version recorded before, old → new, long text
as a line diff; the first version says it is the first. Every role that may read the
object reads its recorded versions, in a number of queries that does not grow with the
history."""

import re

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse
from reversion.models import Version

from agents.models import Agent
from agents.services import agent_create, agent_update
from catalog.services.publishing import bundle_version_yank
from pixie.core.audit.records import audited
from pixie.core.people.permissions import AUDITORS_GROUP
from tests.clients import admin_for
from tests.factories import make_user

pytestmark = pytest.mark.django_db

PROMPT = "You chase unpaid invoices.\nBe polite.\nNever threaten.\nSign as Acme."
EDITED = "You chase unpaid invoices.\nBe polite and brief.\nNever threaten.\nSign as Acme."
MOMENT = re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d\b")


@pytest.fixture
def auditor(db):
    person = make_user("aud", is_staff=True)
    person.groups.add(Group.objects.get(name=AUDITORS_GROUP))
    return person


@pytest.fixture
def agent(acme, owner):
    made = agent_create(
        workspace=acme, slug="collections", name="Collections", actor=owner, system_prompt=PROMPT
    )
    agent_update(agent=made, actor=owner, name="Debt collection", system_prompt=EDITED)
    return made


def versions_of(obj) -> list[Version]:
    return list(Version.objects.get_for_object(obj).order_by("pk"))


def revision_url(obj, version) -> str:
    meta = obj._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_revision", args=[obj.pk, version.pk])


def main_of(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode().split('id="content-main"', 1)[1]


def text_of(html: str) -> str:
    """The words a reader sees, tags dropped and spaces folded."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_an_auditor_reads_what_an_edit_changed_against_the_version_before(agent, auditor):
    first, second = versions_of(agent)
    main = main_of(admin_for(auditor).get(revision_url(agent, second)))
    changes = main.split('id="recorded-changes"', 1)[1].split("</table>\n", 1)[0]
    words = text_of(changes)
    assert "2 fields of Debt collection changed" in words
    assert "Name Collections → Debt collection" in words
    # The prompt as a line diff: the changed line, its changed words marked.
    assert '<table class="diff">' in changes
    assert "<del>polite.</del>" in changes and "<ins>polite and brief.</ins>" in changes
    # The version before is named and linked.
    assert f'href="{revision_url(agent, first)}"' in main
    # Unchanged fields, listed apart: the workspace by its name, the time as the admin
    # writes one.
    unchanged = text_of(main.split('id="recorded-unchanged"', 1)[1])
    assert "Workspace Acme" in unchanged
    assert "(id)" not in main and "Workspace #" not in main
    created = re.search(r"Created at (\S+ \S+)", unchanged).group(1)
    assert MOMENT.fullmatch(created), created
    assert "+00:00" not in main and not re.search(r"\d{4}-\d\d-\d\dT\d\d", main)


def test_the_first_recorded_version_says_it_is_the_first(agent, auditor):
    first = versions_of(agent)[0]
    main = main_of(admin_for(auditor).get(revision_url(agent, first)))
    assert "This is the first recorded version of Debt collection" in text_of(main)
    assert 'id="recorded-changes"' not in main
    fields = text_of(main.split('id="recorded-fields"', 1)[1])
    assert "Name Collections" in fields and "Workspace Acme" in fields
    assert "as recorded then" in fields


def test_a_yank_reads_published_to_yanked_with_who_yanked_it(demo_catalog, operator, auditor):
    release = demo_catalog["2.2.0"]
    bundle_version_yank(bundle_version=release, actor=operator, reason="Chases paid invoices")
    yank = versions_of(release)[-1]
    main = main_of(admin_for(auditor).get(revision_url(release, yank)))
    words = text_of(main.split('id="recorded-changes"', 1)[1].split("</table>", 1)[0])
    assert "Status Published → Yanked" in words
    assert f"Yanked by — → {operator.username}" in words
    assert "Yank reason — → Chases paid invoices" in words
    assert re.search(r"Yanked at — → \d{4}-\d\d-\d\d \d\d:\d\d\b", words)
    unchanged = text_of(main.split('id="recorded-unchanged"', 1)[1])
    assert "Bundle Accounts Receivable" in unchanged  # not "Bundle (id) 1"


def test_a_version_that_changed_no_field_of_its_own_says_so(agent, owner, auditor):
    with audited(actor=owner, comment="Saved as it was"):
        Agent.objects.get(pk=agent.pk).save()
    latest = versions_of(agent)[-1]
    main = main_of(admin_for(auditor).get(revision_url(agent, latest)))
    assert "No field of Debt collection itself changed in this version" in text_of(main)


def test_an_object_that_is_gone_is_named_as_gone(agent, owner, auditor, acme):
    """A foreign key to an object deleted since: its kind and id, and that it is gone."""
    with audited(actor=owner, comment="Saved as it was"):
        Agent.objects.get(pk=agent.pk).save()
    latest = versions_of(agent)[-1]
    recorded = latest.serialized_data.replace(f'"workspace": {acme.pk},', '"workspace": 999999,')
    assert recorded != latest.serialized_data
    Version.objects.filter(pk=latest.pk).update(serialized_data=recorded)
    main = main_of(admin_for(auditor).get(revision_url(agent, latest)))
    assert "Workspace Acme → Workspace #999999, since deleted" in text_of(main)


@pytest.mark.parametrize("role", ["owner", "member", "auditor", "superuser"])
def test_every_role_that_reads_an_agent_reads_its_recorded_versions(role, agent, owner, member,
                                                                    auditor):  # fmt: skip
    people = {"owner": owner, "member": member, "auditor": auditor,
              "superuser": make_user("sue", is_superuser=True, is_staff=True)}  # fmt: skip
    client = admin_for(people[role])
    for version in versions_of(agent):
        assert client.get(revision_url(agent, version)).status_code == 200, role
    history = client.get(reverse("admin:agents_agent_history", args=[agent.pk]))
    assert history.status_code == 200
    assert MOMENT.search(text_of(history.content.decode().split('id="change-history"')[1]))


@pytest.mark.parametrize("role", ["member", "auditor"])
def test_every_role_that_reads_a_release_reads_its_recorded_versions(role, demo_catalog, acme,
                                                                     member, auditor):  # fmt: skip
    release = demo_catalog["2.1.0"]
    client = admin_for({"member": member, "auditor": auditor}[role])
    for version in versions_of(release):
        assert client.get(revision_url(release, version)).status_code == 200, role


def test_a_long_history_is_read_in_the_same_number_of_queries(
    agent, owner, auditor, django_assert_max_num_queries
):
    client = admin_for(auditor)
    latest = versions_of(agent)[-1]
    client.get(revision_url(agent, latest))  # caches warmed: content types, the session
    with django_assert_max_num_queries(12):
        main_of(client.get(revision_url(agent, latest)))
    for n in range(30):
        agent_update(agent=agent, actor=owner, system_prompt=f"{EDITED}\nRound {n}.")
    versions = versions_of(agent)
    for version in (versions[-1], versions[len(versions) // 2]):
        with django_assert_max_num_queries(12):
            main_of(client.get(revision_url(agent, version)))


def test_a_hostile_text_is_compared_in_bounded_work(agent, owner, auditor):
    """Thousands of lines, every other one changed: shown as removed then added, and said
    so (the diff every comparison uses, catalog.line_diff, whose budget bounds the work;
    its time at two sizes is in the session's note, not asserted here)."""
    with audited(actor=owner, comment="Hostile"):
        Agent.objects.filter(pk=agent.pk).update(
            system_prompt="\n".join(f"line {n} a" for n in range(6000))
        )
        Agent.objects.get(pk=agent.pk).save()
    with audited(actor=owner, comment="Hostile again"):
        Agent.objects.filter(pk=agent.pk).update(
            system_prompt="\n".join(f"line {n} {'b' if n % 2 else 'a'}" for n in range(6000))
        )
        Agent.objects.get(pk=agent.pk).save()
    latest = versions_of(agent)[-1]
    main = main_of(admin_for(auditor).get(revision_url(agent, latest)))
    assert "Too many lines changed to align them one by one" in main
