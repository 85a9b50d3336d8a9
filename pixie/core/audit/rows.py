"""The admin's audit log page: each entry as a row of HTML.

Built in Python, as Django's admin builds its own changelist's rows
(contrib.admin.templatetags.admin_list.items_for_result): fifty rows of seven cells
through the template language cost more than reading them from a million did. Every
value is escaped by format_html; the page's template (admin/pixie/auditentry/log.html)
holds the rest of the page.
"""

from functools import cache
from urllib.parse import quote

from django.urls import NoReverseMatch, get_script_prefix, get_urlconf, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from pixie.core.models import AuditEntry
from pixie.core.people.permissions import opens_audited_objects

CHANNEL_NAMES = dict(AuditEntry.Channel.choices)
QUIET = '<span class="quiet">{}</span>'


SAMPLE_ID = "7301000173"  # an id no address holds otherwise
# What reverse() leaves unquoted in an argument: RFC 3986's sub-delims ("!$&'()*+,;=")
# and the other characters a path may hold as they are.
PATH_SAFE = "!$&'()*+,;=" + "/~:@"


@cache
def _link_around(name: str, urlconf, prefix: str) -> tuple[str, str] | None:
    """The admin address named ``name`` for any object id, as the text before and after
    the id (reverse() was the slow part of a row), or None if the admin has no such page.
    Kept per URLconf and script prefix, as reverse() itself depends on them."""
    try:
        before, after = reverse(name, args=[SAMPLE_ID]).split(SAMPLE_ID)
    except NoReverseMatch:  # a kind the admin does not show on a page of its own
        return None
    return before, after


def _url(name: str, object_id) -> str:
    around = _link_around(name, get_urlconf(), get_script_prefix())
    if around is None:
        return ""
    # Quoted as reverse() quotes its arguments (the ids recorded are numbers, but the
    # admin's <path:object_id> would take any text).
    return around[0] + quote(str(object_id), safe=PATH_SAFE) + around[1]


def object_url(kind: str, object_id) -> str:
    """The object's own page, for a reader who may open it ("" if the admin has none)."""
    app_label, model = kind.split(".")
    return _url(f"admin:{app_label}_{model}_change", object_id)


def history_url(kind: str, object_id) -> str:
    """For a reader who may not open the object: its history, where they may read it (an
    operator reads every workspace's skills' revisions, not their pages)."""
    if kind == "catalog.workspaceskill":
        return _url("admin:catalog_workspaceskill_compare", object_id)
    return ""


def _link(url: str, text) -> SafeString:
    return format_html('<a href="{}">{}</a>', url, text) if url else format_html("{}", text)


def row_html(entry: dict, *, user, member_of: set[int]) -> SafeString:
    """One entry (as pixie.core.audit.log.entries_data gives it) as a <tr>. Its plan and
    objects are links only where the reader may follow them; ``member_of``: the reader's
    workspace ids."""
    may_open = opens_audited_objects(user, entry["scope"], entry["workspace_id"], member_of)
    by = (
        format_html('<a href="?person={}">{}</a>', quote(entry["by"], safe="/"), entry["by"])
        if entry["by"]
        else format_html(QUIET, "no one (the system)")
    )
    where = entry["where"]
    if entry["workspace"] and entry["scope"] == AuditEntry.Scope.WORKSPACE:
        where = format_html(
            '<a href="?workspace={}">{}</a>', quote(entry["workspace"], safe="/"), where
        )
    plan = "—"
    if entry["plan"]:
        url = _url("admin:catalog_plan_review", entry["plan"]) if may_open else ""
        plan = format_html(
            '{}<br><a class="quiet" href="?plan={}">all its changes</a>',
            _link(url, f"Plan #{entry['plan']}"),
            entry["plan"],
        )
    objects = format_html_join(
        ", ",
        "{}",
        (
            (_link((object_url if may_open else history_url)(o["type"], o["id"]), o["name"]),)
            for o in entry["objects"]
        ),
    )
    more = entry["object_count"] - len(entry["objects"])
    if more > 0:
        objects = format_html("{} and {} more", objects, more)
    return format_html(
        '<tr id="entry-{}"><td>{}<br>' + QUIET + "</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>",
        entry["id"],
        timezone.localtime(entry["at"]).strftime("%Y-%m-%d %H:%M:%S"),
        f"#{entry['id']}",
        by,
        where,
        CHANNEL_NAMES[entry["channel"]],
        plan,
        entry["comment"] or "—",
        objects,
    )


def rows_html(entries: list[dict], *, user, member_of: set[int]) -> SafeString:
    rows = ((row_html(entry, user=user, member_of=member_of),) for entry in entries)
    return format_html_join("\n", "{}", rows)
