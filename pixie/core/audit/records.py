"""One door for audited writes: a transaction and a reversion revision together.

Every service that changes state runs inside `audited(...)`, so history records
the user and a comment whether the change came from the admin, the API, a
management command or a task. Blocks nest: an inner one joins the outer one.

Each revision also gets an AuditEntry when it is saved (``record_entry``): the workspace
it changed, the path it came through, the plan it belongs to.
"""

import json
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache

import reversion
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connections, router, transaction
from django.db.models import CompositePrimaryKey, F, IntegerField, Value
from django.utils.encoding import force_str, is_protected_type
from reversion import revisions as reversion_revisions
from reversion.models import Revision, Version
from reversion.signals import post_revision_commit, pre_revision_commit

from pixie.core.audit.chain import chain_extend
from pixie.core.logs import request_id_var, request_path_var, task_id_var
from pixie.core.models import AuditEntry, Workspace

_plan_var: ContextVar[int | None] = ContextVar("audit_plan", default=None)


@contextmanager
def audited(*, actor, comment: str, plan=None):
    """``plan``: the plan this change belongs to (its apply, approval, rejection), which
    the audit entry records; nested blocks keep the outer block's plan unless they name
    one."""
    outer_comment = reversion.get_comment() if reversion.is_active() else ""
    token = _plan_var.set(plan.pk) if plan is not None else None
    try:
        with transaction.atomic(), reversion.create_revision(atomic=False):
            if actor is not None and reversion.get_user() is None:
                reversion.set_user(actor)
            # A nested block adds to the story instead of replacing it.
            reversion.set_comment(f"{outer_comment}; {comment}" if outer_comment else comment)
            yield
    finally:
        if token is not None:
            _plan_var.reset(token)


# --- many objects into the revision at once -----------------------------------------


def add_all_to_revision(objects, *, written_here: bool = False) -> None:
    """``reversion.add_to_revision`` of each object, in order, with the same versions
    (the same place in the revision, the same fields): each serialised from the values it
    holds in memory into the very JSON Django's serialiser writes for it
    (``history_json``), and the revision updated once rather than once an object. An
    apply records a hundred objects: through the serialiser that was about a tenth of a
    millisecond each. A model registered with anything else than plain JSON of its own
    fields (follows, natural keys, many-to-many fields, duplicates ignored) goes through
    reversion itself.

    ``written_here``: the caller wrote these rows in the current transaction and deletes
    none of them before the revision is saved, so reversion's check that each object
    still exists (``_still_there``) is not made for them.

    Uses django-reversion's frame helpers (6.x); tests/pixie/test_history_rows.py holds
    its versions equal to reversion's own."""
    frame_versions = reversion_revisions._copy_db_versions(
        reversion_revisions._current_frame().db_versions
    )
    for obj in objects:
        if obj.pk is None:  # as reversion: an object not fully formed is not recorded
            continue
        model = obj.__class__
        options = reversion_revisions._get_options(model)
        if _history_fields(model) is None:
            reversion_revisions._update_frame(db_versions=frame_versions)
            reversion.add_to_revision(obj)
            frame_versions = reversion_revisions._copy_db_versions(
                reversion_revisions._current_frame().db_versions
            )
            continue
        model_db = router.db_for_write(model, instance=obj)
        object_id = force_str(getattr(obj, options.object_id_field))
        data, text = history_json(obj), force_str(obj)
        for using, versions in frame_versions.items():
            content_type = reversion_revisions._get_content_type(model, using)
            version = Version(
                content_type=content_type,
                object_id=object_id,
                db=model_db,
                format=options.format,
                serialized_data=data,
                object_repr=text,
            )
            version.written_here = written_here
            versions[content_type, object_id] = version
    reversion_revisions._update_frame(db_versions=frame_versions)


def history_json(obj) -> str:
    """What ``serializers.serialize("json", [obj], fields=<its registered fields>)``
    returns, from the object's values, for a model ``_history_fields`` accepts."""
    fields = {}
    for field in _history_fields(obj.__class__):
        value = field.value_from_object(obj)
        fields[field.name] = value if is_protected_type(value) else field.value_to_string(obj)
    pk_field = obj._meta.pk
    pk = pk_field.value_from_object(obj)
    dump = {
        "model": str(obj._meta),
        "pk": pk if is_protected_type(pk) else pk_field.value_to_string(obj),
        "fields": fields,
    }
    return f"[{json.dumps(dump, cls=DjangoJSONEncoder, ensure_ascii=False)}]"


