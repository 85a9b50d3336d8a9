"""The installer: plans of every kind (install, upgrade, uninstall, rollback, repoint), their
approval, and the apply that carries one out in one transaction.

It sits on top of catalog, egress and agents (docs/ARCHITECTURE.md): it reads the
catalog and the workspace, and writes skills, egress rules, credentials and agents'
pins. Its records, ``catalog.Plan`` and ``catalog.Installation``, stay in the catalog
app's tables. Each kind of plan is a module of ``kinds/``, registered in ``plan_kinds``;
``plan_core`` is the pure planner of the bundle kinds; ``plan_run`` applies a plan of any
kind.
"""
