"""The installer: plans of every kind (install, upgrade, uninstall, repoint), their
approval, and the apply that carries one out in one transaction.

It sits on top of catalog, egress and agents (docs/ARCHITECTURE.md): it reads the
catalog and the workspace, and writes skills, egress rules, credentials and agents'
pins. Its records, ``catalog.Plan`` and ``catalog.Installation``, stay in the catalog
app's tables. ``plan_core`` is the pure planner; ``plan_run`` applies a plan of any
kind.
"""
