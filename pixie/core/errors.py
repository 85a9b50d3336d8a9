"""Domain errors: each carries a message a person can act on and a stable code."""


class PixieError(Exception):
    """Base of every refusal a service makes; never a programming error."""

    code = "invalid"
    status = 400

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class ValidationFailed(PixieError):
    """Input broke a rule; `problems` lists every one, each naming what is wrong."""

    code = "invalid"

    def __init__(self, problems: list[str] | str, *, code: str | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems), code=code)


class ImmutableError(PixieError):
    """Something published was asked to change."""

    code = "immutable"
    status = 409


class StateError(PixieError):
    """The object is not in a state that allows this (e.g. publishing twice)."""

    code = "conflict"
    status = 409


class PermissionRefused(PixieError):
    code = "forbidden"
    status = 403
