"""Checks of the chains of audit digests: asked for on the audit log's page or by the
command, each a row (AuditCheck) that says who asked, when, and what the walk found.

An auditor or an operator presses *Verify now* on the audit log: ``chain_check_request``
writes a check that is running and queues ``verify_chains`` once that commits; the task
walks every chain (``chain_verify``, the walk ``manage.py audit_verify`` makes) and writes
what it found on that row. The command (an operator's cron) writes its check the same
way, walking in its own process. The page shows the latest check that finished and the
one running, if any.

While a check runs a second is not started: whoever asks is told of the running one.
Two people pressing at the same instant may both start one; each walk only reads and
writes its own row, so the price is a second walk, not a wrong answer. A check that has
not finished after RUNNING_AT_MOST (its worker stopped) no longer counts as running, and
a new one may be started.
"""

from dataclasses import dataclass
from datetime import timedelta

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from pixie.core.audit.chain import ChainReport, chain_verify
from pixie.core.errors import ErrorCode, PermissionRefused
from pixie.core.models import AuditCheck
from pixie.core.people.permissions import reads_audit_log

# Longer than a walk of millions of entries takes, and than the broker's visibility
# timeout (settings: an unacknowledged task is handed to another worker after it).
RUNNING_AT_MOST = timedelta(hours=2)


@dataclass(frozen=True)
class ChainCheckState:
    """What the audit log's page shows of the checks: the latest that finished, and the
    one running (asked for, not finished, younger than RUNNING_AT_MOST), each or None."""

    last: AuditCheck | None
    running: AuditCheck | None


@dataclass(frozen=True)
class ChainCheckAsked:
    check: AuditCheck
    started: bool  # False: one was running already, and ``check`` is that one


def _running(now):
    return AuditCheck.objects.filter(
        finished_at__isnull=True, at__gte=now - RUNNING_AT_MOST
    ).order_by("-at", "-pk")


def chain_check_state() -> ChainCheckState:
    """Two queries, whatever the number of checks made."""
    last = (
        AuditCheck.objects.filter(finished_at__isnull=False)
        .select_related("requested_by")
        .order_by("-finished_at", "-pk")
        .first()
    )
    running = _running(timezone.now()).select_related("requested_by").first()
    return ChainCheckState(last=last, running=running)


def chain_check_request(*, actor) -> ChainCheckAsked:
    """*Verify now*: a check of every chain for ``actor`` (who reads the audit log: an
    auditor or an operator), walked by a task after this commits; while one runs, that
    one is returned and nothing new is started."""
    if not reads_audit_log(actor):
        raise PermissionRefused(
            "Only auditors and operators check the chains of the audit log.",
            code=ErrorCode.AUDITOR_REQUIRED,
        )
    with transaction.atomic():
        running = _running(timezone.now()).select_related("requested_by").first()
        if running is not None:
            return ChainCheckAsked(check=running, started=False)
        check = AuditCheck.objects.create(via=AuditCheck.Via.PAGE, requested_by=actor)
        verify_chains.delay_on_commit(check.pk)
    return ChainCheckAsked(check=check, started=True)


@shared_task(name="pixie.audit.verify_chains", acks_late=True)
def verify_chains(check_id: int) -> bool | None:
    """Walk every chain for the check ``check_id``; None if it had finished already (a
    task delivered twice walks once more only while the row is still unfinished)."""
    check = chain_check_run(check_id=check_id)
    return None if check is None else check.ok


def chain_check_run(*, check_id: int) -> AuditCheck | None:
    """The check's walk, and what it found written on its row; None when it had finished
    already or is gone."""
    if not AuditCheck.objects.filter(pk=check_id, finished_at__isnull=True).exists():
        return None
    _finish(check_id, chain_verify())
    return AuditCheck.objects.get(pk=check_id)


def chain_check() -> AuditCheck:
    """A check walked here, in this process (``manage.py audit_verify``): running while
    it walks, as the page shows it."""
    check = AuditCheck.objects.create(via=AuditCheck.Via.COMMAND)
    _finish(check.pk, chain_verify())
    check.refresh_from_db()
    return check


def _finish(check_id: int, report: ChainReport) -> None:
    # Only an unfinished row: the first walk to end writes the result, a second changes
    # nothing.
    AuditCheck.objects.filter(pk=check_id, finished_at__isnull=True).update(
        finished_at=timezone.now(),
        entries=report.entries,
        chains=report.chains,
        problems=report.problems,
        unchained=report.unchained,
    )
