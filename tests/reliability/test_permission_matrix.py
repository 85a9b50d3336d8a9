"""Every admin page and API endpoint x every kind of user: the allow/deny each expects.

The URL patterns are enumerated, so an endpoint added without a row here fails
the suite. Refused requests change nothing.
"""

import hashlib
import json

import pytest
from django.apps import apps
from django.db import transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from pixie.core.models import AuditCheck
from tests.reliability.urls import ADMIN_MODEL_VIEW, all_patterns, fill
from tests.reliability.world import ROLES, build_world

pytestmark = pytest.mark.django_db

OUR_APPS = ["pixie", "catalog", "agents", "egress", "sources"]
OK = "2xx"
# role -> expected status, for each kind of page or endpoint
NOBODY = {"anonymous": 302, "inactive": 302}


def _row(**statuses):
    return {**NOBODY, **statuses}


ADMIN_KINDS = {
    "any_staff": _row(
        stranger=200, member=200, owner=200, staff=200, operator=200, auditor=200, superuser=200
    ),
    # Operators (superusers, and the group operators with the catalog's permissions) meet
    # the operator pages' own limits (no adding tools, no deleting what is published), so
    # only "no server error" is asked of them here.
    "operator": _row(
        stranger=403,
        member=403,
        owner=403,
        staff=403,
        operator=None,
        auditor=403,
        superuser=None,
    ),
    # The catalog's lists, pages and history: auditors (the group's view permissions) read them.
    "catalog_read": _row(
        stranger=403,
        member=403,
        owner=403,
        staff=403,
        operator=None,
        auditor=200,
        superuser=None,
    ),
    # Bundles, bundle versions and skill versions: also read by whoever belongs to a
    # workspace, as far as it may see them (catalog.admin.member_read); a staff login of
    # no workspace reads nothing.
    "catalog_member_read": _row(
        stranger=200,
        member=200,
        owner=200,
        staff=403,
        operator=None,
        auditor=200,
        superuser=None,
    ),
    "reversion": _row(
        stranger=403,
        member=403,
        owner=403,
        staff=403,
        operator=None,
        auditor=None,
        superuser=None,
    ),
    # The review queue and its forms: operators only, by role, whatever the model permissions.
    "operator_page": _row(
        stranger=403, member=403, owner=403, staff=403, operator=200, auditor=403, superuser=200
    ),
    "operator_post": _row(
        stranger=403, member=403, owner=403, staff=403, operator=405, auditor=403, superuser=405
    ),
    # A workspace's lists and objects: its members, and whoever reads every workspace
    # (auditors, superusers).
    "ws_list": _row(
        stranger=200, member=200, owner=200, staff=403, operator=403, auditor=200, superuser=200
    ),
    "ws_object": _row(
        stranger=404, member=200, owner=200, staff=403, operator=403, auditor=200, superuser=200
    ),
    "ws_write": _row(
        stranger=403,
        member=403,
        owner=403,
        staff=403,
        operator=403,
        auditor=403,
        superuser=None,
    ),
    # Every page of a workspace's object, one rule (pixie.core.web.pages.WorkspacePages): whoever
    # may read the object (its members; auditors and superusers) reads the page, and anyone
    # else meets a 404. A page that acts shows a reader why only an owner may, instead of
    # its form.
    "workspace_page": _row(
        stranger=404, member=200, owner=200, staff=404, operator=404, auditor=200, superuser=200
    ),
    # The audit log: auditors and operators (superusers among them) read it; nobody writes it.
    # A workspace skill's revisions and comparisons: workspace pages that operators read
    # too (they read every workspace's history, not its other pages).
    "history_page": _row(
        stranger=404, member=200, owner=200, staff=404, operator=200, auditor=200, superuser=200
    ),
    "audit_log": _row(
        stranger=403, member=403, owner=403, staff=403, operator=200, auditor=200, superuser=200
    ),
    "audit_write": _row(**{r: 403 for r in ROLES if r not in NOBODY}),
    "post_only": _row(**{r: 405 for r in ROLES if r not in NOBODY}),
    "redirect": _row(**{r: 302 for r in ROLES if r not in NOBODY}),
    "summary": _row(
        stranger=404, member=302, owner=302, staff=404, operator=404, auditor=302, superuser=302
    ),
    "login": {**{r: 302 for r in ROLES}, "anonymous": 200, "inactive": 200},
    "logout": _row(**{r: 405 for r in ROLES if r not in NOBODY}),
    "autocomplete": _row(
        stranger=403,
        member=403,
        owner=403,
        staff=403,
        operator=None,
        auditor=403,
        superuser=403,
    ),
}
ADMIN_NAMED = {
    "index": "any_staff",
    "login": "login",
    "logout": "logout",
    "password_change": "any_staff",
    "password_change_done": "any_staff",
    "jsi18n": "any_staff",
    "autocomplete": "autocomplete",
    "catalog_plan_ask": "any_staff",
    "pixie_contact_add_card": "any_staff",
    "pixie_contact_add_local": "any_staff",
    "pixie_contact_our_card": "any_staff",
    "pixie_contact_directory": "post_only",
    "catalog_plan_review": "workspace_page",
    "catalog_plan_status": "workspace_page",
    "catalog_plan_skill": "workspace_page",
    "catalog_workspaceskill_text": "history_page",
    "catalog_workspaceskill_compare": "history_page",
    "catalog_workspaceskill_restore": "post_only",
    "pixie_workspace_dashboard": "workspace_page",
    "pixie_workspace_members": "workspace_page",
    "pixie_workspace_policy": "workspace_page",
    "pixie_workspace_install": "workspace_page",
    "pixie_workspace_delivery": "workspace_page",
    "agents_agent_new": "any_staff",
    "agents_agent_edit": "workspace_page",
    "pixie_my_tokens": "any_staff",
    "pixie_notification_choices": "any_staff",
    "pixie_notification_read": "post_only",
    "catalog_plan_take_over": "post_only",
    "catalog_workspaceskill_share": "workspace_page",
    "catalog_workspaceskill_rename": "workspace_page",
    "agents_agent_skills": "workspace_page",
    "agents_agent_prompt": "workspace_page",
    "agents_agent_menu": "workspace_page",
    "agents_agent_prompt_compare": "workspace_page",
    "pixie_message_review": "workspace_page",
    "pixie_contact_message": "workspace_page",
    "pixie_message_summary": "summary",
    "pixie_message_block": "workspace_page",
    "catalog_workspaceskill_edit": "workspace_page",
    "agents_agent_promote": "workspace_page",
    "catalog_plan_approve": "post_only",
    "pixie_workspace_plan": "post_only",
    "egress_credentialrequirement_confirm": "post_only",
    "catalog_plan_reject": "post_only",
    "catalog_plan_choices": "post_only",
    "catalog_plan_repoint": "post_only",
    "catalog_installation_repoint": "post_only",
    "catalog_installation_rollback": "post_only",
    "catalog_workspaceskill_advertise": "post_only",
    "agents_agent_skills_change": "post_only",
    "pixie_message_import": "post_only",
    "pixie_message_add_sender": "post_only",
    "catalog_plan_change": "redirect",
    "catalog_bundleversion_review": "operator_page",
    "catalog_bundleversion_approve": "operator_post",
    "catalog_bundleversion_refuse": "operator_post",
    "catalog_publisher_trust": "operator_post",
    "catalog_publisher_key_new": "operator_post",
    # The audit log's *Verify now* (pixie.core.audit.checks): who may start it, below.
    "pixie_auditentry_verify": "post_only",
    # A draft's *Discard* (catalog.admin.version_page): POST only, by whoever may change it.
    "catalog_bundleversion_discard": "post_only",
    # A source's buttons (pixie.sources.admin): POST only, by whoever may change it.
    "sources_source_check": "post_only",
    "sources_source_pause": "post_only",
    "sources_source_accept": "post_only",
}
# What auditors read of the operators' models (catalog.roles.auditors_group_ensure).
AUDITED_MODELS = {
    "catalog.publisher", "catalog.tool", "catalog.skillpackage", "catalog.skillversion",
    "catalog.bundle", "catalog.bundleversion", "sources.source",
}  # fmt: skip
OPERATOR_MODELS = {
    "auth.group", "auth.user", "authtoken.tokenproxy", "catalog.publisher", "catalog.tool",
    "catalog.skillpackage", "catalog.skillversion", "catalog.bundle", "catalog.bundleversion",
    "sources.source",
}  # fmt: skip
MEMBER_READ_MODELS = {"catalog.bundle", "catalog.bundleversion", "catalog.skillversion"}
NOT_CHECKED = {
    "view_on_site": "the admin's object shortcut; it redirects to the object's own page",
    "app_list": "an app's index lists only the models the user may see",
}


