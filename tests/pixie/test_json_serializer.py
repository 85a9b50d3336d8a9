"""History is recorded in Django's "json" format, written by Pixie's faster serializer
(pixie.core.audit.json_serializer): the very text Django's own writes, for every kind
of object recorded, so the versions already stored, the audit chain over them and every
reader of them see no difference; and what it writes reads back with Django's own."""

import datetime
import decimal
import io
import json
import uuid

import pytest
import reversion
from django.core import serializers
from django.core.management import call_command
from django.core.serializers import json as django_json
from reversion.models import Version

from pixie.core.audit import json_serializer

pytestmark = pytest.mark.django_db


def djangos_own(objects, **options) -> str:
    return django_json.Serializer().serialize(objects, **options)


def test_the_json_format_is_pixies_serializer():
    assert isinstance(serializers.get_serializer("json")(), json_serializer.Serializer)
    assert serializers.get_deserializer("json") is django_json.Deserializer


@pytest.mark.parametrize("options", [{}, {"indent": 2}, {"fields": ["name", "slug"]}])
def test_every_recorded_kind_of_object_is_written_as_djangos_serializer_writes_it(
    demo_catalog, options
):
    """Every model django-reversion records, every row of it the demo catalog made
    (bundles, versions, skills, files, publishers, the catalog's plans and people)."""
    compared = 0
    for model in reversion.get_registered_models():
        rows = list(model._default_manager.order_by("pk")[:50])
        if not rows:
            continue
        fields = options.get("fields")
        if fields and not all(hasattr(model, name) for name in fields):
            continue
        assert serializers.serialize("json", rows, **options) == djangos_own(rows, **options)
        for row in rows:  # and one at a time, as a revision records them
            assert serializers.serialize("json", [row]) == djangos_own([row])
        compared += len(rows)
    assert compared > (0 if "fields" in options else 20)


def test_values_json_writes_specially_are_written_the_same_and_read_back(demo_catalog):
    from catalog.models import Bundle

    bundle = Bundle.objects.first()
    bundle.name = 'Ünïcode "quoted" \\ back\nslash ✓'
    text = serializers.serialize("json", [bundle])
    assert text == djangos_own([bundle]) and "✓" in text  # not escaped: ensure_ascii off
    (read,) = serializers.deserialize("json", text)
    assert read.object.name == bundle.name and read.object.pk == bundle.pk
    # The encoder's own types (Django's DjangoJSONEncoder), as json.dump writes them.
    odd = {"when": datetime.datetime(2026, 12, 7, 20, 1, 2, 345678, tzinfo=datetime.UTC),
           "amount": decimal.Decimal("1.10"), "id": uuid.UUID(int=7)}  # fmt: skip
    kwargs = {"cls": django_json.DjangoJSONEncoder, "ensure_ascii": False}
    stream = io.StringIO()
    json.dump(odd, stream, **kwargs)
    assert json.dumps(odd, **kwargs) == stream.getvalue()


def test_what_a_publish_records_reads_back_whole(demo_catalog):
    """The versions a publish recorded deserialize, with Django's own reader, into the
    rows they recorded."""
    versions = list(Version.objects.order_by("pk")[:200])
    assert versions
    for version in versions:
        assert version.format == "json"
        (read,) = serializers.deserialize("json", version.serialized_data)
        assert str(read.object.pk) == version.object_id
        assert type(read.object) is version.content_type.model_class()


def test_dumpdata_writes_the_file_djangos_serializer_writes(tmp_path, demo_catalog):
    written = tmp_path / "catalog.json"
    call_command("dumpdata", "catalog", "--indent", "2", "--output", str(written))
    text = written.read_text()
    rows = [d.object for d in serializers.deserialize("json", text)]
    assert len(rows) > 20
    assert text == djangos_own(rows, indent=2)
