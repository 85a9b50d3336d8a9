"""One door for audited writes: a transaction and a reversion revision together.

Every service that changes state runs inside `audited(...)`, so history records
the user and a comment whether the change came from the admin, the API, a
management command or a task. Blocks nest: an inner one joins the outer one.
"""

from contextlib import contextmanager

import reversion
from django.db import transaction


@contextmanager
def audited(*, actor, comment: str):
    outer_comment = reversion.get_comment() if reversion.is_active() else ""
    with transaction.atomic(), reversion.create_revision(atomic=False):
        if actor is not None and reversion.get_user() is None:
            reversion.set_user(actor)
        # A nested block adds to the story instead of replacing it.
        reversion.set_comment(f"{outer_comment}; {comment}" if outer_comment else comment)
        yield
