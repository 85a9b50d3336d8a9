"""Sources' tasks: thin callers of source_check, taking ids, safe to run twice (a source
being checked is left to that check; one checked since it was queued is checked again,
which finds nothing new)."""

from celery import shared_task

from .models import Source
from .services import SourceBusy, source_check, sources_due


@shared_task(name="pixie.sources.tasks.check_source", acks_late=True)
def check_source(source_id: int) -> str:
    source = Source.objects.filter(pk=source_id, paused=False).first()
    if source is None:
        return "gone or paused"
    try:
        return source_check(source).last_result
    except SourceBusy:
        return "busy"


@shared_task(name="pixie.sources.tasks.check_due_sources")
def check_due_sources() -> list[int]:
    """Queue a check of every unpaused source that is due, each in its own task."""
    due = list(sources_due().values_list("pk", flat=True))
    for source_id in due:
        check_source.delay(source_id)
    return due
