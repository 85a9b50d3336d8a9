"""An index of bundle versions by (bundle_id, catalog_review, status): whether a bundle has a
version a viewer may see (catalog.bundle_pages: the catalog API's list, its page and its
count) is answered from the index alone, without reading the versions' wide rows.

Written as SQL (the database's own): catalog/models/catalog.py does not declare it, so the
models' state is left as it was. To declare it there, move it into BundleVersion.Meta.indexes
with a SeparateDatabaseAndState migration naming the same index."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("catalog", "0015_running_a_workspace")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX bundle_version_visibility "
            "ON catalog_bundleversion (bundle_id, catalog_review, status)",
            "DROP INDEX bundle_version_visibility",
        )
    ]
