"""Sources: following the git repositories where skills are published, so that the
catalog keeps up with them.

An empty place for now, named in the layers contract (pyproject.toml): the top layer,
beside pixie.installer and pixie.sharing, above agents, egress, catalog and pixie.core.
What it finds becomes a catalog release through catalog's own services."""
