"""The workspace dashboard: what a member reads first, in a fixed number of queries."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from agents.models import Agent, AgentSkill
from catalog.models import Plan, WorkspaceSkill
from egress.models import CredentialRequirement
from pixie.installer.plans import plan_create
from tests.factories import make_user, make_workspace
from tests.installer.flow import install

pytestmark = pytest.mark.django_db

# The home's bound whatever the number of rows: 14, the catalog's two, a count for each
# of the three lists longer than 20, three for the one-line summaries of the upgrades,
# and the viewer's notifications (their count too when there are more than 20).
DASHBOARD_MAX_QUERIES = 24


def browser(user):
    user.is_staff = True
    user.save()
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def busy_acme(acme, owner, agents, demo_catalog, django_capture_on_commit_callbacks):
    """2.1.0 installed with pinned agents, 60 more pinned agents, 55 open plans, 52 credentials."""
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks, agents)
    chase = WorkspaceSkill.objects.get(workspace=acme, slug="invoice-chase")
    old = chase.head
    more = Agent.objects.bulk_create(
        Agent(workspace=acme, slug=f"agent-{n}", name=f"Agent {n:02}") for n in range(60)
    )
    AgentSkill.objects.bulk_create(
        AgentSkill(agent=a, skill=chase, pinned_revision=old) for a in more
    )
    from catalog.services.workspace_skills import skill_edit

    skill_edit(skill=chase, actor=owner, body=old.body + "\n\nA local line.")  # pins now behind
    plan = plan_create(
        workspace=acme, kind="upgrade", bundle_version=demo_catalog["2.2.0"], actor=owner
    )
    for _ in range(54):
        plan.pk = None
        plan.save()
    CredentialRequirement.objects.bulk_create(
        CredentialRequirement(workspace=acme, name=f"TOKEN_{n}", host="api.example.com")
        for n in range(52)
    )
    return acme


def test_the_dashboard_shows_versions_open_plans_credentials_and_agents_behind(
    busy_acme, member, django_assert_max_num_queries
):
    client = browser(member)
    url = reverse("admin:pixie_workspace_dashboard", args=[busy_acme.pk])
    # 14, the catalog's bundles and versions, a count for each list longer than 20, and
    # three for what the upgrades shown change (skills' digests, hosts, credentials of
    # every version compared, all installations at once): DASHBOARD_MAX_QUERIES
    with django_assert_max_num_queries(DASHBOARD_MAX_QUERIES):
        page = client.get(url)
    html = page.content.decode()
    installations = html[html.index('id="dashboard-installations"') :]
    assert "Accounts Receivable" in installations and "2.1.0" in installations
    assert '<span class="newer">2.2.0</span>' in installations
    assert "Plan the upgrade" not in installations  # a member cannot ask
    catalog = html[html.index('id="dashboard-catalog"') : html.index('id="dashboard-plans"')]
    assert "Accounts Receivable" in catalog and "installed 2.1.0" in catalog
    assert 'value="Install' not in catalog
    # Each list shows its first 20, says how many there are, and leads to all of them.
    plans = html[html.index('id="dashboard-plans"') : html.index('id="dashboard-credentials"')]
    assert plans.count("upgrade Accounts Receivable 2.2.0</a>") == 20
    assert "The newest 20 of 55." in plans
    assert Plan.objects.filter(workspace=busy_acme, status="proposed").count() == 55
    between = html.index('id="dashboard-credentials"'), html.index('id="dashboard-agents"')
    credentials = html[between[0] : between[1]]
    assert "The first 20 of 53, by name." in credentials and "LEDGER_API_TOKEN" in credentials
    agents = html[html.index('id="dashboard-agents"') :]
    assert agents.count("/admin/agents/agent/") == 21  # 20 shown, and the link to them all
    assert "The first 20 of 62 agents, by name." in agents
    for section in (plans, credentials, agents):
        link = re.search(r'<a href="([^"]+)">See every', section).group(1).replace("&amp;", "&")
        listing = client.get(link)
        assert listing.status_code == 200 and "?e=1" not in listing.get("Location", ""), link
    waiting = client.get(re.search(r'<a href="([^"]+)">See every waiting', plans).group(1)
                         .replace("&amp;", "&")).content.decode()  # fmt: skip
    assert "55 plans" in waiting


def test_only_members_see_a_workspace_dashboard(acme, owner):
    stranger = make_user("sam")
    make_workspace("initech", owner=stranger)
    url = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    assert browser(stranger).get(url).status_code == 404
    assert browser(owner).get(url).status_code == 200


def test_an_owner_installs_and_upgrades_from_the_workspace_home(
    acme, owner, member, demo_catalog, django_capture_on_commit_callbacks
):
    """From login to the plan of an install: "/" leads an owner of one workspace to its
    home, whose catalog offers Install; the plan is asked for and shown, to be approved
    there. A member reads the same catalog and is offered nothing."""
    from catalog.models import Installation

    client = browser(owner)
    home = client.get("/")
    url = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    assert home.status_code == 302 and home["Location"] == url
    page = client.get(url).content.decode()
    install_page = reverse("admin:pixie_workspace_install", args=[acme.pk])
    offered = f"{install_page}?bundle=accounts-receivable&amp;version=2.2.0"
    assert f'href="{offered}">Install Accounts Receivable 2.2.0</a>' in page
    form = client.get(offered.replace("&amp;", "&")).content.decode()
    assert "Compute the plan" in form and "has no agents yet" in form
    asked = client.post(install_page, {"bundle": "accounts-receivable", "version": "2.2.0"})
    plan = Plan.objects.get(workspace=acme)
    assert asked["Location"] == reverse("admin:catalog_plan_review", args=[plan.pk])
    assert (plan.kind, plan.bundle_version.version, plan.status) == ("install", "2.2.0", "proposed")
    # Refusals say what is wrong, on the home, and ask for nothing.
    action = reverse("admin:pixie_workspace_plan", args=[acme.pk])
    for bad, words in (
        ({"kind": "install", "bundle": "accounts-receivable", "version": "9.9.9"},
         "No published version 9.9.9 of accounts-receivable"),
        ({"kind": "uninstall", "bundle": "accounts-receivable"},
         "kind must be install or upgrade; got 'uninstall'"),
    ):  # fmt: skip
        refused = client.post(action, bad, follow=True)
        shown = [str(m) for m in refused.context["messages"]]
        assert any(words in m for m in shown), shown
    assert Plan.objects.filter(workspace=acme).count() == 1
    # A member is offered nothing and, posting anyway, is refused.
    member_page = browser(member).get(url).content.decode()
    assert install_page not in member_page and "its owners install" in member_page
    refused = browser(member).post(action, {"kind": "install", "bundle": "accounts-receivable",
                                           "version": "2.2.0"}, follow=True)  # fmt: skip
    assert "Only an owner of" in refused.content.decode()
    assert Plan.objects.filter(workspace=acme).count() == 1
    # Once 2.1.0 is installed, the home offers the upgrade.
    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    assert Installation.objects.filter(workspace=acme).exists()
    page = client.get(url).content.decode()
    assert 'value="Plan the upgrade to 2.2.0"' in page and "installed 2.1.0" in page


def test_home_sends_each_person_where_they_start():
    from django.test import Client

    anonymous = Client().get("/")
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/admin/login/")
    several = make_user("sev")
    make_workspace("one", owner=several)
    make_workspace("two", owner=several)
    assert browser(several).get("/")["Location"] == reverse("admin:index")
    assert browser(make_user("none")).get("/")["Location"] == reverse("admin:index")
    icon = Client().get("/favicon.ico")
    assert icon.status_code == 301 and icon["Location"].endswith(".svg")


def test_the_admin_index_leads_to_each_of_the_reader_s_workspaces(acme, owner, member):
    page = browser(owner).get(reverse("admin:index")).content.decode()
    home = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    assert 'id="your-workspaces"' in page and f'href="{home}"' in page
    assert "install from the catalog" in page
    theirs = browser(member).get(reverse("admin:index")).content.decode()
    assert "member: read its bundles" in theirs
    nobody = browser(make_user("nobody")).get(reverse("admin:index")).content.decode()
    assert 'id="your-workspaces"' not in nobody


# --- what an upgrade changes, in one line ---------------------------------------------

DEMO_UPGRADE_LINE = (
    "2.2.0: adds @payment-plan, changes 1 skill, adds 1 host (payments.example.com) "
    "and 1 credential (PAYMENTS_API_KEY)"
)


def installed_rows(page) -> str:
    html = page.content.decode()
    return html[html.index('id="dashboard-installations"') : html.index('id="dashboard-catalog"')]


def test_the_home_says_in_one_line_what_an_upgrade_changes(
    acme, owner, member, demo_catalog, django_capture_on_commit_callbacks
):
    """2.1.0 -> 2.2.0: @payment-plan is new, @invoice-chase changed (the other three are
    the same content, reused), payments.example.com and PAYMENTS_API_KEY are new. The
    owner and the member read the same line; it leads to the whole comparison."""
    from catalog.bundle_history import bundle_compare

    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    url = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    for user in (owner, member):
        client = browser(user)
        rows = installed_rows(client.get(url))
        assert f'<span class="upgrade-line">{DEMO_UPGRADE_LINE}</span>' in rows, user
        assert rows.count('class="upgrade-line"') == 1
        assert ('value="Plan the upgrade to 2.2.0"' in rows) is (user == owner)
        compare = re.search(r'<a href="([^"]+)" aria-label="Every change from Accounts '
                            r'Receivable 2.1.0 to 2.2.0">every change</a>', rows)  # fmt: skip
        whole = client.get(compare.group(1).replace("&amp;", "&"))
        assert whole.status_code == 200 and "payment-plan" in whole.content.decode()
    # The line is the bundle comparison's verdict, not a second one.
    comparison = bundle_compare(user=member, slug="accounts-receivable", before="2.1.0")
    changes = {s.slug: s.change for s in comparison.skills if s.change != "unchanged"}
    assert changes == {"payment-plan": "added", "invoice-chase": "changed"}


def small_bundle(root, slug, version, bodies, hosts=(), credentials=()):
    """A published bundle of short skills (name: body), hosts and credentials (name, host)."""
    from django.core.management import call_command

    from catalog.models import BundleVersion
    from tests.catalog.skill_folders import skill_md, write

    folder = root / f"{slug}-{version}"
    toml = (
        f'slug = "{slug}"\nname = "{slug.title()}"\nversion = "{version}"\n'
        f'description = "A small bundle for the home."\nskills = {list(bodies)!r}\n'
    ).replace("'", '"')
    for host in hosts:
        toml += f'\n[[hosts]]\nhost = "{host}"\nport = 443\npurpose = "Reach {host}."\n'
    for name, host in credentials:
        toml += f'\n[[credentials]]\nname = "{name}"\nhost = "{host}"\npurpose = "Key."\n'
    write(folder / "bundle.toml", toml)
    for name, body in bodies.items():
        description = "Does one small thing for the home's tests. Use when asked to."
        write(folder / "skills" / name / "SKILL.md", skill_md(name, description, body))
    call_command("bundle_load", str(folder), "--publish", verbosity=0)
    return BundleVersion.objects.get(bundle__slug=slug, version=version)


def test_the_upgrade_lines_cost_the_same_queries_for_one_installation_or_many(
    tmp_path, acme, owner, member, demo_catalog, django_capture_on_commit_callbacks,
    django_assert_max_num_queries,
):  # fmt: skip
    """Three queries for every line shown, whatever the number of installations, skills,
    hosts and credentials; a bundle with no newer version shows no line."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    install(acme, demo_catalog["2.1.0"], owner, django_capture_on_commit_callbacks)
    url = reverse("admin:pixie_workspace_dashboard", args=[acme.pk])
    counts = {}
    for user in (owner, member):
        client = browser(user)
        with CaptureQueriesContext(connection) as one:
            client.get(url)
        counts[user.username] = len(one)

    # Four more installations: three with a newer version, one without.
    def skills(prefix, n, changed=()):
        return {f"{prefix}-{i}": f"# {prefix} {i}\n\n{'New' if i in changed else 'Old'}.\n"
                for i in range(n)}  # fmt: skip

    for n in range(3):
        slug = f"tools-{n}"
        hosts = [f"api{i}.{slug}.example.com" for i in range(n + 1)]
        old = small_bundle(tmp_path, slug, "1.0.0", skills(slug, 3), hosts[:1])
        install(acme, old, owner, django_capture_on_commit_callbacks)
        small_bundle(tmp_path, slug, "1.1.0", skills(slug, 3 + n, changed={0}), hosts,
                     [(f"KEY_{i}", host) for i, host in enumerate(hosts[1:])])  # fmt: skip
    steady = small_bundle(tmp_path, "steady", "1.0.0", skills("steady", 2))
    install(acme, steady, owner, django_capture_on_commit_callbacks)

    for user in (owner, member):
        client = browser(user)
        with CaptureQueriesContext(connection) as many:
            page = client.get(url)
        assert len(many) == counts[user.username], (user, len(many), counts)
        with django_assert_max_num_queries(DASHBOARD_MAX_QUERIES):
            page = client.get(url)
        rows = installed_rows(page)
        lines = re.findall(r'<span class="upgrade-line">([^<]*)</span>', rows)
        assert lines == [  # by bundle name; Steady, up to date, has none
            DEMO_UPGRADE_LINE,
            "1.1.0: changes 1 skill; no new hosts or credentials",
            "1.1.0: adds @tools-1-3, changes 1 skill, adds 1 host (api1.tools-1.example.com)"
            " and 1 credential (KEY_0)",
            "1.1.0: adds 2 skills (@tools-2-3, @tools-2-4), changes 1 skill, adds 2 hosts "
            "(api1.tools-2.example.com, api2.tools-2.example.com) and 2 credentials "
            "(KEY_0, KEY_1)",
        ]
        # The bundle with no newer version: up to date, and no line.
        steady_row = rows[rows.index(">Steady</a>") :].split("</tr>")[0]
        assert "up to date" in steady_row and "upgrade-changes" not in steady_row
    print("home queries, one installation vs five:", counts)
