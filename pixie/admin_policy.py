"""The workspace's approval policy, as a page: owners set each rule's level, the days a
plan may wait and the severity of findings that count; members read it.

Mixed into WorkspaceAdmin. A change is one service call (pixie.installer.policy), recorded
in the workspace's history; a refusal is shown on the page and changes nothing.
"""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect

from pixie.core.errors import PixieError
from pixie.core.models import PolicyLevel
from pixie.installer.policy import (
    DAYS_RANGE,
    EXPIRY,
    FINDINGS,
    LABELS,
    SECOND_OWNER,
    SEVERITY_WORDS,
    policy_settings,
    policy_update,
    policy_warnings,
)


class PolicyForm(forms.Form):
    second_owner = forms.ChoiceField(
        label=LABELS[SECOND_OWNER],
        choices=PolicyLevel.choices,
        help_text="A plan that adds a host or a credential is approved by an owner other than "
        "the one who asked for it.",
    )
    expiry = forms.ChoiceField(
        label=LABELS[EXPIRY],
        choices=PolicyLevel.choices,
        help_text="Required: a plan that waits longer than the days below becomes stale.",
    )
    expiry_days = forms.IntegerField(
        label="Days a plan may wait", min_value=DAYS_RANGE[0], max_value=DAYS_RANGE[1]
    )
    findings = forms.ChoiceField(
        label=LABELS[FINDINGS],
        choices=PolicyLevel.choices,
        help_text="Findings are what a person should weigh in the text a plan brings.",
    )
    findings_severity = forms.ChoiceField(
        label="Findings that count",
        choices=[(key, words.capitalize()) for key, words in SEVERITY_WORDS.items()],
    )

    def problems(self) -> list[str]:
        """Each error with the label of its field, for the note above the form."""
        return [
            f"{self.fields[name].label}: {error}" if name in self.fields else error
            for name, errors in self.errors.items()
            for error in errors
        ]


class PolicyPages:
    """A page of WorkspaceAdmin (a WorkspacePages)."""

    def policy_urls(self):
        return [
            self.page_path("<int:workspace_id>/policy/", self.policy_view, "pixie_workspace_policy")
        ]

    def policy_view(self, request, workspace_id):
        workspace = self.page_object(request, workspace_id)
        refusal = self.owner_refusal(request, workspace)  # "" for its owners
        form = PolicyForm(initial=policy_settings(workspace))
        if request.method == "POST" and not refusal:
            form = PolicyForm(request.POST)
            if form.is_valid():
                before = policy_settings(workspace)
                try:
                    policy_update(
                        workspace=workspace, actor=request.user, changes=form.cleaned_data
                    )
                except PixieError as exc:
                    self.report(request, exc, form)
                else:
                    policy = f"The approval policy of {workspace.name}"
                    if policy_settings(workspace) != before:
                        messages.success(request, f"{policy} is saved.")
                    else:  # nothing written: said apart from a save
                        messages.warning(request, f"{policy} is unchanged: nothing was saved.")
                    return redirect("admin:pixie_workspace_policy", workspace.pk)
        return self.render_page(
            request,
            "admin/pixie/workspace/policy.html",
            f"Approval policy of {workspace.name}",
            workspace=workspace,
            original=workspace,
            refusal=refusal,
            form=None if refusal else form,
            problems=form.problems() if form.is_bound else [],
            settings=policy_settings(workspace),
            severity_words=SEVERITY_WORDS[workspace.policy_findings_severity],
            warnings=policy_warnings(workspace),
        )
