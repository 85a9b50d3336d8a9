from .catalog import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    Publisher,
    SkillPackage,
    SkillVersion,
    Status,
    Tool,
)
from .installs import Installation, Plan
from .workspace import SkillRevision, WorkspaceSkill

__all__ = [
    "Bundle",
    "BundleCredential",
    "BundleHost",
    "BundleSkill",
    "BundleVersion",
    "Installation",
    "Plan",
    "Publisher",
    "SkillPackage",
    "SkillRevision",
    "SkillVersion",
    "Status",
    "Tool",
    "WorkspaceSkill",
]
