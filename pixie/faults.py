"""Named points where tests make the real code fail, to prove nothing partial is left.

Production never sets PIXIE_FAILPOINTS; a test does (settings fixture) and the
code under test raises at exactly that point.
"""

from django.conf import settings


class InjectedFault(RuntimeError):
    pass


def checkpoint(name: str) -> None:
    if name in getattr(settings, "PIXIE_FAILPOINTS", ()):
        raise InjectedFault(f"injected fault at {name}")
