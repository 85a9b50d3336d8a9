"""Delivery: serving what a workspace's owners approved to the agent clients people run,
through the Agent Skills discovery index (v0.2.0) the npm ``skills`` CLI reads
(docs/DELIVERY.md).

- tokens.py: delivery tokens, the workspace's (not a person's), shown once, kept hashed.
- index.py: what a token serves (an agent's skills as it runs them, or the workspace's).
- archives.py: each skill's zip, deterministic, built once per content and kept.
- views.py, urls.py, secret_paths.py: the URLs a client reads, the token kept out of logs.
- clients.py, selectors.py: which clients run what, and who is behind.
- pages.py, api/: delivery's page of a workspace (mixed into WorkspaceAdmin) and its API.

The top layer (pyproject.toml's contract), beside pixie.installer and pixie.sharing,
above agents, egress, catalog and pixie.core. It reads approved skills; it never writes
a catalog row itself."""
