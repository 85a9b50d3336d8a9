"""Synthetic fleets of agents pinned behind, for load tests and benchmarks.

Built with bulk inserts: 100,000 attachments in a few seconds.
"""

from agents.models import Agent, AgentSkill
from catalog.models import SkillRevision, WorkspaceSkill


def make_fleet(workspace, *, agents: int, skills: int, actor):
    """`skills` skills with two catalog revisions each; every agent pinned to revision 1."""
    made = WorkspaceSkill.objects.bulk_create(
        WorkspaceSkill(workspace=workspace, slug=f"fleet-skill-{i}") for i in range(skills)
    )
    old, new = (
        SkillRevision.objects.bulk_create(
            SkillRevision(
                skill=s,
                number=number,
                name=s.slug,
                short_description="Fleet.",
                body=f"Version {number}.",
                origin="catalog",
                created_by=actor,
            )  # fmt: skip
            for s in made
        )
        for number in (1, 2)
    )
    for skill, head in zip(made, new, strict=True):
        skill.head = head
    WorkspaceSkill.objects.bulk_update(made, ["head"])
    fleet = Agent.objects.bulk_create(
        Agent(workspace=workspace, slug=f"fleet-agent-{i}", name=f"Fleet agent {i}")
        for i in range(agents)
    )
    AgentSkill.objects.bulk_create(
        (
            AgentSkill(agent=agent, skill=skill, position=position, pinned_revision=revision)
            for agent in fleet
            for position, (skill, revision) in enumerate(zip(made, old, strict=True))
        ),
        batch_size=5000,
    )
    return made, old, new