def admin_kind(route: str, name: str | None) -> str | None:
    if name in ADMIN_NAMED:
        return ADMIN_NAMED[name]
    match = ADMIN_MODEL_VIEW.match(name or "")
    if not match:
        return None
    label = f"{match['app']}.{match['model']}"
    view = match["view"]
    if label in ("pixie.auditentry", "pixie.loginlockout"):  # read by those who audit
        return "audit_write" if view in ("add", "delete") else "audit_log"
    if label in OPERATOR_MODELS:
        reads = view in ("changelist", "change", "history", "revision", "compare")
        if label in MEMBER_READ_MODELS and reads:
            return "catalog_member_read"
        return "catalog_read" if label in AUDITED_MODELS and reads else "operator"
    if view in ("recoverlist", "recover"):
        return "reversion"
    if view == "revision":  # one version in an object's history
        return "ws_object"
    if view == "changelist":
        return "ws_list"
    if view in ("change", "history"):
        return "ws_object"
    if view in ("add", "delete"):
        return "ws_write"
    return None


def digest() -> str:
    rows = {
        model._meta.label: sorted(
            json.dumps(r, sort_keys=True, default=str) for r in model.objects.values()
        )
        for app in OUR_APPS
        for model in apps.get_app_config(app).get_models()
    }
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


