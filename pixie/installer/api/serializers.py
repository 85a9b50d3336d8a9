"""Plans and installations as the API shows them, and what asking for a plan takes."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from catalog.api.serializers import SignatureSerializer
from catalog.models import Generation, Installation, Plan
from catalog.services.signing import signature_summary
from pixie.core.models import PolicyLevel
from pixie.core.web.api import StrictSerializer
from pixie.installer.plan_core import FORK_CHOICES
from pixie.installer.plan_kinds import KINDS, kind_of
from pixie.installer.policy import DAYS_RANGE, SEVERITY_WORDS, PolicyRule, plan_policy
from pixie.installer.steps import FindingStep, Step


class PlanRequestSerializer(StrictSerializer):
    kind = serializers.ChoiceField(choices=Plan.Kind.choices)
    bundle = serializers.SlugField(max_length=64, required=False)
    version = serializers.CharField(max_length=64, required=False)
    agents = serializers.ListField(
        child=serializers.SlugField(max_length=64), required=False, max_length=200, default=list
    )
    leave_out = serializers.ListField(
        child=serializers.SlugField(max_length=64),
        required=False,
        max_length=200,
        default=list,
        help_text="For an upgrade or a rollback: agents (slugs) not to add its new skills "
        "to. By default every agent that has the bundle's other skills gets them.",
    )
    follow = serializers.ListField(
        child=serializers.SlugField(max_length=64),
        required=False,
        max_length=200,
        default=list,
        help_text="For an install: agents (slugs, among `agents`) whose new skills follow the "
        "latest revision, so that your edits and later upgrades reach them at once. The others "
        "are pinned to the new revisions until you repoint them.",
    )
    fork_choices = serializers.DictField(
        child=serializers.ChoiceField(choices=FORK_CHOICES),
        required=False,
        default=dict,
    )
    generation = serializers.IntegerField(
        min_value=1,
        max_value=2**31 - 1,
        required=False,
        help_text="For a rollback: the generation of the installation to return to.",
    )

    def validate(self, attrs):
        problems = KINDS[attrs["kind"]].request_problems(
            bundle=attrs.get("bundle"), version=attrs.get("version"),
            generation=attrs.get("generation"),
        )  # fmt: skip
        if problems:
            raise serializers.ValidationError({name: [why] for name, why in problems.items()})
        return attrs


class RejectSerializer(StrictSerializer):
    reason = serializers.CharField(max_length=400)


class PlanSerializer(serializers.ModelSerializer):
    bundle = serializers.SerializerMethodField()
    version = serializers.CharField(source="bundle_version.version", default=None, allow_null=True)
    created_by = serializers.CharField(source="created_by.username", default=None, allow_null=True)
    decided_by = serializers.CharField(source="decided_by.username", default=None, allow_null=True)
    taken_over_by = serializers.CharField(
        source="taken_over_by.username", default=None, allow_null=True,
        help_text="The owner who took the plan over after its asker left.",
    )  # fmt: skip
    progress = serializers.SerializerMethodField()
    generation = serializers.SerializerMethodField()
    steps = serializers.SerializerMethodField()
    signature = serializers.SerializerMethodField()
    findings = serializers.SerializerMethodField()
    policy = serializers.SerializerMethodField()

    class Meta:
        model = Plan
        fields = [
            "id",
            "kind",
            "status",
            "progress",
            "bundle",
            "version",
            "signature",
            "findings",
            "policy",
            "generation",
            "summary",
            "expands_reach",
            "steps",
            "error",
            "reject_reason",
            "created_by",
            "prepared_because",
            "created_at",
            "asker_left_at",
            "taken_over_by",
            "decided_by",
            "decided_at",
            "finished_at",
        ]

    def get_generation(self, plan) -> int | None:
        """For a rollback: the generation of the installation it returns to."""
        return kind_of(plan).generation(plan)

    def get_steps(self, plan) -> list[Step]:
        """Every effect of the plan, one step each, of the types in pixie.installer.steps."""
        return plan.steps

    def get_progress(self, plan) -> dict | None:
        return kind_of(plan).progress(plan)

    @extend_schema_field(SignatureSerializer(allow_null=True))
    def get_signature(self, plan) -> dict | None:
        """Who signed the version the plan brings (checked again when it is applied)."""
        if not plan.bundle_version_id or not kind_of(plan).signed:
            return None
        return SignatureSerializer(signature_summary(plan.bundle_version)).data

    def get_findings(self, plan) -> list[FindingStep]:
        """What a person should weigh in the text the plan brings: its ``finding`` steps."""
        return [step for step in plan.steps if step["type"] == "finding"]

    def get_policy(self, plan) -> list[PolicyRule]:
        """The workspace's approval rules: for a proposed plan, as they stand for the user
        asking (what would block their approval); once decided, as they were evaluated at
        approval, with who satisfied each (docs/APPROVAL_POLICY.md)."""
        request, view = self.context.get("request"), self.context.get("view")
        if request is None:
            return list(plan.policy or [])
        workspace = view.workspace() if hasattr(view, "workspace") else None
        return plan_policy(
            plan, viewer=request.user, role=getattr(view, "role", None), workspace=workspace
        )

    def get_bundle(self, plan) -> str | None:
        if plan.bundle_version_id:
            return plan.bundle_version.bundle.slug
        return plan.installation.bundle.slug if plan.installation_id else None


class PlanSummarySerializer(PlanSerializer):
    class Meta(PlanSerializer.Meta):
        fields = [f for f in PlanSerializer.Meta.fields if f != "steps"]


LEVEL_HELP = "off, advisory (shown on the plan) or required (blocks approval)"


class PolicySerializer(serializers.Serializer):
    """A workspace's approval policy (pixie.installer.policy): one level a rule."""

    second_owner = serializers.ChoiceField(
        choices=PolicyLevel.choices,
        help_text=f"A plan that expands reach needs an owner other than its asker: {LEVEL_HELP}.",
    )
    expiry = serializers.ChoiceField(
        choices=PolicyLevel.choices,
        help_text=f"A plan waiting longer than expiry_days for approval: {LEVEL_HELP}; "
        "required makes it stale.",
    )
    expiry_days = serializers.IntegerField(min_value=DAYS_RANGE[0], max_value=DAYS_RANGE[1])
    findings = serializers.ChoiceField(
        choices=PolicyLevel.choices,
        help_text=f"A plan bringing findings of findings_severity or worse: {LEVEL_HELP}.",
    )
    findings_severity = serializers.ChoiceField(
        choices=list(SEVERITY_WORDS.items()),
        help_text="warning (a warning or worse) or refuse (only what refused publishing).",
    )


