"""The catalog's stamp and the triggers that change it (catalog.models.stamp)."""

import random

from django.db import migrations, models

SHARDS = 16


def install(apps, schema_editor):
    from catalog.stamp_triggers import stamp_triggers_install

    stamp = apps.get_model("catalog", "CatalogStamp")
    shards = SHARDS if schema_editor.connection.vendor == "postgresql" else 1
    stamp.objects.using(schema_editor.connection.alias).bulk_create(
        [stamp(shard=shard, number=random.getrandbits(62)) for shard in range(shards)]
    )
    stamp_triggers_install(schema_editor.connection)


def remove(apps, schema_editor):
    from catalog.stamp_triggers import stamp_triggers_remove

    stamp_triggers_remove(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0019_bundle_version_provenance"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("pixie", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="CatalogStamp",
            fields=[
                ("shard", models.PositiveSmallIntegerField(primary_key=True, serialize=False)),
                ("number", models.BigIntegerField()),
            ],
            options={"verbose_name": "catalog stamp"},
        ),
        migrations.RunPython(install, remove),
    ]