@pytest.fixture
def world(demo_catalog, django_capture_on_commit_callbacks):
    return build_world(demo_catalog, django_capture_on_commit_callbacks)


def matches(expected, status: int) -> bool:
    if expected is None:
        return status < 500
    if expected == OK:
        return 200 <= status < 300
    return status == expected


def test_every_admin_url_has_a_row():
    missing = []
    for route, name in all_patterns():
        if not route.startswith("admin/") or name in NOT_CHECKED or name is None:
            continue
        if admin_kind(route, name) is None:
            missing.append(f"{route} ({name})")
    assert missing == [], "admin URLs without a permission row: " + ", ".join(missing)


@pytest.mark.parametrize("role", ROLES)
def test_admin_pages_allow_and_deny_as_expected(role, world):
    failures = []
    before = digest()
    client = Client()
    if role != "anonymous":
        client.force_login(world.users[role])
    for route, name in all_patterns():
        if not route.startswith("admin/") or name in NOT_CHECKED or name is None:
            continue
        url = fill(route, name, world)
        if url is None:
            failures.append(f"no object to build {route}")
            continue
        expected = ADMIN_KINDS[admin_kind(route, name)]
        status = client.get(url).status_code
        if not matches(expected[role], status):
            failures.append(f"{role} GET {url}: {status}, expected {expected[role]}")
    assert failures == [], "\n".join(failures)
    assert digest() == before


# The API: tokens for everyone who has one (an inactive user's token is refused).

# A workspace's endpoints are its members' (superusers and auditors read every workspace in
# the admin, not through a member's API).
API_READ = {"anonymous": 401, "inactive": 401, "stranger": 404, "member": 200, "owner": 200,
            "staff": 404, "operator": 404, "auditor": 404, "superuser": 404}  # fmt: skip
API_OWNER = {**API_READ, "member": 403, "owner": OK}
# History reads (revisions, comparisons, the workspace's history): auditors' and
# operators' too (superusers are operators).
API_HISTORY = {**API_READ, "auditor": 200, "operator": 200, "superuser": 200}
# Reads auditors make of every workspace (delivery's tokens and clients); operators do not.
API_AUDITOR_READ = {**API_READ, "auditor": 200}
API_MEMBER_WRITE = {**API_READ, "member": OK, "owner": OK}
# The catalog is what a workspace sees: a staff login of no workspace, not an operator,
# lists nothing and reads nothing.
API_CATALOG_LIST = {**{r: 200 for r in ROLES}, "anonymous": 401, "inactive": 401}
API_CATALOG = {**API_CATALOG_LIST, "staff": 404}
API_INBOX = {r: 400 for r in ROLES}
API_SIGNED_IN = {**{r: OK for r in ROLES}, "anonymous": 401, "inactive": 401}
# The audit log: auditors and operators (superusers among them), whatever their workspaces.
API_AUDIT = {**{r: 403 for r in ROLES}, "anonymous": 401, "inactive": 401, "operator": 200,
             "auditor": 200, "superuser": 200}  # fmt: skip
# The sources the catalog follows (pixie.sources.api): operators (superusers among them)
# read and change them, auditors read them; everyone else is refused, reads too.
API_SOURCES_READ = API_AUDIT
API_SOURCES = {**API_AUDIT, "operator": OK, "auditor": 403, "superuser": OK}


def _w(world):
    return world.ids


