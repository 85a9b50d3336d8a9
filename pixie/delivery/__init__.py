"""Delivery: serving what a workspace's owner approved to the agent clients people run
(the Agent Skills discovery index the npm ``skills`` CLI reads, Claude Code marketplaces).

An empty place for now, named in the layers contract (pyproject.toml): the top layer,
beside pixie.installer and pixie.sharing, above agents, egress, catalog and pixie.core.
It reads approved skills; it never writes a catalog row itself."""
