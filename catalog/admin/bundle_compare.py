"""Two versions of a bundle compared, on the bundle's page.

Mixed into BundleAdmin: whoever reads the bundle (operators, auditors, the members of a
workspace that may install it) reads it, for the versions they may see
(selectors.visible_versions); nothing here writes.
"""

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.urls import reverse

from catalog.bundle_history import bundle_compare
from catalog.diff_display import file_views, side_by_side
from catalog.selectors import visible_versions
from catalog.validators import version_key
from pixie.core.errors import ValidationFailed
from pixie.core.web.pages import AdminPages


class BundleComparePages(AdminPages):
    def compare_urls(self):
        return [
            self.page_path(
                "<int:bundle_id>/compare/", self.bundle_compare_view, "catalog_bundle_compare"
            )
        ]

    def bundle_compare_view(self, request, bundle_id):
        if not self.has_view_permission(request):
            raise PermissionDenied
        bundle = get_object_or_404(self.get_queryset(request), pk=bundle_id)
        compare_url = reverse("admin:catalog_bundle_compare", args=[bundle.pk])
        title = f"Compare versions of {bundle.name}"
        context = {
            "bundle": bundle,
            "compare_url": compare_url,
            "versions": sorted(
                visible_versions(request.user)
                .filter(bundle=bundle)
                .values_list("version", flat=True),
                key=version_key,
                reverse=True,
            ),
        }
        try:
            comparison = bundle_compare(
                user=request.user,
                slug=bundle.slug,
                before=request.GET.get("from"),
                after=request.GET.get("to"),
            )
        except ValidationFailed as exc:
            context["problems"] = exc.problems
            return self.render_page(request, "admin/catalog/bundle/compare.html", title, **context)
        skills = []
        for skill in comparison.skills:
            changes = [
                {"label": change.label, "diff_html": side_by_side(change.before, change.after)}
                for change in skill.changed_fields
            ]
            skills.append({"skill": skill, "changes": changes, "files": file_views(skill.files)})
        context.update(
            comparison=comparison,
            skills=skills,
            notes_html=side_by_side(comparison.notes.before, comparison.notes.after),
            permalink=f"{compare_url}?from={comparison.before.version}"
            f"&to={comparison.after.version}",
        )
        return self.render_page(request, "admin/catalog/bundle/compare.html", title, **context)