# name -> [(method, expectation, body or None)]; bodies are valid, so an allowed
# request really does what it says, and a refused one would have changed something.
API_ROWS = {
    "bundle-list": [("get", API_CATALOG_LIST, None)],
    "bundle-detail": [("get", API_CATALOG, None)],
    "bundle-version-detail": [("get", API_CATALOG, None)],
    "bundle-compare": [("get", API_CATALOG, None)],
    "bundle-version-download": [("get", API_CATALOG, None)],
    "bundle-skill-file": [("get", API_CATALOG, None)],
    "schema": [("get", API_CATALOG_LIST, None)],
    "swagger-ui": [("get", API_CATALOG_LIST, None)],
    "sharing-inbox": [("post", API_INBOX, {"envelope": "not a sealed envelope"})],
    "plan-list": [
        ("get", API_READ, None),
        ("post", API_OWNER, {"kind": "uninstall", "bundle": "accounts-receivable"}),
    ],
    "plan-detail": [("get", API_READ, None)],
    "plan-approve": [("post", API_OWNER, {})],
    "plan-reject": [("post", API_OWNER, {"reason": "Not now"})],
    "skill-list": [("get", API_READ, None)],
    "workspace-history": [("get", API_HISTORY, None)],
    "workspace-history-objects": [("get", API_HISTORY, None)],
    "audit-log": [("get", API_AUDIT, None)],
    "audit-csv": [("get", API_AUDIT, None)],
    "audit-jsonl": [("get", API_AUDIT, None)],
    "skill-detail": [("get", API_READ, None), ("patch", API_OWNER, {"body": "New words."})],
    "skill-stats": [("get", API_READ, None)],
    "skill-file": [("get", API_READ, None)],
    "skill-revision-list": [("get", API_HISTORY, None)],
    "skill-revision-detail": [("get", API_HISTORY, None)],
    "skill-compare": [("get", API_HISTORY, None)],
    "skill-revision-restore": [("post", API_OWNER, {})],
    "skill-rename": [("post", API_OWNER, {"slug": "chase-invoices"})],
    "egress-rule-list": [("get", API_READ, None)],
    "credential-list": [("get", API_READ, None)],
    "credential-confirm": [("post", API_OWNER, {})],
    "installation-list": [("get", API_READ, None)],
    "installation-generations": [("get", API_READ, None)],
    "workspace-policy": [
        ("get", API_READ, None),
        ("patch", API_OWNER, {"second_owner": "required", "expiry_days": 7}),
    ],
    "agent-list": [
        ("get", API_READ, None),
        ("post", API_OWNER, {"slug": "new-agent", "name": "New agent"}),
    ],
    "agent-detail": [("get", API_READ, None), ("patch", API_OWNER, {"name": "Renamed"})],
    "agent-skills": [
        ("post", API_OWNER, {"skill": "month-end"}),
        ("put", API_OWNER, "reorder"),
    ],
    "agent-skill-detail": [("patch", API_OWNER, {"enabled": False}), ("delete", API_OWNER, None)],
    "agent-prompt": [("get", API_READ, None)],
    "agent-prompt-compare": [("get", API_READ, None)],
    "agent-menu": [("get", API_READ, None)],
    "agent-turns": [("post", API_MEMBER_WRITE, {})],
    "agent-promote": [("post", API_OWNER, {"slug": "kit", "name": "Kit"})],
    "turn-detail": [("get", API_READ, None)],
    "turn-finish": [("post", API_MEMBER_WRITE, {"outcome": "succeeded"})],
    "contact-card": [("get", API_READ, None)],
    "directory-listing": [("get", API_READ, None), ("patch", API_OWNER, {"listed": True})],
    # The world's acme has globex as a contact already: an owner is told so (400).
    "contact-list": [
        ("get", API_READ, None),
        ("post", {**API_OWNER, "owner": 400}, {"workspace": "globex"}),
    ],
    "message-list": [("get", API_READ, None), ("post", API_OWNER, "text")],
    "inbox-status": [("get", API_READ, None)],
    "share-send": [("post", API_OWNER, "share")],
    "share-review": [("get", API_READ, None)],
    "share-import": [("post", API_OWNER, {})],
    # The world's sender is already a contact: an owner is told so (400), nobody else
    # gets that far.
    "add-sender": [("post", {**API_OWNER, "owner": 400}, {"fingerprint": "0000"})],
    # An owner makes a new login (an existing one is invited, never added).
    "member-list": [("get", API_READ, None), ("post", API_OWNER, {"username": "newcomer"})],
    "invitation-list": [
        ("get", API_OWNER, None),
        ("post", API_OWNER, {"email": "another@example.com", "role": "owner"}),
    ],
    "invitation-detail": [("delete", API_OWNER, None)],
    "member-detail": [("patch", API_OWNER, {"role": "owner"}), ("delete", API_OWNER, None)],
    "workspace-token-list": [("get", API_OWNER, None)],
    # Delivery (pixie.delivery): members and auditors read tokens and clients; owners make,
    # rotate and revoke tokens; operators have nothing inside a workspace.
    "delivery-token-list": [
        ("get", API_AUDITOR_READ, None),
        ("post", API_OWNER, {"name": "Front desk laptops", "agent": "collections"}),
    ],
    "delivery-token-detail": [("delete", API_OWNER, None)],
    "delivery-token-rotate": [("post", API_OWNER, None)],
    "delivery-client-list": [("get", API_AUDITOR_READ, None)],
    "workspace-token-detail": [("delete", API_OWNER, None)],
    # A person's own tokens: anyone signed in lists and makes theirs; the world's token
    # (filled in) is the member's, which only they revoke here.
    "token-list": [("get", API_SIGNED_IN, None), ("post", API_SIGNED_IN, {"name": "Robot"})],
    "token-detail": [
        (
            "delete",
            {**API_SIGNED_IN, **{r: 404 for r in ROLES if r not in NOBODY}, "member": OK},
            None,
        )
    ],  # fmt: skip
    # The world's plan was not left by its asker: an owner is told so (409).
    "plan-take-over": [("post", {**API_OWNER, "owner": 409}, None)],
    # A person's own notifications (the world gives the member and the owner one unread).
    "notification-list": [("get", API_READ, None)],
    "notification-read": [("post", API_MEMBER_WRITE, {})],
    "notification-choices": [
        ("get", API_SIGNED_IN, None),
        ("put", API_SIGNED_IN, {"plan_waiting": {"in_home": True, "by_email": False}}),
    ],
    # Sources (the world's: never checked, so nothing was rewritten to accept: 409).
    "source-list": [
        ("get", API_SOURCES_READ, None),
        ("post", API_SOURCES, {"url": "https://example.com/more.git", "paused": True}),
    ],
    "source-detail": [
        ("get", API_SOURCES_READ, None),
        ("patch", API_SOURCES, {"interval": 7200}),
        ("delete", API_SOURCES, None),
    ],
    "source-check": [("post", {**API_SOURCES, "operator": 202, "superuser": 202}, None)],
    "source-pause": [("post", API_SOURCES, None)],
    "source-resume": [("post", API_SOURCES, None)],
    "source-accept-rewrite": [("post", {**API_SOURCES, "operator": 409, "superuser": 409}, None)],
}
# Allowed writes that change nothing here: what they queue runs once the request commits,
# and each request here is rolled back.
QUEUES_ONLY = {"source-check": "a check of the source"}


