"""Every URL pattern of the project, with its arguments filled from a World."""

import re

from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver

ADMIN_MODEL_VIEW = re.compile(r"^(?P<app>[a-z]+)_(?P<model>[a-z]+)_(?P<view>[a-z_]+)$")


def all_patterns():
    """(route, name) for every URL pattern, includes expanded."""
    return [(route, name) for route, name, _ in all_views()]


def all_views():
    """(route, name, view function) for every URL pattern, includes expanded."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.name, pattern.callback

    return list(walk(get_resolver().url_patterns))


def object_for(app_label: str, model_name: str, world):
    """An object of the acme workspace (or any, for catalog models) to put in the URL."""
    from django.contrib import admin
    from django.contrib.auth import get_user_model

    from pixie.core.web.admin_scoping import WorkspaceScopedAdmin

    model = apps.get_model(app_label, model_name)
    if model is get_user_model():
        return world.users["member"]
    model_admin = admin.site._registry.get(model)
    queryset = model._default_manager.order_by("pk")
    if isinstance(model_admin, WorkspaceScopedAdmin):
        return queryset.filter(**{model_admin.workspace_field: world.acme.pk}).first()
    return queryset.first()


REVERSION_VIEWS = {"recoverlist": [], "recover": ["version"], "revision": ["object", "version"]}


def fill(route: str, name: str, world) -> str | None:
    """The route with every converter replaced by a real value, or None if impossible."""
    ids = world.ids
    values = {
        "skill_id": ids["skill"],
        "number": 1,
        "plan_id": ids["plan"],
        "agent_id": ids["agent"],
        "installation_id": ids["installation"],
        "workspace": "acme",
        "slug": "accounts-receivable" if route.startswith("api/bundles") else "invoice-chase",
        "version": "2.1.0",
        "pk": ids["plan"],
        "agent": "collections",
        "skill": "invoice-chase",
        "name": "LEDGER_API_TOKEN",
        "id": world.users["member"].pk,
        "workspace_id": world.acme.pk,
        "path": "SKILL.md",
        "bundle_version_id": ids["pending_version"],
        "publisher_id": ids["publisher"],
        "bundle_id": ids["bundle"],
        "bundle": "accounts-receivable",
    }
    if "<int:requirement_id>" in route:  # the credential the world's install requires
        from egress.models import CredentialRequirement

        values["requirement_id"] = (
            CredentialRequirement.objects.filter(workspace=world.acme)
            .values_list("pk", flat=True)
            .first()
        )
    if "/restore/" in route:  # the world's skill with an earlier revision to restore
        values["slug"], values["skill_id"] = "month-end", ids["local_skill"]
    if "/turns/" in route:
        values["pk"] = ids["turn"]
    if "/tokens/" in route:
        values["pk"] = ids["delivery_token" if "/delivery/" in route else "api_token"]
    if "/invitations/" in route:
        values["pk"] = ids["invitation"]
    if "/members/" in route:
        values["username"] = world.users["member"].username
    if "/messages/" in route:
        values["pk"] = ids["message"]
    if "/history/" in route:
        values["pk"] = ids["revision"]
    if route.startswith("api/sources/"):
        values["pk"] = ids["source"]
    values["source_id"] = ids["source"]
    match = ADMIN_MODEL_VIEW.match(name or "")
    if match and not any(c.label == match["app"] for c in apps.get_app_configs()):
        match = None
    if match and match["view"] in REVERSION_VIEWS:
        return _reversion_url(name, match, world)
    if "<path:object_id>" in route:
        if not match:
            return None
        obj = object_for(match["app"], match["model"], world)
        if obj is None:
            return None
        values["object_id"] = obj.pk
    if "<path:content_type_id>" in route or "<path:app_label>" in route:
        return None  # admin shortcuts and app indexes are covered by their own rows
    url = route
    for converter in re.findall(r"<(?:\w+:)?(\w+)>", route):
        if converter not in values:
            return None
        url = re.sub(rf"<(?:\w+:)?{converter}>", str(values[converter]), url, count=1)
    url = "/" + url.lstrip("^").rstrip("$")
    if name == "pixie_workspace_install":  # the version to install is in the query
        url += "?bundle=accounts-receivable&version=2.1.0"
    return url


def _reversion_url(name, match, world) -> str | None:
    """django-reversion's recover and revision pages are regex routes: reverse them."""
    from django.urls import reverse
    from reversion.models import Version

    obj = object_for(match["app"], match["model"], world)
    args = []
    for part in REVERSION_VIEWS[match["view"]]:
        if obj is None:
            return None
        version = Version.objects.get_for_object(obj).first()
        if version is None:
            return None
        args.append(obj.pk if part == "object" else version.pk)
    return reverse(f"admin:{name}", args=args)
