"""Pixie's admin site: its name on every page, and each model listed in the section a
person looks for it in.

A model is listed under its own app unless its ModelAdmin says otherwise with
``listed_under`` (an app label): plans and installations are catalog models, but they are
a workspace's life (owners ask for, read and approve them), so they are listed, and their
pages' breadcrumbs lead, under Workspaces. Their URLs stay the app's own.
"""

from django.apps import apps
from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.urls import reverse


class PixieAdminSite(admin.AdminSite):
    site_header = "Pixie"
    site_title = "Pixie"
    index_title = "Home"

    def section_label(self, model) -> str:
        """The app label of the section the model is listed under."""
        model_admin = self.get_model_admin(model) if self.is_registered(model) else None
        return getattr(model_admin, "listed_under", None) or model._meta.app_label

    def section(self, model) -> dict:
        """The section's name and the URL of its page, for a breadcrumb."""
        label = self.section_label(model)
        return {
            "name": apps.get_app_config(label).verbose_name,
            "url": reverse("admin:app_list", kwargs={"app_label": label}, current_app=self.name),
        }

    def get_app_list(self, request, app_label=None):
        sections: dict[str, dict] = {}
        for app in super().get_app_list(request):
            for entry in app["models"]:
                label = self.section_label(entry["model"])
                if label not in sections:
                    where = self.section(entry["model"])
                    sections[label] = {
                        **app,
                        "name": where["name"],
                        "app_label": label,
                        "app_url": where["url"],
                        "models": [],
                    }
                sections[label]["models"].append(entry)
        listed = [s for s in sections.values() if app_label in (None, s["app_label"])]
        listed.sort(key=lambda s: s["name"].lower())
        for section in listed:
            section["models"].sort(key=lambda entry: entry["name"])
        return listed


class PixieAdminConfig(AdminConfig):
    default_site = "pixie.core.web.admin_site.PixieAdminSite"


def site_names(request) -> dict:
    """The site's name for pages drawn outside the admin's views (the password pages, a
    refusal) that extend its templates."""
    return {"site_header": admin.site.site_header, "site_title": admin.site.site_title}
