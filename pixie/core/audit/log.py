"""Reading the audit log: every recorded change, filtered, paged by position, exported.

The admin's page, GET /api/audit/ and both exports read through here, so the three
answer alike. Rows are audit entries (pixie.core.audit.records) beside reversion's revisions; pages
go by revision id (keyset), never by offset, so the thousandth page costs the first's
queries, and no page counts the rows it does not show.
"""

import csv
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

import reversion
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models import BooleanField, Exists, F, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.http import StreamingHttpResponse
from django.utils import timezone
from reversion.models import Revision, Version

from pixie.core.errors import ValidationFailed
from pixie.core.models import AuditEntry, Workspace, where_in_words
from pixie.core.web.whole_numbers import whole_number

CATALOG = "catalog"  # the workspace filter's word for "changes to the catalog"
SEARCH_MAX = 200
SHOWN_OBJECTS = 5  # objects named in a row of the page, before "and N more"
LISTED_OBJECTS = 20  # objects listed in an API entry or an exported row
EXPORT_CHUNK = 1000


def object_types() -> dict[str, str]:
    """Each kind of object history records, "app.model" to its name, sorted by label."""
    models = sorted(reversion.get_registered_models(), key=lambda m: m._meta.label_lower)
    return {m._meta.label_lower: str(m._meta.verbose_name) for m in models}


@dataclass(frozen=True)
class AuditQuery:
    """What a reader asked the log for; empty fields do not filter."""

    person: str = ""
    workspace: str = ""  # a workspace's slug, or CATALOG
    type: str = ""  # "app.model", one of object_types()
    plan: int | None = None
    channel: str = ""
    since: date | None = None
    until: date | None = None
    search: str = ""

    def is_empty(self) -> bool:
        return self == AuditQuery()


FILTERS = ("person", "workspace", "type", "plan", "channel", "since", "until", "search")


def _date(value: str, name: str, problems: list[str]) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        problems.append(f"{name}: {value[:40]!r} is not a date (YYYY-MM-DD).")
        return None


def audit_query(params: Mapping[str, str]) -> AuditQuery:
    """A reader's filters, checked: every problem named, or ValidationFailed."""
    get = {name: (params.get(name) or "").strip() for name in FILTERS}
    problems: list[str] = []
    plan = whole_number(get["plan"].removeprefix("#")) if get["plan"] else None
    if get["plan"] and plan is None:
        problems.append(f"plan: {get['plan'][:40]!r} is not a plan number.")
    if get["channel"] and get["channel"] not in AuditEntry.Channel.values:
        problems.append(
            f"channel: {get['channel'][:40]!r} is not a path; one of "
            + ", ".join(AuditEntry.Channel.values)
            + "."
        )
    if get["type"] and get["type"] not in object_types():
        problems.append(
            f"type: {get['type'][:60]!r} is not a kind of object history records; one of "
            + ", ".join(object_types())
            + "."
        )
    if (
        get["workspace"]
        and get["workspace"] != CATALOG
        and not Workspace.objects.filter(slug=get["workspace"]).exists()
    ):
        problems.append(
            f"workspace: no workspace has the slug {get['workspace'][:60]!r} "
            f"(or ask for {CATALOG!r})."
        )
    since = _date(get["since"], "since", problems)
    until = _date(get["until"], "until", problems)
    if since and until and since > until:
        problems.append(f"since ({since}) is after until ({until}).")
    if len(get["search"]) > SEARCH_MAX:
        problems.append(f"search: at most {SEARCH_MAX} characters ({len(get['search'])} given).")
    if len(get["person"]) > 150:
        problems.append("person: a username has at most 150 characters.")
    if problems:
        raise ValidationFailed(problems)
    return AuditQuery(
        person=get["person"],
        workspace=get["workspace"],
        type=get["type"],
        plan=plan,
        channel=get["channel"],
        since=since,
        until=until,
        search=get["search"],
    )


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def audit_entries(query: AuditQuery) -> QuerySet[AuditEntry]:
    """The entries the query asks for, newest first (entry_rows reads them)."""
    rows = AuditEntry.objects.all()
    if query.person:
        rows = rows.filter(revision__user__username=query.person)
    if query.workspace == CATALOG:
        rows = rows.exclude(scope=AuditEntry.Scope.WORKSPACE)
    elif query.workspace:
        # Written for it and still showing in it (an entry moved outside Pixie is not).
        rows = rows.filter(workspace__slug=query.workspace, workspace_key=F("workspace_id"))
    if query.type:
        app_label, model = query.type.split(".")
        kind = ContentType.objects.get_by_natural_key(app_label, model)  # cached
        rows = rows.filter(
            Exists(Version.objects.filter(revision=OuterRef("revision"), content_type=kind))
        )
    if query.plan is not None:
        rows = rows.filter(plan_id=query.plan)
    if query.channel:
        rows = rows.filter(channel=query.channel)
    if query.since:
        rows = rows.filter(revision__date_created__gte=_day_start(query.since))
    if query.until:  # the whole day named
        rows = rows.filter(revision__date_created__lt=_day_start(query.until + timedelta(1)))
    if query.search:
        # Both sides on the revision's own columns, each with its index on PostgreSQL (the
        # comment's trigram index, migration 0008; user_id's): an OR across a join would
        # walk the whole log instead. The people named are found first (one query).
        named = get_user_model().objects.filter(username__iexact=query.search)
        rows = rows.filter(
            Q(revision__comment__icontains=query.search)
            | Q(revision__user_id__in=list(named.values_list("pk", flat=True)))
        )
    return rows.order_by("-revision_id")


