"""The agents' admin: registered.py registers the Agent admin (and adds to a workspace
skill's page how often each revision was used); pages.py is an agent's own pages
(its skills in order, the composed prompt, promoting its skills to a bundle)."""

from . import registered  # noqa: F401  (registers the ModelAdmins)
