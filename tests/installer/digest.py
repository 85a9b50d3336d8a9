"""A digest of every workspace table a plan can touch, to prove nothing partial remains."""

import hashlib
import json

from agents.models import AgentSkill
from catalog.models import Installation, SkillRevision, WorkspaceSkill
from egress.models import CredentialRequirement, EgressRule

TABLES = [
    WorkspaceSkill,
    SkillRevision,
    Installation,
    EgressRule,
    CredentialRequirement,
    AgentSkill,
]


def workspace_digest() -> str:
    rows = {
        model.__name__: sorted(
            json.dumps(row, sort_keys=True, default=str) for row in model.objects.values()
        )
        for model in TABLES
    }
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