# A row of the log as plain values, read beside its revision, person and workspace: no
# model objects, so a page of fifty costs little more than the bare SELECT of its rows.
ROW_COLUMNS = (
    "revision_id", "revision__date_created", "revision__user__username", "revision__comment",
    "scope", "workspace_id", "workspace__slug", "workspace__name", "channel", "plan_id",
    "object_count",
)  # fmt: skip


# Each revision's first objects, numbered by a window, written by hand: the ORM's Window
# over an IN list took five times the query's own time to build and compile (2.1 ms
# against 0.4 ms for a page of fifty). The ids go as one array (a JSON array on SQLite),
# so the statement's text never changes and PostgreSQL plans it once (server-side binding).
_FIRST_OBJECTS = """
    SELECT revision_id, content_type_id, object_id, object_repr FROM (
        SELECT revision_id, content_type_id, object_id, object_repr, id,
               ROW_NUMBER() OVER (PARTITION BY revision_id ORDER BY id) AS place
        FROM {versions} WHERE revision_id {among}
    ) numbered
    WHERE place <= %s ORDER BY revision_id, id
"""
_AMONG = {"postgresql": "= ANY(%s)", "sqlite": "IN (SELECT value FROM json_each(%s))"}


def _first_objects_of(revision_ids: list[int], first: int) -> dict[int, list[dict]]:
    """The first ``first`` objects of each revision, as plain values, in one windowed
    query: an apply that recorded 4,000 objects reads ``first`` of them, and its
    object_count says the rest."""
    if not revision_ids:
        return {}
    sql = _FIRST_OBJECTS.format(
        versions=connection.ops.quote_name(Version._meta.db_table),
        among=_AMONG[connection.vendor],
    )
    ids = revision_ids if connection.vendor == "postgresql" else json.dumps(revision_ids)
    with connection.cursor() as cursor:
        cursor.execute(sql, [ids, first])
        numbered = cursor.fetchall()
    found: dict[int, list[dict]] = {}
    for revision_id, kind, object_id, name in numbered:
        label = ContentType.objects.get_for_id(kind)  # cached for the process
        found.setdefault(revision_id, []).append(
            {"type": f"{label.app_label}.{label.model}", "id": object_id, "name": name}
        )
    return found


def entries_data(rows: list[dict], first: int) -> list[dict]:
    """Rows of entries (read with ROW_COLUMNS) as the API, the exports and the admin's
    page give them, each with its first ``first`` objects: one query for them all."""
    objects = _first_objects_of([row["revision_id"] for row in rows], first)
    return [
        {
            "id": row["revision_id"],
            "at": row["revision__date_created"],
            "by": row["revision__user__username"],
            "where": where_in_words(row["scope"], row["workspace__name"]),
            "scope": row["scope"],
            "workspace": row["workspace__slug"],
            "workspace_id": row["workspace_id"],
            "channel": row["channel"],
            "plan": row["plan_id"],
            "comment": row["revision__comment"],
            "object_count": row["object_count"],
            "objects": objects.get(row["revision_id"], []),
        }
        for row in rows
    ]


def entry_rows(entries: QuerySet[AuditEntry]) -> QuerySet[dict]:
    return entries.values(*ROW_COLUMNS)


_REVISION_ID = ".".join(map(connection.ops.quote_name, (Revision._meta.db_table, "id")))


def keyset(entries: QuerySet, position: int, *, newer: bool) -> QuerySet:
    """The entries newer (or older) than the revision at ``position``, bounded on both
    sides of the entry's join to its revision. Django writes the bound on the entry's
    column only (revision__id is the entry's own revision_id), and PostgreSQL then merges
    the join walking the revisions down from the newest: half the log read for a page
    half-way down (85 ms at 1,000,000 rows; 0.7 ms with both bounds). The second bound
    is the same condition (the join's columns are equal), so no result changes.
    ``entries`` must read the revision's columns (entry_rows does), which joins it."""
    on_entry = Q(revision_id__gt=position) if newer else Q(revision_id__lt=position)
    sql = f"{_REVISION_ID} {'>' if newer else '<'} %s"  # the model's names; the value bound
    on_revision = RawSQL(sql, [position], output_field=BooleanField())  # noqa: S611
    return entries.filter(on_entry, on_revision)


