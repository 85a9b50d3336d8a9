from .bundle_load import BundleLoadResult, bundle_load
from .publishing import (
    bundle_version_publish,
    bundle_version_yank,
    skill_package_create,
    skill_version_publish,
)

__all__ = [
    "BundleLoadResult",
    "bundle_load",
    "bundle_version_publish",
    "bundle_version_yank",
    "skill_package_create",
    "skill_version_publish",
]