def _body(body, world):
    if body == "text":
        return {"contact": world.ids["contact"], "text": "Hello from Acme"}
    if body == "share":
        return {"contact": world.ids["contact"], "skill": "invoice-chase"}
    if body == "reorder":  # the agent's skills, last first
        from agents.models import AgentSkill

        attached = AgentSkill.objects.filter(agent_id=world.ids["agent"]).order_by("position")
        return {"order": list(attached.values_list("skill__slug", flat=True))[::-1]}
    return body


# Probes outside admin/ and api/: open to everyone, GET only, and they change nothing.
PROBE = {r: 200 for r in ROLES}
PROBE_ROWS = {
    "healthz": [("get", PROBE), ("post", {r: 405 for r in ROLES})],
    "livez": [("get", PROBE), ("post", {r: 405 for r in ROLES})],
    # The way in: everyone is sent on (to the login, a workspace's home or the index).
    "home": [("get", {r: 302 for r in ROLES}), ("post", {r: 405 for r in ROLES})],
    "favicon": [("get", {r: 301 for r in ROLES}), ("post", {r: 405 for r in ROLES})],
    # The one-time password link (pixie.core.people.members): a wrong one says so to anyone, and
    # changes nothing.
    "password-set": [("get", PROBE), ("post", PROBE)],
    "password-set-done": [("get", PROBE), ("post", {r: 405 for r in ROLES})],
    # An invitation's link (the world's, waiting): anyone may read it; a POST that asks
    # nothing changes nothing.
    "invitation-accept": [("get", PROBE), ("post", PROBE)],
    # Delivery URLs (pixie.delivery): the token in the path is the only credential, so a
    # session reads nothing there, whoever's; tests/delivery has the tokens' own matrix.
    "delivery": [("get", {r: 404 for r in ROLES}), ("post", {r: 405 for r in ROLES})],
    # Claude Code's marketplace: a workspace delivery token as a header, nothing else.
    "claude-marketplace": [
        ("get", {r: 404 for r in ROLES}), ("post", {r: 405 for r in ROLES}),
    ],  # fmt: skip
}
PROBE_ARGS = {
    "delivery": lambda world: ["/.well-known/agent-skills/index.json"],
    "claude-marketplace": lambda world: ["marketplace.json"],
    "password-set": lambda world: ["MQ", "not-a-token"],
    "invitation-accept": lambda world: [world.ids["invitation_secret"]],
}


def test_every_url_outside_admin_and_api_has_a_row():
    names = {name for route, name in all_patterns() if not route.startswith(("admin/", "api/"))}
    assert sorted(names - set(PROBE_ROWS)) == []