@dataclass
class Page:
    entries: list[dict]  # as entries_data() gives them
    older: int | None  # the `before` of the next (older) page, None at the oldest
    newer: int | None  # the `after` of the previous (newer) page, None at the newest


def _position(value: str, name: str) -> int | None:
    if not value:
        return None
    if (number := whole_number(value)) is not None:
        return number
    raise ValidationFailed(f"{name}: {value[:40]!r} is not a position in the log.")


def audit_page(
    entries: QuerySet[AuditEntry], *, before: str = "", after: str = "", size=50, first: int
) -> Page:
    """One page of newest-first entries, each with its first ``first`` objects: those
    older than ``before``, or else the ones just newer than ``after``, or else the
    newest. Two queries, whatever the page."""
    older_than, newer_than = _position(before, "before"), _position(after, "after")
    rows = entry_rows(entries)
    if newer_than is not None and older_than is None:
        newer = keyset(rows, newer_than, newer=True)
        found = list(newer.order_by("revision_id")[: size + 1])
        more_newer = len(found) > size
        shown = entries_data(found[:size][::-1], first)
        return Page(
            entries=shown,
            older=shown[-1]["id"] if shown else newer_than + 1,
            newer=shown[0]["id"] if shown and more_newer else None,
        )
    if older_than is not None:
        rows = keyset(rows, older_than, newer=False)
    found = list(rows[: size + 1])
    more_older = len(found) > size
    shown = entries_data(found[:size], first)
    return Page(
        entries=shown,
        older=shown[-1]["id"] if shown and more_older else None,
        newer=shown[0]["id"] if shown and older_than is not None else None,
    )


# --- the exports -----------------------------------------------------------------------


def _all_of(entries: QuerySet[AuditEntry]) -> Iterator[dict]:
    """Every entry of the query as it is exported, newest first: a chunk of plain rows
    and their first objects, two queries a chunk, by keyset."""
    last = None
    while True:
        chunk = entry_rows(entries)
        rows = list((chunk if last is None else keyset(chunk, last, newer=False))[:EXPORT_CHUNK])
        for data in entries_data(rows, LISTED_OBJECTS):
            data["at"] = data["at"].isoformat()
            yield data
        if len(rows) < EXPORT_CHUNK:
            return
        last = rows[-1]["revision_id"]


JSONL_ORDER = ("id", "at", "by", "where", "workspace", "channel", "plan", "comment",
               "object_count", "objects")  # fmt: skip


def export_jsonl(entries: QuerySet[AuditEntry]) -> Iterator[str]:
    for data in _all_of(entries):
        yield json.dumps({key: data[key] for key in JSONL_ORDER}, ensure_ascii=False) + "\n"


CSV_COLUMNS = [
    "id", "at", "by", "where", "workspace", "channel", "plan", "comment", "object_count",
    "objects",
]  # fmt: skip


FORMULA_INSIDE = re.compile(r"([;,\t\r\n|])([=+\-@])")


def _cell(value) -> str:
    """A cell a spreadsheet shows as text: one starting with = + - @ (a skill's @name) or
    a control character would be read as a formula. (Every cell is quoted besides, see
    export_csv, for a formula that follows a ; inside one.)"""
    text = "" if value is None else str(value)
    text = "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
    # A spreadsheet that splits cells on ; (or a tab) would start a formula there too.
    return FORMULA_INSIDE.sub(r"\1'\2", text)


def export_csv(entries: QuerySet[AuditEntry]) -> Iterator[str]:
    buffer = io.StringIO()
    # Every cell quoted: a spreadsheet that splits lines on ";" (as many locales do) would
    # otherwise start a new cell, a formula, at "…;=HYPERLINK(…)" inside a comment.
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL)

    def line(values) -> str:
        writer.writerow([_cell(value) for value in values])
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    yield line(CSV_COLUMNS)
    for data in _all_of(entries):
        data["objects"] = "; ".join(f"{o['type']}:{o['id']} {o['name']}" for o in data["objects"])
        yield line(data[column] for column in CSV_COLUMNS)


def audit_export(entries: QuerySet[AuditEntry], *, csv: bool) -> StreamingHttpResponse:
    """The rows whole, streamed a chunk at a time, as CSV or JSON Lines: the admin's
    download and the API's, to the byte."""
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    kind, lines = ("text/csv", export_csv) if csv else ("application/jsonl", export_jsonl)
    response = StreamingHttpResponse(lines(entries), content_type=f"{kind}; charset=utf-8")
    extension = "csv" if csv else "jsonl"
    response["Content-Disposition"] = f'attachment; filename="pixie-audit-{stamp}.{extension}"'
    return response