@cache
def _history_fields(model) -> tuple | None:
    """The fields Django's serialiser writes for a registered model, in its order, or None
    if its registration asks for more than plain JSON of its own fields."""
    options = reversion_revisions._get_options(model)
    concrete = model._meta.concrete_model._meta
    if (
        options.format != "json"
        or options.follow
        or options.ignore_duplicates
        or options.use_natural_foreign_keys
        or isinstance(model._meta.pk, CompositePrimaryKey)
        or any(f.serialize and f.attname in options.fields for f in concrete.local_many_to_many)
    ):
        return None
    return tuple(
        field
        for field in concrete.local_fields
        if field.serialize
        and (field.attname if field.remote_field is None else field.attname[:-3]) in options.fields
    )


# --- saving a revision ---------------------------------------------------------------

_INTEGER_IDS = {"AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField",
                "SmallIntegerField", "PositiveIntegerField", "PositiveBigIntegerField",
                "PositiveSmallIntegerField"}  # fmt: skip


def save_revision(versions, user=None, comment="", meta=(), date_created=None, using=None):
    """django-reversion 6's ``_save_revision`` (installed in its place by PixieConfig), the
    same steps in the same order, except that its check that each recorded object still
    exists is one query for every model (a UNION of their ids) instead of one a model (an
    apply records five models: four round trips fewer), and the versions are inserted
    without UNNEST (_insert_versions)."""
    versions = _still_there(list(versions))
    if not versions:
        return
    revision = Revision(date_created=date_created, user=user, comment=comment)
    pre_revision_commit.send(
        sender=reversion_revisions.create_revision, revision=revision, versions=versions
    )
    revision.save(using=using)
    for version in versions:
        version.revision = revision
    _insert_versions(versions, using)
    for meta_model, meta_fields in meta:
        meta_model._base_manager.db_manager(using=using).create(revision=revision, **meta_fields)
    post_revision_commit.send(
        sender=reversion_revisions.create_revision, revision=revision, versions=versions
    )


# Rows a statement of _insert_versions writes (7 parameters a row, PostgreSQL takes 65,535).
VERSIONS_A_STATEMENT = 5000