def test_probes_answer_everyone_and_change_nothing(world):
    failures = []
    before = digest()
    for name, requests in PROBE_ROWS.items():
        for method, expected in requests:
            for role in ROLES:
                client = Client()
                if role != "anonymous":
                    client.force_login(world.users[role])
                url = reverse(name, args=PROBE_ARGS[name](world) if name in PROBE_ARGS else None)
                status = getattr(client, method)(url).status_code
                if status != expected[role]:
                    failures.append(f"{role} {method.upper()} {url}: {status}, expected "
                                    f"{expected[role]}")  # fmt: skip
    assert failures == [], "\n".join(failures)
    assert digest() == before


def test_every_api_endpoint_has_a_row():
    names = {name for route, name in all_patterns() if route.startswith("api/")}
    assert sorted(names - set(API_ROWS)) == []


# Each role's rows in two halves, each a test: on PostgreSQL a role's whole sweep took
# 5 to 6 s, past the budget the run reports (docs/CONTRIBUTING.md).
API_PARTS = 2


@pytest.mark.parametrize("part", range(API_PARTS), ids=lambda p: f"{p + 1}of{API_PARTS}")
@pytest.mark.parametrize("role", ROLES)
def test_api_endpoints_allow_and_deny_as_expected(role, part, world):
    failures = []
    routes = {name: route for route, name in all_patterns() if route.startswith("api/")}
    for name, requests in list(API_ROWS.items())[part::API_PARTS]:
        url = fill(routes[name], name, world)
        for method, expected, body in requests:
            client = APIClient()
            if role != "anonymous":
                client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens[role]}")
            # Each request meets the same world: what it changes is rolled back after.
            with transaction.atomic():
                before = digest()
                response = getattr(client, method)(url, _body(body, world), format="json")
                changed = digest() != before
                transaction.set_rollback(True)
            allowed = 200 <= response.status_code < 300
            if not matches(expected[role], response.status_code):
                failures.append(f"{method.upper()} {url}: {response.status_code}, expected "
                                f"{expected[role]} ({response.content[:200]!r})")  # fmt: skip
            if not allowed and changed:
                failures.append(f"refused {method.upper()} {url} changed the database")
            if allowed and method != "get" and not changed and name not in QUEUES_ONLY:
                failures.append(f"allowed {method.upper()} {url} changed nothing")
            refused_json = not allowed and "json" in response.get("Content-Type", "")
            if refused_json and not response.json():
                failures.append(f"{method.upper()} {url}: refusal without a message")
    assert failures == [], "\n".join(failures)


# The approval policy's form, whole (pixie.admin_policy), changing one rule.
POLICY_FORM = {
    "second_owner": "required",
    "expiry": "off",
    "expiry_days": "7",
    "findings": "off",
    "findings_severity": "warning",
}
def test_a_read_only_token_writes_nothing_and_a_revoked_one_nothing_at_all(world):
    """The owner's own tokens (pixie.core.people.tokens): read-only, every write the owner may make
    is
    refused (403, changing nothing) while reads answer as for the owner; revoked, every
    endpoint answers 401 at once."""
    from django.utils import timezone

    from pixie.core.models import ApiToken
    from pixie.core.people.tokens import token_create, token_revoke

    owner = world.users["owner"]
    read_only, secret = token_create(user=owner, actor=owner, name="Reader", read_only=True)
    revoked, gone = token_create(user=owner, actor=owner, name="Gone")
    token_revoke(token=revoked, actor=owner)
    # Used a moment ago: its last-used time is not written again within the minute, so
    # the digest sees only what a request itself changes.
    ApiToken.objects.update(last_used_at=timezone.now())
    routes = {name: route for route, name in all_patterns() if route.startswith("api/")}
    failures = []
    for name, requests in API_ROWS.items():
        url = fill(routes[name], name, world)
        for method, expected, body in requests:
            if expected["owner"] != OK and method != "get":
                continue  # what the owner may not do anyway is the rows' own subject
            for key, want in ((secret, 403 if method != "get" else expected["owner"]),
                              (gone, 401)):  # fmt: skip
                if name == "sharing-inbox":
                    continue  # no authentication at all: the public inbox
                client = APIClient()
                client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
                writes = method != "get"  # a read's digest would be two reads of everything
                with transaction.atomic():
                    before = digest() if writes else None
                    response = getattr(client, method)(url, _body(body, world), format="json")
                    changed = writes and digest() != before
                    transaction.set_rollback(True)
                if not matches(want, response.status_code):
                    which = "read-only" if key == secret else "revoked"
                    failures.append(f"{method.upper()} {url} with {which}: "
                                    f"{response.status_code}, expected {want}")  # fmt: skip
                if changed:
                    failures.append(f"{method.upper()} {url} changed the database")
    assert failures == [], "\n".join(failures)
    assert read_only.read_only


