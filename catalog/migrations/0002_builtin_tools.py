from django.db import migrations


def add_tools(apps, schema_editor):
    from catalog.tools import ensure_builtin_tools

    ensure_builtin_tools(apps.get_model("catalog", "Tool"))


class Migration(migrations.Migration):
    dependencies = [("catalog", "0001_initial")]
    operations = [migrations.RunPython(add_tools, migrations.RunPython.noop)]
