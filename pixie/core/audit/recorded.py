"""A recorded version as a person reads it: each field by its label, foreign keys by the
name of the object they point at, times as the rest of the admin writes them, and every
field compared with the version of the same object recorded before it.

The History pages (pixie.core.audit.admin_history) show what this returns; they read only
versions an audit entry covers, and so does the search for the version before. Its
queries do not grow with the history: the version before is one query, the names of
the objects the two versions point at one query per kind of object.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime

from django.db import models
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.text import capfirst
from reversion.errors import RevertError
from reversion.models import Version

# As the admin's other pages write a moment (the audit log, a plan, a check of the chains).
MOMENT = "Y-m-d H:i"
# Two moments the same to the minute that still differ are written to the second.
MOMENT_PRECISE = "Y-m-d H:i:s"


@dataclass(frozen=True)
class RecordedField:
    """One field of a recorded version: its value as printed ("" when empty), and the
    value the version before recorded (None when there is no version before, or it did
    not record this field)."""

    label: str
    value: str
    before: str | None = None
    changed: bool = False
    # Text shown as a block and compared line by line (a text field, JSON, several lines).
    text: bool = False


@dataclass(frozen=True)
class RecordedVersion:
    """A version read for the page: its fields in the model's order, and the version of
    the same object recorded before it (None: this is the first one recorded)."""

    fields: list[RecordedField]
    previous: Version | None = None
    # The version before could not be read with today's model (a field since removed).
    previous_unreadable: bool = False

    @property
    def changed(self) -> list[RecordedField]:
        return [f for f in self.fields if f.changed]

    @property
    def unchanged(self) -> list[RecordedField]:
        return [f for f in self.fields if not f.changed]


def version_before(version: Version) -> Version | None:
    """The version of the same object recorded just before ``version``, among those an
    audit entry covers (the ones the History list shows)."""
    return (
        Version.objects.filter(
            content_type_id=version.content_type_id,
            object_id=version.object_id,
            db=version.db,
            pk__lt=version.pk,
            revision__audit__isnull=False,
        )
        .select_related("revision__user")
        .order_by("-pk")
        .first()
    )


def recorded_version(model, version: Version, previous: Version | None) -> RecordedVersion:
    """``version`` of a ``model`` object, each field compared with ``previous`` (the one
    recorded before it, or None). A record today's model can no longer read is shown as
    its raw data, uncompared."""
    try:
        values = version.field_dict
    except RevertError:
        raw = RecordedField(label="Recorded data", value=version.serialized_data, text=True)
        return RecordedVersion(fields=[raw])
    before_values, unreadable = None, False
    if previous is not None:
        try:
            before_values = previous.field_dict
        except RevertError:
            unreadable = True
    shown = [f for f in model._meta.concrete_fields if f.attname in values]
    names = _related_names(shown, [values, before_values or {}])
    fields = [
        _recorded_field(model_field, values[model_field.attname], before_values, names)
        for model_field in shown
    ]
    return RecordedVersion(
        fields=fields, previous=previous if before_values is not None else None,
        previous_unreadable=unreadable,
    )  # fmt: skip


def _recorded_field(model_field, value, before_values: dict | None, names) -> RecordedField:
    """One field, compared with the version before when there is one (``before_values``)."""
    label, text = _label(model_field), _printed(model_field, value, names)
    if before_values is None:
        return RecordedField(label, text, text=_is_text(model_field, text))
    if model_field.attname not in before_values:  # a field the model gained since
        return RecordedField(label, text, None, True, _is_text(model_field, text))
    old = before_values[model_field.attname]
    before = _printed(model_field, old, names)
    if old != value and before == text and isinstance(value, datetime):
        before = _printed(model_field, old, names, MOMENT_PRECISE)
        text = _printed(model_field, value, names, MOMENT_PRECISE)
    is_text = _is_text(model_field, text) or _is_text(model_field, before)
    return RecordedField(label, text, before, old != value, is_text)


def _label(model_field) -> str:
    return capfirst(str(model_field.verbose_name))


def _is_text(model_field, printed: str) -> bool:
    return isinstance(model_field, models.TextField | models.JSONField) or "\n" in printed


def _related_names(fields, value_sets: list[dict]) -> dict[tuple, str]:
    """(model, id) -> the object's name, for every foreign key either version holds: one
    query per kind of object, whatever the number of fields that point at it."""
    wanted: dict[type, set] = {}
    for model_field in fields:
        if not (model_field.many_to_one or model_field.one_to_one):
            continue
        target = model_field.related_model._meta.concrete_model
        for values in value_sets:
            value = values.get(model_field.attname)
            if value is not None and value != "":
                wanted.setdefault(target, set()).add(value)
    names = {}
    for target, ids in wanted.items():
        # select_related(): the names of most objects read the object they belong to
        # ("@invoice-chase 1.2.0" reads its package), in the same query.
        for obj in target._base_manager.select_related().filter(pk__in=ids):
            names[(target, obj.pk)] = str(obj)
    return names


def _printed(model_field, value, names: dict, moment: str = MOMENT) -> str:
    if value is None or value == "":
        return ""
    if model_field.is_relation:
        target = model_field.related_model._meta.concrete_model
        name = names.get((target, value))
        if name is None:
            return f"{capfirst(str(target._meta.verbose_name))} #{value}, since deleted"
        return name
    if model_field.choices:
        return str(dict(model_field.flatchoices).get(value, value))
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, datetime):
        return date_format(timezone.localtime(value) if timezone.is_aware(value) else value,
                           moment)  # fmt: skip
    if isinstance(value, date):
        return date_format(value, "Y-m-d")
    if isinstance(value, dict | list):
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return str(value)
