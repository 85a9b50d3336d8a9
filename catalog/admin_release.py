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

from pixie.admin_pages import report
from pixie.errors import PixieError

from .models import Status
from .services import bundle_version_publish, bundle_version_yank

REASON_MAX = 400


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
        problems = []
        if request.POST.get("post") == "yes":
            if action == "yank" and not reason:
                problems.append("Say why the version is yanked: the reason is shown to "
                                "every workspace that runs it.")  # fmt: skip
            elif len(reason) > REASON_MAX:
                problems.append(f"The reason is {len(reason)} characters; at most {REASON_MAX}.")
            else:
                done = self._release_each(request, versions, action, reason)
                if done:
                    return None  # back to the list, with what was done in messages
        return self._release_page(request, versions, action, reason, problems)

    def _release_each(self, request, versions, action: str, reason: str) -> list:
        done = []
        for version in versions:
            try:
                if action == "publish":
                    bundle_version_publish(bundle_version=version, actor=request.user)
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

    def _release_page(self, request, versions, action, reason, problems):
        impact = self.release_impact(versions) if self.release_impact else {}
        movable = Status.DRAFT if action == "publish" else Status.PUBLISHED
        rows = [
            {"version": v, "impact": impact.get(v.pk), "ready": v.status == movable}
            for v in versions
        ]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": ("Publish" if action == "publish" else "Yank") + " bundle versions",
            "action": action,
            "rows": rows,
            "reason": reason,
            "reason_max": REASON_MAX,
            "problems": problems,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/catalog/bundleversion/release.html", context)
