"""Rows that every test of a module reads, made once for the module rather than once a
test, as Django's TestCase.setUpTestData makes them: inside a transaction that each test
nests in (pytest-django's ``db`` opens a savepoint per test and rolls it back), itself
rolled back after the module's last test on this worker.

Only for tests that use ``db`` (not ``transactional_db``, whose flush would take the
rows with it), and rows the tests read: a test that changes one rolls its change back
with its savepoint, but the Python objects the fixture handed out are shared.
"""

import contextlib

from django.db import transaction


@contextlib.contextmanager
def rows_for_the_module(django_db_blocker):
    with django_db_blocker.unblock(), transaction.atomic():
        yield
        transaction.set_rollback(True)