def _insert_versions(versions: list, using: str) -> None:
    """What reversion does (bulk_create, or a save each where rows cannot be returned), but
    on PostgreSQL one plain multi-row INSERT: Django's bulk_create there sends columns as
    arrays for UNNEST, and psycopg escapes each array element in Python, about a fifth of
    a millisecond a version; one value at a time is escaped by libpq."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        if connection.features.can_return_rows_from_bulk_insert:
            Version.objects.using(using).bulk_create(versions)
        else:
            for version in versions:
                version.save(using=using)
        return
    quote = connection.ops.quote_name
    fields = [f for f in Version._meta.concrete_fields if not f.primary_key]
    columns = ", ".join(quote(f.column) for f in fields)
    row = f"({', '.join(['%s'] * len(fields))})"
    table, pk = quote(Version._meta.db_table), quote(Version._meta.pk.column)  # model names
    for start in range(0, len(versions), VERSIONS_A_STATEMENT):
        batch = versions[start : start + VERSIONS_A_STATEMENT]
        # Ids and text as they are stored: nothing to prepare.
        params = [getattr(v, f.attname) for v in batch for f in fields]
        with connection.cursor() as cursor:
            values = ", ".join([row] * len(batch))
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES {values} RETURNING {pk}",  # noqa: S608
                params,
            )
            for version, (new_id,) in zip(batch, cursor.fetchall(), strict=True):
                version.pk = new_id
                version._state.adding, version._state.db = False, using


def _still_there(versions: list) -> list:
    """The versions whose objects are still in the database (reversion skips an object
    deleted after it was added), read by each model's base manager as reversion does; not
    read for the rows their writer vouched for (add_all_to_revision's ``written_here``)."""
    wanted: dict[tuple, set[str]] = {}
    for version in versions:
        if not getattr(version, "written_here", False):
            wanted.setdefault((version._model, version.db), set()).add(version.object_id)
    if not wanted:
        return versions
    found: set[tuple] = set()
    unions: dict[str, list] = {}
    for (model, db), ids in wanted.items():
        id_field = reversion_revisions._get_options(model).object_id_field
        rows = model._base_manager.using(db).filter(**{f"{id_field}__in": ids}).order_by()
        if model._meta.get_field(id_field).get_internal_type() not in _INTEGER_IDS:
            found |= {(model, db, force_str(i)) for i in rows.values_list(id_field, flat=True)}
            continue
        tag = Value(len(unions.setdefault(db, [])), output_field=IntegerField())
        unions[db].append(
            (
                model,
                rows.annotate(history_tag=tag, history_oid=F(id_field)).values_list(
                    "history_tag", "history_oid"
                ),
            )
        )
    for db, tagged in unions.items():
        first, *rest = [rows for _model, rows in tagged]
        combined = first.union(*rest, all=True) if rest else first
        found |= {(tagged[tag][0], db, force_str(oid)) for tag, oid in combined}
    return [
        v
        for v in versions
        if getattr(v, "written_here", False) or (v._model, v.db, v.object_id) in found
    ]


# --- what each revision changed, and how it came ------------------------------------


def channel() -> str:
    """The path the current write came through: a task (eager or on a worker), an API or
    admin request, or else a command (manage.py, a shell)."""
    if task_id_var.get():
        return AuditEntry.Channel.TASK
    if request_id_var.get():
        path = request_path_var.get()
        if path.startswith("/api/"):
            return AuditEntry.Channel.API
        if path.startswith("/admin/"):
            return AuditEntry.Channel.ADMIN
        return AuditEntry.Channel.WEB
    return AuditEntry.Channel.COMMAND


def placement(versions) -> tuple[set[int], bool]:
    """The workspaces a revision's objects belong to, and whether any belongs to none
    (the catalog). A row names its workspace in its recorded fields; a model that reaches
    it through a parent says how in ``audit_workspace`` (e.g. "agent__workspace"), read
    with one query a model; any other row is the catalog's."""
    found: set[int] = set()
    catalog = False
    lookups: dict[tuple, list[str]] = {}
    for version in versions:
        model = version._model
        if model is Workspace:
            found.add(int(version.object_id))
            continue
        path = getattr(model, "audit_workspace", None)
        if path is not None:
            lookups.setdefault((model, path), []).append(version.object_id)
            continue
        fields = json.loads(version.serialized_data)[0]["fields"]
        if fields.get("workspace"):
            found.add(fields["workspace"])
        else:
            catalog = True
    if found:  # a row named it: its children in the same revision are the same workspace's
        return found, catalog
    for (model, path), ids in lookups.items():
        rows = model._base_manager.filter(pk__in=ids).values_list(path, flat=True)
        found |= {workspace_id for workspace_id in rows if workspace_id is not None}
    return found, catalog


def scope_of(workspaces: set[int], catalog: bool) -> str:
    Scope = AuditEntry.Scope
    if len(workspaces) > 1:
        return Scope.WORKSPACES
    if workspaces:
        return Scope.WORKSPACE_AND_CATALOG if catalog else Scope.WORKSPACE
    return Scope.CATALOG


def plan_of(versions) -> int | None:
    """The plan a revision belongs to: the one its ``audited`` block named, or a plan row
    it records. Never words in its comment: a person writes those."""
    named = _plan_var.get()
    if named is not None:
        return named
    for version in versions:
        if version._model._meta.label == "catalog.Plan":
            return int(version.object_id)
    return None


def record_entry(sender, revision, versions, **kwargs) -> None:
    """reversion's post_revision_commit: the entry of the revision just saved, in the same
    transaction, in its chain (pixie.core.audit.chain)."""
    workspaces, catalog = placement(versions)
    entry = AuditEntry(
        revision=revision,
        workspace_id=next(iter(workspaces)) if len(workspaces) == 1 else None,
        scope=scope_of(workspaces, catalog),
        channel=channel(),
        plan_id=plan_of(versions),
        object_count=len(versions),
    )
    chain_extend(entry, revision, versions)  # saves it, with its digest
