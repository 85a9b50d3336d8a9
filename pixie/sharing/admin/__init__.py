"""Sharing's admin pages: the inbox, outbox, contacts and blocked senders (inbox.py), and
*Share with a contact* on a workspace skill's page (skill.py, through catalog's
``WorkspaceSkillAdmin.extra_pages`` hook)."""

from . import inbox, skill  # noqa: F401  (each registers its pages)
