"""Workspaces and their members: the unit every permission is checked against; the API
tokens that act for a person; the notifications a person is sent."""

import reversion
from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from pixie.core.names import validate_name
from pixie.core.namespace.fields import SlugField


class PolicyLevel(models.TextChoices):
    """How hard an approval rule holds (pixie.installer.policy)."""

    OFF = "off", "Off"
    ADVISORY = "advisory", "Advisory (shown on the plan)"
    REQUIRED = "required", "Required (blocks approval)"


@reversion.register()
class Workspace(models.Model):
    slug = SlugField(unique=True)
    name = models.CharField(max_length=80, validators=[validate_name])
    created_at = models.DateTimeField(auto_now_add=True)
    # The approval policy, one level per rule (pixie.installer.policy says what each means).
    policy_second_owner = models.CharField(
        "a plan that expands reach needs a second owner",
        max_length=10, choices=PolicyLevel.choices, default=PolicyLevel.OFF,
    )  # fmt: skip
    policy_expiry = models.CharField(
        "plans expire", max_length=10, choices=PolicyLevel.choices, default=PolicyLevel.OFF
    )
    policy_expiry_days = models.PositiveSmallIntegerField(
        "days a plan stays open", default=14,
        validators=[MinValueValidator(1), MaxValueValidator(365)],
    )  # fmt: skip
    policy_findings = models.CharField(
        "findings block approval", max_length=10, choices=PolicyLevel.choices,
        default=PolicyLevel.OFF,
    )  # fmt: skip
    policy_findings_severity = models.CharField(
        "findings of this severity or worse", max_length=10,
        choices=[("warning", "Warning"), ("refuse", "Refused at publish")], default="warning",
    )  # fmt: skip
    # Whether owners of other workspaces on this server may add it as a contact by its
    # slug (pixie.sharing.contacts): off, so a slug tells a stranger nothing.
    listed_in_directory = models.BooleanField(
        "listed in this server's directory", default=False,
        help_text="Owners of other workspaces on this server may add it as a contact by its "
        "slug. Contacts made before stay.",
    )  # fmt: skip

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.name


@reversion.register()
class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        MEMBER = "member", "Member"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)
    # Since when the person is an owner (None while a member): an owner made after a plan
    # was asked cannot be its second owner (pixie.installer.policy).
    owner_since = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_user")
        ]
        ordering = ["workspace", "user"]

    def __str__(self):
        return f"{self.user} in {self.workspace} ({self.role})"

    def save(self, *args, **kwargs):
        # Every way a role is set (the members page, the API, the admin's inline) saves
        # the row: owner_since follows the role here, once.
        is_owner = self.role == self.Role.OWNER
        if is_owner != (self.owner_since is not None):
            self.owner_since = timezone.now() if is_owner else None
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "owner_since"}
        super().save(*args, **kwargs)


class AuditEntry(models.Model):
    """What history records with each revision, beside reversion's who, when and why:
    where it changed (the catalog, one workspace, or both), the path it came through,
    the plan it belongs to and how many objects it recorded. Written for every revision
    when it is saved (pixie.core.audit.records)."""

    class Channel(models.TextChoices):
        ADMIN = "admin", "Admin"
        API = "api", "API"
        TASK = "task", "Task"
        COMMAND = "command", "Command"
        WEB = "web", "Web"
        UNKNOWN = "unknown", "Not recorded"  # revisions from before entries were written

    class Scope(models.TextChoices):
        CATALOG = "catalog", "The catalog"
        WORKSPACE = "workspace", "One workspace"
        WORKSPACE_AND_CATALOG = "workspace+catalog", "A workspace and the catalog"
        WORKSPACES = "workspaces", "Several workspaces"

    revision = models.OneToOneField(
        "reversion.Revision", on_delete=models.CASCADE, related_name="audit"
    )
    # The one workspace it changed (none when it changed none, or several).
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    scope = models.CharField(max_length=20, choices=Scope.choices, default=Scope.WORKSPACE)
    channel = models.CharField(max_length=8, choices=Channel.choices)
    # A plan's id, not a key: plans are the installer's, above this layer.
    plan_id = models.PositiveBigIntegerField(null=True, blank=True)
    # Kept so a page names "and 4,000 more" without reading the 4,000.
    object_count = models.PositiveIntegerField(default=0)
    # Its place in a chain of digests (pixie.core.audit.chain): the workspace's chain, or the
    # catalog's; its number there; and the digest of it and the entry before it.
    chain = models.CharField(max_length=40, blank=True)
    sequence = models.PositiveBigIntegerField(null=True, blank=True)
    digest = models.CharField(max_length=64, blank=True)
    # The workspace's id as written, kept when the workspace is deleted (which empties
    # ``workspace``): in the digest from form 2, so an entry moved to another workspace no
    # longer matches, and what a workspace's history lists.
    workspace_key = models.PositiveBigIntegerField(null=True, blank=True)
    # What the digest covers: 1, entries written before the workspace was in it; 2, now.
    form = models.PositiveSmallIntegerField(default=1)

    class Meta:
        verbose_name_plural = "audit entries"
        indexes = [
            models.Index(fields=["workspace", "-revision"], name="audit_by_workspace"),
            models.Index(fields=["plan_id", "-revision"], name="audit_by_plan"),
        ]
        constraints = [
            # A chain never forks: two writers cannot both take the same place in it.
            models.UniqueConstraint(fields=["chain", "sequence"], name="one_entry_a_place")
        ]

    def __str__(self):
        return f"Revision {self.revision_id} ({self.get_channel_display()})"

    def where(self) -> str:
        """Where the change was made, in words."""
        return where_in_words(self.scope, self.workspace.name if self.workspace else None)