ADMIN_POSTS = [
    ("catalog_plan_approve", {}),
    ("catalog_plan_reject", {"reason": "No"}),
    ("catalog_plan_choices", {}),
    ("catalog_workspaceskill_advertise", {"advertised": "0"}),
    ("catalog_workspaceskill_edit", {"name": "X", "body": "Y"}),
    ("agents_agent_skills_change", {"action": "toggle"}),
    ("agents_agent_promote", {"slug": "kit", "name": "Kit", "version": "1.0.0"}),
    ("catalog_installation_repoint", {}),
    ("catalog_installation_rollback", {}),
    ("pixie_message_import", {}),
    ("catalog_workspaceskill_rename", {"slug": "renamed"}),
    ("pixie_message_block", {"delete_pending": "on"}),
    ("pixie_workspace_members", {"action": "remove", "username": "mia"}),
    ("pixie_workspace_policy", POLICY_FORM),
    ("pixie_workspace_install", {"bundle": "accounts-receivable", "version": "2.1.0"}),
    ("pixie_workspace_delivery", {"action": "make", "name": "Robot"}),
    ("egress_credentialrequirement_confirm", {"back": "home"}),
    ("agents_agent_new", {"name": "New", "slug": "new-agent"}),
    ("agents_agent_edit", {"name": "Renamed"}),
    ("pixie_my_tokens", {"action": "make", "name": "Robot"}),
    ("pixie_notification_choices", {"plan_waiting-in_home": "on"}),
    ("pixie_notification_read", {}),
    ("pixie_contact_directory", {"listed": "yes"}),
    ("pixie_auditentry_verify", {}),
    ("sources_source_check", {}),
    ("sources_source_pause", {"paused": "1"}),
    ("sources_source_accept", {}),
]


def test_admin_posts_without_a_csrf_token_are_refused_and_change_nothing(world):
    routes = {name: route for route, name in all_patterns() if route.startswith("admin/")}
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["owner"])
    before = digest()
    for name, data in ADMIN_POSTS:
        url = fill(routes[name], name, world)
        assert client.post(url, data).status_code == 403, url
    assert digest() == before


# *Verify now* on the audit log: whoever reads the log starts a check of the chains (a row
# that records it), everyone else is refused and nothing is written.
VERIFY_NOW = {**NOBODY, "stranger": 403, "member": 403, "owner": 403, "staff": 403,
              "operator": 302, "auditor": 302, "superuser": 302}  # fmt: skip


@pytest.mark.parametrize("role", ROLES)
def test_verify_now_starts_a_check_only_for_those_who_read_the_audit_log(
    role, world, django_capture_on_commit_callbacks
):
    client = Client()
    if role != "anonymous":
        client.force_login(world.users[role])
    before = digest()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:pixie_auditentry_verify"))
    assert response.status_code == VERIFY_NOW[role], response.status_code
    if VERIFY_NOW[role] == 302 and role not in NOBODY:
        check = AuditCheck.objects.get()
        assert check.requested_by == world.users[role] and check.ok
        assert response["Location"].startswith(reverse("admin:pixie_auditentry_changelist"))
    else:
        assert digest() == before


# A source's buttons in the admin (pixie.sources.admin): only operators' change anything.
SOURCE_POSTS = [
    ("sources_source_pause", {"paused": "1"}),
    ("sources_source_change", {"url": "https://example.com/other.git", "ref": "main",
                               "kind": "git", "interval": "01:00:00"}),
    ("sources_source_delete", {"post": "yes"}),
]  # fmt: skip
SOURCE_WRITERS = {"operator", "superuser"}


@pytest.mark.parametrize("role", ROLES)
def test_a_sources_admin_posts_change_something_only_for_operators(role, world):
    routes = {name: route for route, name in all_patterns() if route.startswith("admin/")}
    failures = []
    for name, data in SOURCE_POSTS:
        client = Client()
        if role != "anonymous":
            client.force_login(world.users[role])
        with transaction.atomic():
            before = digest()
            response = client.post(fill(routes[name], name, world), data)
            changed = digest() != before
            transaction.set_rollback(True)
        if (role in SOURCE_WRITERS) != changed:
            failures.append(f"{role} {name}: {'changed' if changed else 'changed nothing'} "
                            f"(status {response.status_code})")  # fmt: skip
    assert failures == [], "\n".join(failures)


def _enumerated_actions():
    """Every admin action of every registered model admin, as (admin, action name)."""
    from django.contrib import admin

    found = []
    for model, model_admin in admin.site._registry.items():
        for action in model_admin.actions or []:
            name = action if isinstance(action, str) else action.__name__
            found.append((model._meta.label_lower, name))
    return sorted(found)


