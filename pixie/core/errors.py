"""Domain errors: each carries a message a person can act on and a stable code.

Every code a refusal can carry is a member of ``ErrorCode``: the API's ``Error`` schema
lists them (pixie.core.web.schema), and a refusal made with any other code fails where it
is made (``ErrorCode(code)``), so a new code is added here, once, or not at all.
docs/CONTRIBUTING.md has the recipe."""

from enum import StrEnum


class ErrorCode(StrEnum):
    """The ``code`` of every refusal, stable for programs (the ``detail`` is for people)."""

    # Any request: the body, the method, who is asking.
    INVALID = "invalid"  # a rule broken; ``problems`` names each
    CONFLICT = "conflict"  # the object is not in a state that allows this
    IMMUTABLE = "immutable"  # something published was asked to change
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    TOO_LARGE = "too_large"  # a body over its ceiling
    ERROR = "error"  # a refusal with no more precise code
    # Django REST framework's own refusals, with DRF's codes.
    NOT_AUTHENTICATED = "not_authenticated"
    AUTHENTICATION_FAILED = "authentication_failed"
    PERMISSION_DENIED = "permission_denied"
    PARSE_ERROR = "parse_error"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    NOT_ACCEPTABLE = "not_acceptable"
    THROTTLED = "throttled"
    # Roles.
    OWNER_REQUIRED = "owner_required"
    OPERATOR_REQUIRED = "operator_required"
    AUDITOR_REQUIRED = "auditor_required"
    NOT_VISIBLE = "not_visible"  # a workspace or version this person may not see
    # People, invitations and tokens.
    NOT_A_MEMBER = "not_a_member"
    ALREADY_MEMBER = "already_member"
    ALREADY_INVITED = "already_invited"
    INVITE_INSTEAD = "invite_instead"
    USERNAME_TAKEN = "username_taken"
    LAST_OWNER = "last_owner"
    TOO_MANY_INVITATIONS = "too_many_invitations"
    NO_SUCH_INVITATION = "no_such_invitation"
    INVITATION_NOT_VALID = "invitation_not_valid"
    TOO_MANY_TOKENS = "too_many_tokens"
    TOKEN_LIMITED = "token_limited"  # noqa: S105 (a code, not a secret)
    TOKEN_READ_ONLY = "token_read_only"  # noqa: S105 (a code, not a secret)
    TOKEN_WORKSPACE_LIMITED = "token_workspace_limited"  # noqa: S105 (a code, not a secret)
    # The catalog: publishing, review, signatures, history.
    ALREADY_PUBLISHED = "already_published"
    NOT_PUBLISHED = "not_published"
    PUBLISH_REFUSED = "publish_refused"
    FINDINGS_REFUSED = "findings_refused"
    REASON_REQUIRED = "reason_required"
    IMITATION = "imitation"
    OPERATOR = "operator"  # an operator publisher needs no review
    UNCHANGED = "unchanged"
    ALREADY_PENDING = "already_pending"
    ALREADY_REFUSED = "already_refused"
    YANKED = "yanked"
    NOT_AS_SIGNED = "not_as_signed"
    BAD_BUNDLE_FILE = "bad_bundle_file"
    NO_SUCH_VERSION = "no_such_version"
    NO_SUCH_REVISION = "no_such_revision"
    NOT_ORPHANED = "not_orphaned"
    # Plans: asking, approving, applying.
    ALREADY_INSTALLED = "already_installed"
    NOT_INSTALLED = "not_installed"
    SAME_VERSION = "same_version"
    BAD_AGENT = "bad_agent"
    BAD_FORK_CHOICE = "bad_fork_choice"
    FORK_UNDECIDED = "fork_undecided"  # a fork the plan waits for a choice for
    NO_GENERATION = "no_generation"
    OVERRIDE_IN_USE = "override_in_use"
    INVALID_POLICY = "invalid_policy"
    POLICY_SECOND_OWNER = "policy_second_owner"  # the workspace's approval rules
    POLICY_EXPIRY = "policy_expiry"
    POLICY_FINDINGS = "policy_findings"
    # A plan or a review in another state than the one asked for (``already_<state>``).
    ALREADY_PROPOSED = "already_proposed"
    ALREADY_APPROVED = "already_approved"
    ALREADY_APPLYING = "already_applying"
    ALREADY_APPLIED = "already_applied"
    ALREADY_FAILED = "already_failed"
    ALREADY_STALE = "already_stale"
    ALREADY_REJECTED = "already_rejected"
    ALREADY_SUPERSEDED = "already_superseded"
    ALREADY_FINISHED = "already_finished"
    # Agents and egress.
    BAD_ORDER = "bad_order"
    NO_TURN = "no_turn"
    ALREADY_ATTACHED = "already_attached"
    AGENT_TAKEN = "agent_taken"  # a slug another agent of the workspace has
    UNKNOWN = "unknown"  # a credential name the workspace does not need
    # Sharing.
    BAD_ENVELOPE = "bad_envelope"
    NOT_A_SHARE = "not_a_share"
    OVER_SHARE_LIMITS = "over_share_limits"
    DUPLICATE = "duplicate"
    REFUSED = "refused"
    TRY_LATER = "try_later"
    DESTINATION_REFUSED = "destination_refused"
    # Notifications.
    UNKNOWN_KIND = "unknown_kind"
    # Commands: bench_seed's arguments (benchmarks/bench_data.py).
    BAD_SEED = "bad_seed"
    PREFIX_TAKEN = "prefix_taken"


class PixieError(Exception):
    """Base of every refusal a service makes; never a programming error."""

    code = ErrorCode.INVALID
    status = 400

    def __init__(self, message: str, *, code: ErrorCode | str | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = ErrorCode(code)  # ValueError: a code nobody registered above


class ValidationFailed(PixieError):
    """Input broke a rule; `problems` lists every one, each naming what is wrong."""

    code = ErrorCode.INVALID

    def __init__(self, problems: list[str] | str, *, code: ErrorCode | str | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems), code=code)


class ImmutableError(PixieError):
    """Something published was asked to change."""

    code = ErrorCode.IMMUTABLE
    status = 409


class StateError(PixieError):
    """The object is not in a state that allows this (e.g. publishing twice)."""

    code = ErrorCode.CONFLICT
    status = 409


class PermissionRefused(PixieError):
    code = ErrorCode.FORBIDDEN
    status = 403


class DestinationRefused(PixieError):
    """This server will not connect there (a contact's inbox, a source's repository);
    ``reason`` says why, in a few words."""

    code = ErrorCode.DESTINATION_REFUSED

    def __init__(self, message: str, *, reason: str):
        super().__init__(message)
        self.reason = reason