def where_in_words(scope: str, workspace_name: str | None) -> str:
    """An entry's scope and workspace, in words: "the catalog", "Acme", "Acme and the
    catalog", "several workspaces"."""
    if scope == AuditEntry.Scope.CATALOG:
        return "the catalog"
    if scope == AuditEntry.Scope.WORKSPACES:
        return "several workspaces"
    name = workspace_name or "a deleted workspace"
    return f"{name} and the catalog" if scope == AuditEntry.Scope.WORKSPACE_AND_CATALOG else name


class AuditChain(models.Model):
    """The head of one chain of audit digests: how long it is and its last digest. Its
    row is the chain's lock: a writer extends the chain holding it (pixie.core.audit.chain)."""

    key = models.CharField(max_length=40, unique=True)  # "catalog" or "workspace:12"
    length = models.PositiveBigIntegerField(default=0)
    head = models.CharField(max_length=64, blank=True)
    # Key, length and head signed with the server's key (SECRET_KEY): the database alone
    # cannot cut entries from the end and make the head agree.
    seal = models.CharField(max_length=64, blank=True)

    def __str__(self):
        return f"{self.key}: {self.length} entries"


class AuditAnchor(models.Model):
    """Which chains exist, signed with the server's key (one row): deleting a chain whole,
    its entries and its head, leaves the anchor naming it (pixie.core.audit.chain)."""

    chains = models.TextField(blank=True)  # the chains' keys, sorted, one a line
    seal = models.CharField(max_length=64, blank=True)

    def __str__(self):
        return f"Anchor of {len(self.chains.split())} chains"


class AuditCheck(models.Model):
    """One walk of every chain (pixie.core.audit.checks): asked for by a person on the audit
    log's page (*Verify now*, run as a task) or by ``manage.py audit_verify``; what it
    found once it ended."""

    class Via(models.TextChoices):
        COMMAND = "command", "manage.py audit_verify"
        PAGE = "page", "Verify now, on the audit log"

    at = models.DateTimeField(auto_now_add=True)  # when it was asked for
    finished_at = models.DateTimeField(null=True, blank=True)  # None while the walk runs
    via = models.CharField(max_length=16, choices=Via.choices, default=Via.COMMAND)
    # Who pressed *Verify now* (None for the command, or a person since deleted).
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    entries = models.PositiveBigIntegerField(default=0)
    chains = models.PositiveIntegerField(default=0)
    # The first entry of each broken chain and what no longer matches, in words.
    problems = models.JSONField(default=list)
    unchained = models.PositiveBigIntegerField(default=0)  # entries no chain covers

    class Meta:
        get_latest_by = "at"

    def __str__(self):
        if self.finished_at is None:
            return f"Audit check asked at {self.at:%Y-%m-%d %H:%M}, running"
        return f"Audit check at {self.at:%Y-%m-%d %H:%M}: {len(self.problems)} problems"

    @property
    def ok(self) -> bool:
        return self.finished_at is not None and not self.problems

    @property
    def asked_by(self) -> str:
        """Who or what asked for it, in words: a username, or the command."""
        if self.requested_by_id is not None:
            return self.requested_by.get_username()
        if self.via == self.Via.COMMAND:
            return self.get_via_display()
        return "a person since removed"