# (model, action) -> (roles whose action changes something, POST extras)
ACTION_ROWS = {
    ("catalog.bundleversion", "publish"): ({"superuser", "operator"}, {"post": "yes"}),
    ("catalog.bundleversion", "yank"): (
        {"superuser", "operator"},
        {"reason": "Broken", "post": "yes"},
    ),
    ("catalog.skillversion", "publish"): ({"superuser", "operator"}, {}),
    ("egress.credentialrequirement", "confirm_supplied"): ({"owner"}, {}),
    ("pixie.message", "retry_dispatch"): (set(), {}),
    ("pixie.message", "keep_received"): ({"owner"}, {}),
    ("pixie.message", "delete_received"): ({"owner"}, {}),
    ("pixie.blockedsender", "unblock"): ({"owner"}, {}),
}


def test_every_admin_action_has_a_row():
    assert sorted(set(_enumerated_actions()) - set(ACTION_ROWS)) == []


def _action_target(label, world):
    from catalog.models import BundleVersion, Status
    from egress.models import CredentialRequirement
    from pixie.sharing.models import Message

    if label == "catalog.bundleversion":
        from tests.factories import make_bundle_version, make_skill_version

        draft = make_bundle_version(skills=[make_skill_version(body="Use @query-ledger.")])
        published = BundleVersion.objects.filter(status=Status.PUBLISHED).first()
        return [draft.pk, published.pk]
    if label == "catalog.skillversion":
        from tests.factories import make_skill_version

        return [make_skill_version().pk]
    if label == "egress.credentialrequirement":
        return list(
            CredentialRequirement.objects.filter(workspace=world.acme).values_list("pk", flat=True)
        )
    if label == "pixie.message":
        return list(Message.objects.filter(workspace=world.acme).values_list("pk", flat=True))
    if label == "pixie.blockedsender":
        from pixie.sharing.models import BlockedSender

        return list(BlockedSender.objects.filter(workspace=world.acme).values_list("pk", flat=True))
    raise AssertionError(label)


@pytest.mark.parametrize("role", ROLES)
def test_admin_actions_change_something_only_for_who_may(role, world):
    failures = []
    for (label, action), (allowed, extra) in ACTION_ROWS.items():
        app_label, model_name = label.split(".")
        url = reverse(f"admin:{app_label}_{model_name}_changelist")
        with transaction.atomic():
            ids = _action_target(label, world)
            client = Client()
            if role != "anonymous":
                client.force_login(world.users[role])
            before = digest()
            response = client.post(
                url, {"action": action, "_selected_action": ids, "index": 0, **extra}
            )
            changed = digest() != before
            transaction.set_rollback(True)
        if (role in allowed) != changed:
            failures.append(
                f"{role} {label}.{action}: {'changed' if changed else 'changed nothing'} "
                f"(status {response.status_code})"
            )
    assert failures == [], "\n".join(failures)


# The workspace pages that act: a reader (a member, a superuser of another workspace) is
# told why not in place of the form, and a post from one changes nothing.
ACTING_PAGES = {
    "catalog_workspaceskill_edit": {"name": "Taken over", "body": "New words.", "comment": "x"},
    "catalog_workspaceskill_rename": {"slug": "taken-over"},
    "catalog_workspaceskill_share": {"contact": "1"},
    "agents_agent_promote": {"slug": "taken-kit", "name": "Taken", "version": "9.0.0"},
    "pixie_message_block": {"delete_pending": "on"},
    "pixie_workspace_members": {"action": "remove", "username": "mia"},
    "pixie_workspace_policy": POLICY_FORM,
    "pixie_workspace_install": {"bundle": "accounts-receivable", "version": "2.1.0"},
    "pixie_workspace_delivery": {"action": "make", "name": "Taken over"},
    "agents_agent_edit": {"name": "Taken over", "system_prompt": "x"},
}


@pytest.mark.parametrize("role", ["member", "auditor", "superuser"])
def test_a_workspace_page_that_acts_tells_a_reader_why_not_and_changes_nothing(role, world):
    routes = {name: route for route, name in all_patterns() if name in ACTING_PAGES}
    assert set(routes) == set(ACTING_PAGES)
    client = Client()
    client.force_login(world.users[role])
    before = digest()
    refusal = f"Only an owner of {world.acme.name} can do this."
    for name, data in ACTING_PAGES.items():
        url = fill(routes[name], name, world)
        page = client.get(url)
        assert page.status_code == 200, name
        main = page.content.decode().split('id="content-main"', 1)[1]
        assert refusal in main, name
        assert 'type="submit"' not in main, f"{name} offers {role} a form it may not send"
        answer = client.post(url, data)
        assert answer.status_code == 200, name
        assert refusal in answer.content.decode(), name
    assert digest() == before
