"""What the agents' API reads and writes: agents, their attachments and turns."""

from rest_framework import serializers

from agents import services
from agents.models import Agent, AgentSkill, Turn
from pixie.core.web.api import StrictSerializer


class AttachmentSerializer(serializers.ModelSerializer):
    skill = serializers.CharField(source="skill.slug")
    pinned_revision = serializers.IntegerField(
        source="pinned_revision.number", default=None, allow_null=True
    )
    latest_revision = serializers.IntegerField(source="skill.head.number")
    overridden = serializers.SerializerMethodField()

    class Meta:
        model = AgentSkill
        fields = [
            "position",
            "skill",
            "enabled",
            "pinned_revision",
            "latest_revision",
            "overridden",
        ]

    def get_overridden(self, attachment) -> bool:
        return attachment.override_id is not None


class AgentSerializer(serializers.ModelSerializer):
    skills = AttachmentSerializer(source="agent_skills", many=True)

    class Meta:
        model = Agent
        fields = ["slug", "name", "system_prompt", "skills"]


class AgentCreateSerializer(StrictSerializer):
    # Shapes and limits are the service's to check, in its words.
    slug = serializers.CharField(max_length=200)
    name = serializers.CharField(max_length=400)
    system_prompt = serializers.CharField(
        max_length=services.PROMPT_MAX * 2, required=False, default="", allow_blank=True
    )


class AgentChangeSerializer(StrictSerializer):
    name = serializers.CharField(max_length=400, required=False)
    system_prompt = serializers.CharField(
        max_length=services.PROMPT_MAX * 2, required=False, allow_blank=True
    )


class AttachSerializer(StrictSerializer):
    skill = serializers.SlugField(max_length=64)
    pinned = serializers.BooleanField(default=True)


class AttachmentChangeSerializer(StrictSerializer):
    enabled = serializers.BooleanField(required=False)
    pinned_revision = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    # The override's ceiling is in bytes (the catalog's per-file limit); the service checks it.
    override = serializers.CharField(required=False, allow_null=True)


class OrderSerializer(StrictSerializer):
    order = serializers.ListField(child=serializers.SlugField(max_length=64), max_length=500)


class PromoteSerializer(StrictSerializer):
    slug = serializers.SlugField(max_length=64)
    name = serializers.CharField(max_length=80)
    version = serializers.CharField(max_length=64, default="1.0.0")
    description = serializers.CharField(max_length=400, required=False, default="")


class TurnFinishSerializer(StrictSerializer):
    outcome = serializers.ChoiceField(choices=["succeeded", "failed"])


class TurnSerializer(serializers.ModelSerializer):
    agent = serializers.CharField(source="agent.slug")
    skills = serializers.SerializerMethodField()

    class Meta:
        model = Turn
        fields = ["id", "agent", "outcome", "started_at", "finished_at", "skills"]

    def get_skills(self, turn) -> list[dict]:
        return [
            {
                "position": ts.position,
                "skill": ts.revision.skill.slug,
                "revision": ts.revision.number,
                "body": ts.override.body if ts.override else ts.revision.body,
                "overridden": ts.override_id is not None,
            }
            for ts in turn.turn_skills.all()
        ]
