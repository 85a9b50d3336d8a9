"""The kinds of plan, one module each (pixie.installer.plan_kinds is their registry).

A new kind is a module here, a line below, and its value in ``catalog.models.Plan.Kind``
(with the migration Django writes for the choice): docs/CONTRIBUTING.md has the recipe.
The installer app imports this package when Django starts.
"""

# (bundle.py is the base the bundle kinds share, not a kind.)
from . import install, repoint, rollback, uninstall, upgrade  # noqa: F401 (they register)
