"""The admin's login, throttled by account and by address.

Each wrong password counts against the username tried and against the address it came
from (django-ratelimit's fixed windows, in the "ratelimit" cache: Redis when there is
one, so every web process counts together). Past either limit the login form refuses
before it looks at the password, so the right password does not work either until the
window passes, and it says so plainly. The moment an account or an address is locked
is recorded as a LoginLockout row, with its own history entry: staff read them on the
admin's Login lockouts page and in the audit log, where the audit chain covers them.

Limits (django-ratelimit rates): PIXIE_LOGIN_FAILURES_PER_ACCOUNT (default 5 in 15
minutes) and PIXIE_LOGIN_FAILURES_PER_ADDRESS (default 20 in 15 minutes); empty turns
one off.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError
from django_ratelimit.core import get_usage

from pixie.core.audit.records import audited
from pixie.core.models import LoginLockout
from pixie.sharing.guard import client_address

log = logging.getLogger(__name__)

THROTTLED = (
    "Too many wrong passwords for this account or from this address: logging in is "
    "paused for {minutes} more minute{s}. Try again then, or ask an operator."
)


def _buckets(request, username: str) -> list[tuple[str, str, str]]:
    """(group, key, rate) of each limit that applies."""
    address = client_address(request.META, behind_proxy=settings.BEHIND_TLS_PROXY)
    account = settings.PIXIE_LOGIN_FAILURES_PER_ACCOUNT
    per_address = settings.PIXIE_LOGIN_FAILURES_PER_ADDRESS
    buckets = []
    if account and username:
        buckets.append(("login-account", username.casefold()[:150], account))
    if per_address and address:
        buckets.append(("login-address", address, per_address))
    return buckets


def _usage(group: str, key: str, rate: str, *, increment: bool) -> dict | None:
    try:
        return get_usage(
            None, group=group, key=lambda _group, _request: key, rate=rate, increment=increment
        )
    except Exception:  # the cache is down: refuse, as a lock would, rather than open up
        log.exception("login throttle %s could not be counted", group)
        return {"should_limit": True, "time_left": 60, "count": 0, "limit": 0}


def login_paused(request, username: str) -> str | None:
    """The message to show when this account or this address may not try now, or None."""
    for group, key, rate in _buckets(request, username):
        usage = _usage(group, key, rate, increment=False)
        # At the limit already: the next wrong password would pass it.
        if usage and usage["count"] >= usage["limit"]:
            minutes = max(1, -(-int(usage["time_left"]) // 60))
            return THROTTLED.format(minutes=minutes, s="" if minutes == 1 else "s")
    return None


def login_failed(request, username: str) -> None:
    """Count a wrong password; record a lockout when it reaches a limit."""
    for group, key, rate in _buckets(request, username):
        usage = _usage(group, key, rate, increment=True)
        if usage and usage["limit"] and usage["count"] == usage["limit"]:
            kind = "account" if group == "login-account" else "address"
            address = client_address(request.META, behind_proxy=settings.BEHIND_TLS_PROXY)
            with audited(actor=None, comment=f"Login locked ({kind}): {usage['count']} "
                                             f"wrong passwords for {username!r}"):  # fmt: skip
                LoginLockout.objects.create(
                    kind=kind, username=username[:150], address=address[:64],
                    failures=usage["count"], seconds=int(usage["time_left"]),
                )  # fmt: skip
            log.warning("login locked (%s) for %r from %s", kind, username, address)


class ThrottledLoginForm(AdminAuthenticationForm):
    """The admin's login form: refused while paused, each wrong password counted."""

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        if paused := login_paused(self.request, username):
            raise ValidationError(paused, code="throttled")
        try:
            return super().clean()
        except ValidationError as error:
            if getattr(error, "code", None) == "invalid_login":
                login_failed(self.request, username)
            raise