@reversion.register(exclude=["key_hash", "last_used_at"])
class ApiToken(models.Model):
    """A person's API token (pixie.core.people.tokens): the secret is shown once and only its
    SHA-256
    is kept. It acts for its person, limited to one workspace and to reading when it says
    so; revoked, it fails on the next request."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=80, validators=[validate_name])
    # The secret's first characters, shown so a person tells their tokens apart.
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="api_tokens"
    )
    read_only = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Notification(models.Model):
    """Something a person is told, in their workspace home and, if they chose, by email
    (pixie.core.notifications.service). One event reaches a person once: (user, event) is unique."""

    class Kind(models.TextChoices):
        PLAN_WAITING = "plan_waiting", "A plan waits for my approval"
        PLAN_FAILED = "plan_failed", "An apply failed or a plan went stale"
        SHARE_ARRIVED = "share_arrived", "A share arrived"
        VERSION_YANKED = "version_yanked", "A version my workspace runs was yanked"
        VERSION_PUBLISHED = "version_published", "A newer version of an installed bundle"
        OWNERS_AND_RULES = "owners_and_rules", "An owner added, or an approval rule loosened"
        DELIVERY_MAKER_LEFT = (
            "delivery_maker_left",
            "A person who made delivery tokens left (the tokens still work)",
        )
        SOURCE_DRAFT_WAITING = (
            "source_draft_waiting",
            "An upstream change made a draft that waits for an operator (operators)",
        )
        SOURCE_FAILED = "source_failed", "A source's check failed (operators)"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="notifications")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    event = models.CharField(max_length=120)  # e.g. "plan:12:waiting"
    title = models.CharField(max_length=300)
    url = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    email_wanted = models.BooleanField(default=False)
    emailed_at = models.DateTimeField(null=True, blank=True)
    # An email that failed: tried again later (email_next_try), a bounded number of times,
    # the last error kept for staff (pixie.core.notifications.service).
    email_attempts = models.PositiveSmallIntegerField(default=0)
    email_next_try = models.DateTimeField(null=True, blank=True)
    email_error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "event"], name="one_notification_an_event")
        ]
        indexes = [models.Index(fields=["user", "workspace", "-created_at"])]

    def __str__(self):
        return self.title


@reversion.register(exclude=["key_hash"])
class Invitation(models.Model):
    """An owner's invitation to join a workspace, to an email address
    (pixie.core.people.invitations). The person opens its link and joins with the login they
    have or one they choose: an owner never picks an existing login, so adding someone tells
    nothing about who has one and takes no one in without their consent. The secret is kept only
    as its hash."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(
        max_length=16, choices=Membership.Role.choices, default=Membership.Role.MEMBER
    )
    key_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"Invitation of {self.email} to {self.workspace} ({self.role})"

    @property
    def state(self) -> str:
        if self.accepted_at:
            return "accepted"
        if self.revoked_at:
            return "revoked"
        return "expired" if self.expires_at <= timezone.now() else "waiting"


@reversion.register()
class LoginLockout(models.Model):
    """An account or an address locked out of the admin's login after too many wrong
    passwords (pixie.login_throttle); written when the lock begins, never changed."""

    class Kind(models.TextChoices):
        ACCOUNT = "account", "An account"
        ADDRESS = "address", "An address"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    username = models.CharField(max_length=150, help_text="The username last tried.")
    address = models.CharField(max_length=64, help_text="Where the last try came from.")
    failures = models.PositiveIntegerField(help_text="Wrong passwords in the window.")
    seconds = models.PositiveIntegerField(help_text="How long the lock lasts.")
    locked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-locked_at", "-id"]

    def __str__(self):
        who = self.username if self.kind == self.Kind.ACCOUNT else self.address
        return f"Login locked for {self.get_kind_display().lower()}: {who}"


class NotificationChoice(models.Model):
    """A person's choice for one kind of notification; no row means both on."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_choices"
    )
    kind = models.CharField(max_length=20, choices=Notification.Kind.choices)
    in_home = models.BooleanField(default=True)
    by_email = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "kind"], name="one_choice_a_kind")]

    def __str__(self):
        return f"{self.user}: {self.get_kind_display()}"
