"""Sharing between workspaces: identities and contacts, sealed messages, skill shares.

One package, its own Django app (``apps.SharingConfig``): models, crypto, services
(``services`` gathers the public ones), tasks, admin pages and API. It sits on top of
catalog, beside the installer (docs/ARCHITECTURE.md). The pure share format is
``pixie.core.skillshare``, kept at that path as documented API.
"""
