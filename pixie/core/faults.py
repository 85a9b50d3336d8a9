"""Named points where tests make the real code fail or stall.

Production sets neither PIXIE_FAILPOINTS nor PIXIE_PAUSE_AT; a test does, and
the code under test raises (or sleeps, so a worker can be killed mid-way) at
exactly that point, proving nothing partial is left behind.
"""

import time

from django.conf import settings


class InjectedFault(RuntimeError):
    pass


def checkpoint(name: str) -> None:
    pause = getattr(settings, "PIXIE_PAUSEPOINTS", {}).get(name)
    if pause:
        time.sleep(pause)
    if name in getattr(settings, "PIXIE_FAILPOINTS", ()):
        raise InjectedFault(f"injected fault at {name}")
