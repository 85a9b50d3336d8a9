"""The catalog's admin: registered.py registers every ModelAdmin (publishers, skills,
bundles and their versions, workspace skills, plans); each other module is the pages of
one concern, mixed into those ModelAdmins (bundle_compare, bundle_upload, keys,
member_read, release, review, skill_history, skill_pages). Higher layers hook into
``WorkspaceSkillAdmin`` (its ``extra_pages`` and ``page_context``)."""

from .registered import WorkspaceSkillAdmin  # noqa: F401  (and registers every ModelAdmin)
