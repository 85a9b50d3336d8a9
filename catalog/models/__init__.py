from .catalog import (
    Bundle,
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    CatalogReview,
    Publisher,
    SkillPackage,
    SkillVersion,
    Status,
    Tool,
)
from .files import FileBlob, RevisionFile, SkillFile
from .installs import Generation, Installation, Plan
from .keys import PublisherKey
from .stamp import CatalogStamp
from .workspace import SkillRevision, WorkspaceSkill

__all__ = [
    "Bundle",
    "BundleCredential",
    "BundleHost",
    "BundleSkill",
    "BundleVersion",
    "CatalogReview",
    "CatalogStamp",
    "FileBlob",
    "Generation",
    "Installation",
    "Plan",
    "Publisher",
    "PublisherKey",
    "RevisionFile",
    "SkillFile",
    "SkillPackage",
    "SkillRevision",
    "SkillVersion",
    "Status",
    "Tool",
    "WorkspaceSkill",
]