class PolicyChangeSerializer(StrictSerializer, PolicySerializer):
    """Any of the settings; those left out stay as they are."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


class GenerationSerializer(serializers.ModelSerializer):
    version = serializers.CharField(source="bundle_version.version")
    plan = serializers.IntegerField(source="plan_id", help_text="The plan that made it.")
    kind = serializers.ChoiceField(source="plan.kind", choices=Plan.Kind.choices)
    by = serializers.CharField(source="plan.decided_by.username", default=None, allow_null=True)

    class Meta:
        model = Generation
        fields = ["number", "version", "kind", "plan", "summary", "applied_at", "by"]


class InstallationSerializer(serializers.ModelSerializer):
    bundle = serializers.CharField(source="bundle.slug")
    version = serializers.CharField(source="bundle_version.version")
    installed_by = serializers.CharField(
        source="installed_by.username", default=None, allow_null=True
    )
    generations = GenerationSerializer(
        source="latest_generations",
        many=True,
        read_only=True,
        help_text="The latest generations, newest first (each applied plan, numbered from 1, "
        "the install); all of them page at …/installations/{bundle}/generations/. "
        '"Roll back to generation N" is POST …/plans/ {"kind": "rollback", "bundle", '
        '"generation"}.',
    )
    generation_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Installation
        fields = [
            "bundle",
            "version",
            "installed_at",
            "installed_by",
            "generation_count",
            "generations",
        ]
