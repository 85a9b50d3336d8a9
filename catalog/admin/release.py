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
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse

from catalog.models import Status
from catalog.services import bundle_version_publish, bundle_version_yank
from catalog.services.findings import bundle_version_findings
from catalog.services.publishing import YANK_REASON_MAX
from pixie.core.errors import ErrorCode, PixieError
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
        refused: set[int] = set()
        if request.POST.get("post") == "yes":
            done = self._release_each(request, versions, action, reason, refused)
            if len(versions) == 1 and done:  # from the version's page: back to it
                url = reverse("admin:catalog_bundleversion_change", args=[done[0].pk])
                return HttpResponseRedirect(url)
            if done:
                return None  # back to the list, with what was done in messages
        return self._release_page(request, versions, action, reason, refused)

    def _release_each(self, request, versions, action: str, reason: str, refused: set) -> list:
        done = []
        for version in versions:
            try:
                if action == "publish":
                    version = bundle_version_publish(
                        bundle_version=version,
                        actor=request.user,
                        findings_override=request.POST.get("override", ""),
                    )
                else:
                    bundle_version_yank(bundle_version=version, actor=request.user, reason=reason)
                done.append(version)
            except PixieError as exc:
                if exc.code != ErrorCode.FINDINGS_REFUSED:
                    report(request, exc)
                    continue
                # One banner: the findings themselves are listed on the page below it.
                refused.add(version.pk)
                count = len(exc.problems) - 1
                findings = f"{count} findings below refuse" if count != 1 else "1 finding refuses"
                messages.error(
                    request,
                    f"{version} was not published: {findings} publishing. Give the reason to "
                    "publish it anyway, or fix its skills and upload it again.",
                )
        if done:
            verb = "Published" if action == "publish" else "Yanked"
            names = ", ".join(str(version) for version in done)
            self.message_user(request, f"{verb} {names}.", messages.SUCCESS)
        for version in done if action == "publish" else ():
            if not version.in_catalog:
                held = "".join(f" Held because {flag}." for flag in version.catalog_review_flags)
                self.message_user(
                    request,
                    f"{version} awaits review before other workspaces see it (its publisher "
                    f"is not trusted): approve it in the review queue.{held}",
                    messages.WARNING,
                )
        return done

    def release_one_view(self, request, bundle_version_id):
        """The publish confirmation of one version, by its address: the version page's
        Publish… and the upload's "Publish after loading" both lead here."""
        if "publish" not in self.get_actions(request):
            raise PermissionDenied
        version = get_object_or_404(
            self.get_queryset(request).select_related("bundle__publisher"), pk=bundle_version_id
        )
        return self._release_page(request, [version], "publish", "")

    def _release_page(self, request, versions, action, reason, refused=frozenset()):
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
        for row in rows:
            count = len(row["findings"])
            row["findings_heading"] = (
                f"{count} finding{'s' if count != 1 else ''} to read in {row['version']}"
            )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": ("Publish" if action == "publish" else "Yank") + " bundle versions",
            "action": action,
            "rows": rows,
            "reason": reason,
            "reason_max": YANK_REASON_MAX,
            "override": request.POST.get("override", ""),
            "override_refused": bool(refused),
            "refusing": any(f["severity"] == "refuse" for row in rows for f in row["findings"]),
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/catalog/bundleversion/release.html", context)
