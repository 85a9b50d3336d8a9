"""Who may see and change a workspace's data. Every page and endpoint asks here.

A workspace's data is visible only to its members (others get 404, so ids of
other workspaces reveal nothing); changing it needs the owner role. Operators
(superusers and the group ``operators``) curate the catalog, and read every workspace's
history (its changes, its skills' revisions and comparisons), not its other contents.
Auditors (the group ``auditors``) read everything, the catalog and every workspace, and
change nothing.
"""

from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef, Q
from django.http import Http404

from pixie.core.errors import ErrorCode, PermissionRefused
from pixie.core.models import ApiToken, AuditEntry, Membership, Workspace


def role_in(*, user, workspace) -> str | None:
    if not user.is_authenticated or not user.is_active:
        return None
    return (
        Membership.objects.filter(workspace=workspace, user=user)
        .values_list("role", flat=True)
        .first()
    )


def workspace_for_member(*, user, slug: str) -> tuple[Workspace, str]:
    """The workspace and the user's role in it, or 404 for anyone not a member."""
    if not user.is_authenticated or not user.is_active:
        raise Http404("No such workspace.")
    membership = (
        Membership.objects.select_related("workspace")
        .filter(workspace__slug=slug, user=user)
        .first()
    )
    if membership is None:
        raise Http404("No such workspace.")
    return membership.workspace, membership.role


def workspace_for_history_reader(
    *, user, slug: str, limited_to: int | None = None
) -> tuple[Workspace, str | None]:
    """For history reads (revisions, comparisons, a workspace's history): its members, and
    auditors and operators, who read every workspace's history (their role: None).
    Anyone else gets 404.

    limited_to: the workspace the request's token is limited to (token_workspace_id), or
    None. Through such a token its person reads as a plain member, as in the catalog's
    reads: their roles outside the workspace count for nothing."""
    try:
        return workspace_for_member(user=user, slug=slug)
    except Http404:
        if limited_to is not None or not reads_every_history(user):
            raise
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise Http404("No such workspace.")
    return workspace, None


def workspace_for_auditor(
    *, user, slug: str, limited_to: int | None = None
) -> tuple[Workspace, str | None]:
    """For the reads auditors make of every workspace (their role: None): its members, and
    auditors through a token not limited to a workspace. Anyone else gets 404."""
    try:
        return workspace_for_member(user=user, slug=slug)
    except Http404:
        if limited_to is not None or not is_auditor(user):
            raise
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise Http404("No such workspace.")
    return workspace, None


# Reading a workspace's data is every member's; writing it is its owners'.
READS = frozenset({"GET", "HEAD", "OPTIONS"})


def may_act(*, role: str | None, method: str, member_writes=frozenset()) -> bool:
    """The one answer to "may this person do this in the workspace": a person with
    ``role`` there (None: not a member) making a request of ``method``. Reading is every
    member's; a write is the owners', and a member's only where the caller says members
    may (``member_writes``, the service's own rule). The API's permission class
    (pixie.core.web.api.IsWorkspaceOwner), the browsable API's forms and the admin's
    pages (pixie.core.web.pages) all ask here; services keep ``require_owner`` as the
    backstop, whatever path reaches them."""
    if role is None:
        return False
    if method.upper() in READS:
        return True
    return role == Membership.Role.OWNER or method.upper() in member_writes


def owner_refusal_words(workspace) -> str:
    return f"Only an owner of {workspace.name} can do this; you are a member."


def require_owner(*, user, workspace, role: str | None = None) -> None:
    role = role if role is not None else role_in(user=user, workspace=workspace)
    if role is None:
        raise Http404("No such workspace.")
    if not may_act(role=role, method="POST"):
        raise PermissionRefused(owner_refusal_words(workspace), code=ErrorCode.OWNER_REQUIRED)


OPERATORS_GROUP = "operators"
AUDITORS_GROUP = "auditors"


def _staff_groups(user) -> frozenset[str]:
    """Which of Pixie's two staff groups the user is in: one query for both, kept on the
    user (a page asks is_operator and is_auditor both, often more than once)."""
    cached = getattr(user, "_pixie_staff_groups", None)
    if cached is None:
        cached = frozenset(
            user.groups.filter(name__in=(OPERATORS_GROUP, AUDITORS_GROUP)).values_list(
                "name", flat=True
            )
        )
        user._pixie_staff_groups = cached
    return cached


def is_operator(user) -> bool:
    """A superuser or a member of the group ``operators``."""
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_superuser or OPERATORS_GROUP in _staff_groups(user)


def is_auditor(user) -> bool:
    """A member of the group ``auditors``: reads everything, changes nothing."""
    if not user.is_authenticated or not user.is_active:
        return False
    return AUDITORS_GROUP in _staff_groups(user)


def sees_every_workspace(user) -> bool:
    """Superusers and auditors read every workspace's data; anyone else, their own."""
    return bool(user.is_active and user.is_superuser) or is_auditor(user)


def reads_every_history(user) -> bool:
    """Auditors and operators (superusers too) read every workspace's history, read-only:
    what changed, who changed it, and each skill revision's text. A workspace's other
    contents (agents, credentials, messages) stay its members' and auditors'."""
    return is_operator(user) or is_auditor(user)


def reads_audit_log(user) -> bool:
    """Auditors and operators (superusers too) read the audit log: every recorded change
    across the catalog and all workspaces. Owners and members read their workspace's
    history instead."""
    return is_operator(user) or is_auditor(user)


def opens_audited_objects(user, scope: str, workspace_id: int | None, member_of: set[int]) -> bool:
    """Whether an audit entry's plan and objects are links for this reader. The log says
    what changed everywhere; the objects themselves stay their workspace's: an operator
    who is not a member reads that an owner edited @invoice-chase in acme, and opens the
    skill only as an auditor or a member would. ``member_of``: the reader's workspace ids."""
    return (
        sees_every_workspace(user)
        or scope == AuditEntry.Scope.CATALOG
        or (scope == AuditEntry.Scope.WORKSPACE and workspace_id in member_of)
    )


def operator_q(user) -> Q:
    """is_operator as a condition inside another query, for reads that must stay one query.
    The user must be an active, authenticated one."""
    if user.is_superuser:
        return Q(pk__isnull=False)
    return Q(Exists(Group.objects.filter(name=OPERATORS_GROUP, user=user.pk)))


def auditor_q(user) -> Q:
    """is_auditor as a condition inside another query (an active, authenticated user)."""
    return Q(Exists(Group.objects.filter(name=AUDITORS_GROUP, user=user.pk)))


def member_q(user, *, workspace_field: str) -> Q:
    """The row's workspace (found through workspace_field) is one the user belongs to."""
    return Q(Exists(Membership.objects.filter(user=user.pk, workspace=OuterRef(workspace_field))))


def any_membership_q(user) -> Q:
    return Q(Exists(Membership.objects.filter(user=user.pk)))


def token_workspace_id(request) -> int | None:
    """The id of the one workspace the request's API token is limited to (pixie.core.people.tokens),
    or None: an unlimited token, DRF's own, a session. The one place a read learns of the
    limit: whatever a limited token reads, its person counts as a plain member of that
    workspace only, without their other memberships or their roles outside it (operator,
    auditor, superuser); catalog.selectors takes it as ``limited_to``."""
    token = getattr(request, "auth", None)
    return token.workspace_id if isinstance(token, ApiToken) else None


def require_operator(*, user) -> None:
    if not is_operator(user):
        raise PermissionRefused(
            "Only an operator (a superuser or a member of the group operators) can do this.",
            code=ErrorCode.OPERATOR_REQUIRED,
        )
