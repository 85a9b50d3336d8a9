from django.db import migrations


def add_tools(apps, schema_editor):
    from catalog.tools import BUILTIN_TOOLS

    Tool = apps.get_model("catalog", "Tool")
    existing = set(Tool.objects.values_list("slug", flat=True))
    Tool.objects.bulk_create(
        Tool(slug=slug, name=name, description=description)
        for slug, name, description in BUILTIN_TOOLS
        if slug not in existing
    )


class Migration(migrations.Migration):
    dependencies = [("catalog", "0001_initial")]
    operations = [migrations.RunPython(add_tools, migrations.RunPython.noop)]
