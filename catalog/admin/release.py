"""Publishing and yanking bundle versions in the admin, each after a confirmation that
shows what it touches.

Mixed into BundleVersionAdmin: its list's actions and its page's Publish and Yank buttons
(which post the same action for one version) first show a confirmation page: the
versions, the installations on each (and the agents pinned to them), and for a yank the
reason, which is required. A refusal (no reason, a service's) shows that page again with
the selection and what was typed kept, never an emptied list. What the impact is comes
from a layer above catalog through the ``release_impact`` hook (pixie.installer).
"""

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.template.response import TemplateResponse

from catalog.models import Status
from catalog.services import bundle_version_publish, bundle_version_yank
from catalog.services.findings import bundle_version_findings
from catalog.services.publishing import YANK_REASON_MAX
from pixie.core.errors import PixieError
from pixie.core.web.pages import report


class ReleaseActions:
    # Set by pixie.installer: versions -> {pk: {"installations", "workspaces", ...}}.
    release_impact = None

    actions = ["publish", "yank"]

    @admin.action(description="Publish selected bundle versions…", permissions=["change"])
    def publish(self, request, queryset):
        return self._release(request, queryset, "publish")

    @admin.action(description="Yank selected bundle versions…", permissions=["change"])
    def yank(self, request, queryset):
        return self._release(request, queryset, "yank")

    def _release(self, request, queryset, action: str):
        versions = list(queryset.select_related("bundle__publisher").order_by("bundle__name"))
        reason = request.POST.get("reason", "").strip()
        # Confirmed: the service decides (a yank needs a reason); a refusal shows this
        # page again, its selection and the words typed kept.
        if request.POST.get("post") == "yes" and self._release_each(
            request, versions, action, reason
        ):
            return None  # back to the list, with what was done in messages
        return self._release_page(request, versions, action, reason)

    def _release_each(self, request, versions, action: str, reason: str) -> list:
        done = []
        for version in versions:
            try:
                if action == "publish":
                    bundle_version_publish(
                        bundle_version=version,
                        actor=request.user,
                        findings_override=request.POST.get("override", ""),
                    )
                else:
                    bundle_version_yank(bundle_version=version, actor=request.user, reason=reason)
                done.append(version)
            except PixieError as exc:
                report(request, exc)
        if done:
            verb = "Published" if action == "publish" else "Yanked"
            names = ", ".join(str(version) for version in done)
            self.message_user(request, f"{verb} {names}.", messages.SUCCESS)
        return done

    def _release_page(self, request, versions, action, reason):
        impact = self.release_impact(versions) if self.release_impact else {}
        movable = Status.DRAFT if action == "publish" else Status.PUBLISHED
        rows = [
            {
                "version": v,
                "impact": impact.get(v.pk),
                "ready": v.status == movable,
                "findings_id": f"findings-{v.pk}",
                # What a person should weigh in its skills' text, before it is published.
                "findings": bundle_version_findings(v)
                if action == "publish" and v.status == movable
                else [],
            }
            for v in versions
        ]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": ("Publish" if action == "publish" else "Yank") + " bundle versions",
            "action": action,
            "rows": rows,
            "reason": reason,
            "reason_max": YANK_REASON_MAX,
            "override": request.POST.get("override", ""),
            "refusing": any(f["severity"] == "refuse" for row in rows for f in row["findings"]),
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/catalog/bundleversion/release.html", context)
