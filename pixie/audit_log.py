"""Reading the audit log: every recorded change, filtered, paged by position, exported.

The admin's page, GET /api/audit/ and both exports read through here, so the three
answer alike. Rows are audit entries (pixie.audit) beside reversion's revisions; pages
go by revision id (keyset), never by offset, so the thousandth page costs the first's
queries, and no page counts the rows it does not show.
"""

import csv
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

import reversion
from django.contrib.contenttypes.models import ContentType
from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet, Window
from django.db.models.functions import RowNumber
from django.http import StreamingHttpResponse
from django.utils import timezone
from reversion.models import Version

from .errors import ValidationFailed
from .models import AuditEntry, Workspace, where_in_words

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
    plan = None
    if get["plan"]:
        if get["plan"].lstrip("#").isdigit() and len(get["plan"]) < 19:
            plan = int(get["plan"].lstrip("#"))
        else:
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
    """The entries the query asks for, newest first, with who and where (no objects)."""
    rows = AuditEntry.objects.select_related("revision__user", "workspace")
    if query.person:
        rows = rows.filter(revision__user__username=query.person)
    if query.workspace == CATALOG:
        rows = rows.exclude(scope=AuditEntry.Scope.WORKSPACE)
    elif query.workspace:
        rows = rows.filter(workspace__slug=query.workspace)
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
        rows = rows.filter(
            Q(revision__comment__icontains=query.search)
            | Q(revision__user__username__iexact=query.search)
        )
    return rows.order_by("-revision_id")


def with_objects(entries: QuerySet[AuditEntry], first: int) -> QuerySet[AuditEntry]:
    """Each entry's first ``first`` recorded objects, in one windowed query a page: an
    apply that recorded 4,000 rows reads ``first`` of them, and object_count says the
    rest."""
    versions = (
        Version.objects.select_related("content_type")
        .only("revision_id", "object_id", "object_repr", "content_type")
        .order_by("id")
    )
    return entries.prefetch_related(
        Prefetch("revision__version_set", queryset=versions[:first], to_attr="first_objects")
    )


@dataclass
class Page:
    entries: list[AuditEntry]
    older: int | None  # the `before` of the next (older) page, None at the oldest
    newer: int | None  # the `after` of the previous (newer) page, None at the newest


def _position(value: str, name: str) -> int | None:
    if not value:
        return None
    if value.isdigit() and len(value) < 19:
        return int(value)
    raise ValidationFailed(f"{name}: {value[:40]!r} is not a position in the log.")


def audit_page(entries: QuerySet[AuditEntry], *, before: str = "", after: str = "", size=50):
    """One page of newest-first entries: those older than ``before``, or else the ones
    just newer than ``after``, or else the newest. One query, whatever the page."""
    older_than, newer_than = _position(before, "before"), _position(after, "after")
    if newer_than is not None and older_than is None:
        rows = list(entries.filter(revision_id__gt=newer_than).order_by("revision_id")[: size + 1])
        more_newer = len(rows) > size
        rows = rows[:size][::-1]
        return Page(
            entries=rows,
            older=rows[-1].revision_id if rows else newer_than + 1,
            newer=rows[0].revision_id if rows and more_newer else None,
        )
    if older_than is not None:
        entries = entries.filter(revision_id__lt=older_than)
    rows = list(entries[: size + 1])
    more_older = len(rows) > size
    rows = rows[:size]
    return Page(
        entries=rows,
        older=rows[-1].revision_id if rows and more_older else None,
        newer=rows[0].revision_id if rows and older_than is not None else None,
    )


# --- entries as data: the API (through its serializer) and both exports ----------------


def entry_objects(entry: AuditEntry) -> list[dict]:
    return [
        {
            "type": f"{version.content_type.app_label}.{version.content_type.model}",
            "id": version.object_id,
            "name": version.object_repr,
        }
        for version in entry.revision.first_objects
    ]


EXPORT_FIELDS = {
    "id": "revision_id",
    "at": "revision__date_created",
    "by": "revision__user__username",
    "workspace": "workspace__slug",
    "channel": "channel",
    "plan": "plan_id",
    "comment": "revision__comment",
    "object_count": "object_count",
}


def _first_objects_of(revision_ids: list[int], first: int) -> dict[int, list[dict]]:
    """The first ``first`` objects of each revision, as plain values: one windowed query."""
    numbered = (
        Version.objects.filter(revision_id__in=revision_ids)
        .annotate(place=Window(RowNumber(), partition_by=F("revision_id"), order_by=F("id").asc()))
        .filter(place__lte=first)
        .order_by("revision_id", "id")
        .values_list("revision_id", "content_type_id", "object_id", "object_repr")
    )
    found: dict[int, list[dict]] = {}
    for revision_id, kind, object_id, name in numbered:
        label = ContentType.objects.get_for_id(kind)  # cached for the process
        found.setdefault(revision_id, []).append(
            {"type": f"{label.app_label}.{label.model}", "id": object_id, "name": name}
        )
    return found


def _all_of(entries: QuerySet[AuditEntry]) -> Iterator[dict]:
    """Every entry of the query as it is exported, newest first: a chunk of plain rows
    (no model objects) and their first objects, two queries a chunk, by keyset."""
    last = None
    columns = [*EXPORT_FIELDS.values(), "scope", "workspace__name"]
    while True:
        chunk = entries if last is None else entries.filter(revision_id__lt=last)
        rows = list(chunk.values(*columns)[:EXPORT_CHUNK])
        objects = _first_objects_of([row["revision_id"] for row in rows], LISTED_OBJECTS)
        for row in rows:
            data = {name: row[column] for name, column in EXPORT_FIELDS.items()}
            data["at"] = data["at"].isoformat()
            data["where"] = where_in_words(row["scope"], row["workspace__name"])
            data["objects"] = objects.get(row["revision_id"], [])
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


def _cell(value) -> str:
    """A cell a spreadsheet shows as text: one starting with = + - @ (a skill's @name) or
    a control character would be read as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def export_csv(entries: QuerySet[AuditEntry]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

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
