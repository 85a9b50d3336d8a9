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

import reversion
from django.db import transaction

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


# --- rows written in bulk, into the revision ----------------------------------------


def add_all_to_revision(objects) -> None:
    """``reversion.add_to_revision`` of each object, in order: a service that writes rows
    in bulk (so no post_save records them) names them here. Reversion serialises each
    one and, as the revision is saved, records only those still in the database."""
    for obj in objects:
        reversion.add_to_revision(obj)


def _model_of(version):
    # Content types are cached by Django's manager: no query after the first of a kind.
    return version.content_type.model_class()


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
        model = _model_of(version)
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
        if _model_of(version)._meta.label == "catalog.Plan":
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
