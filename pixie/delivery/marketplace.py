"""A workspace's Claude Code plugin marketplace: each installed bundle one plugin carrying
the workspace's heads of its advertised skills, and one more plugin, named for the
workspace, for its advertised skills outside any bundle (written here, imported and
promoted), so that nothing an agent's prompt uses is missing from Claude Code.

A plugin's archive is a zip like a skill's (archives.py: sorted, stored, fixed date, unix
modes): ``.claude-plugin/plugin.json`` and ``skills/<name>/…`` at its root. Its version is
``<bundle version>+<12 hex>``, the hex a digest over its skills' archive digests (not over
the plugin archive, which holds plugin.json and so the version itself): it changes when a
skill's content does and never otherwise, which is what makes Claude Code update it.

Per-agent pins and overrides cannot be said in a marketplace: it serves the workspace's
heads, as a workspace token's index does (the page says so).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from catalog.bundle_files import SKILL_FILE
from catalog.models import Installation
from pixie.core.models import Workspace

from .archives import blobs_of, stored_archive, stored_digests
from .index import Entry, workspace_indexes
from .models import SkillArchive

# Bumped if the plugin archive's layout changes: a new key builds new archives.
PLUGIN_LAYOUT = b"pixie-claude-plugin-zip-1"
MANIFEST = ".claude-plugin/plugin.json"
NO_BUNDLE_VERSION = "0.0.0"


@dataclass
class Plugin:
    name: str
    description: str
    bundle_version: str
    author: str
    skills: list[Entry] = field(default_factory=list)
    digest: str = ""  # of the plugin's archive

    @property
    def version(self) -> str:
        skills = hashlib.sha256(" ".join(e.digest for e in self.skills).encode()).hexdigest()
        return f"{self.bundle_version}+{skills[:12]}"

    @property
    def manifest(self) -> bytes:
        """plugin.json, written the same way every time."""
        return (
            json.dumps(
                {
                    "name": self.name,
                    "version": self.version,
                    "description": self.description,
                    "author": {"name": self.author},
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        ).encode()

    @property
    def content_key(self) -> str:
        key = hashlib.sha256(PLUGIN_LAYOUT)
        key.update(b"\0" + hashlib.sha256(self.manifest).hexdigest().encode())
        for entry in self.skills:
            key.update(f"\0{entry.slug}\0{entry.content.content_key}".encode())
        return key.hexdigest()

    @property
    def archive_path(self) -> str:
        return f"claude/plugins/{self.name}/{self.digest}.zip"


@dataclass
class Marketplace:
    name: str
    description: str
    owner: str
    plugins: list[Plugin]
    left_out: list[Entry]

    def document(self, archive_url) -> dict:
        """marketplace.json; ``archive_url(plugin)``: the absolute https URL of its zip."""
        return {
            "name": self.name,
            "description": self.description,
            "owner": {"name": self.owner},
            "plugins": [
                {
                    "name": plugin.name,
                    "description": plugin.description,
                    "version": plugin.version,
                    "author": {"name": plugin.author},
                    "source": {
                        "source": "archive",
                        "url": archive_url(plugin),
                        "sha256": plugin.digest,
                    },
                }
                for plugin in self.plugins
            ],
        }


def marketplace_name(workspace) -> str:
    return f"pixie-{workspace.slug}"


def workspace_marketplace(workspace_id: int) -> Marketplace:
    """The workspace's marketplace now: a bounded number of queries (its index's, its
    installations', and the plugin archives' digests)."""
    workspace = Workspace.objects.get(pk=workspace_id)
    index = workspace_indexes([workspace_id])[workspace_id]
    installations = {
        i.pk: i
        for i in Installation.objects.filter(workspace_id=workspace_id).select_related(
            "bundle__publisher", "bundle_version"
        )
    }
    by_installation: dict[int | None, list[Entry]] = {}
    for entry in index.served:
        key = entry.installation_id if entry.installation_id in installations else None
        by_installation.setdefault(key, []).append(entry)
    plugins = []
    for pk, installation in sorted(installations.items(), key=lambda i: i[1].bundle.slug):
        if by_installation.get(pk):
            bundle = installation.bundle
            plugins.append(
                Plugin(
                    name=bundle.slug,
                    description=bundle.description or bundle.name,
                    bundle_version=installation.bundle_version.version,
                    author=bundle.publisher.name,
                    skills=by_installation[pk],
                )
            )
    if by_installation.get(None):
        taken = {plugin.name for plugin in plugins}
        name = workspace.slug if workspace.slug not in taken else f"{workspace.slug}-own"
        plugins.append(
            Plugin(
                name=name,
                description=f"{workspace.name}'s own skills (written there, or imported "
                "and promoted), outside any bundle",
                bundle_version=NO_BUNDLE_VERSION,
                author=workspace.name,
                skills=by_installation[None],
            )
        )
    digests = plugin_digests(plugins)
    for plugin in plugins:
        plugin.digest = digests[plugin.content_key]
    return Marketplace(
        name=marketplace_name(workspace),
        description=f"What the owners of {workspace.name} approved, served by Pixie",
        owner=workspace.name,
        plugins=plugins,
        left_out=index.left_out,
    )


def plugin_digests(plugins: list[Plugin]) -> dict[str, str]:
    """Each plugin archive's digest by content key (archives.stored_digests)."""
    return stored_digests(plugins, build_plugins)


def build_plugins(plugins: list[Plugin]) -> list[SkillArchive]:
    blobs = blobs_of(f for plugin in plugins for e in plugin.skills for f in e.content.files)
    return [stored_archive(plugin.content_key, plugin_entries(plugin, blobs)) for plugin in plugins]


def plugin_entries(plugin: Plugin, blobs: dict[str, bytes]):
    """(path, bytes, executable) of a plugin archive: its manifest, then each skill."""
    yield MANIFEST, plugin.manifest, False
    for entry in plugin.skills:
        folder = f"skills/{entry.slug}"
        yield f"{folder}/{SKILL_FILE}", entry.content.skill_md_bytes, False
        for f in entry.content.files:
            yield f"{folder}/{f.path}", blobs[f.sha256], f.executable


# The environment variable each seat keeps the token in (the snippet names it, never the token).
TOKEN_VARIABLE = "PIXIE_DELIVERY_TOKEN"  # noqa: S105 (a variable's name)


def managed_settings(workspace, site_url: str, plugins, *, strict: bool = False) -> str:
    """The managed-settings JSON an administrator pastes for every Claude Code seat: the
    marketplace, read with the token taken from the environment, and its plugins enabled
    (and, with ``strict``, no other marketplace allowed)."""
    name = marketplace_name(workspace)
    url = f"{site_url}/claude/marketplace.json"
    settings = {
        "extraKnownMarketplaces": {
            name: {
                "source": {
                    "source": "url",
                    "url": url,
                    "headers": {"Authorization": f"Bearer ${{{TOKEN_VARIABLE}}}"},
                },
                "autoUpdate": True,
            }
        },
        "enabledPlugins": {f"{plugin.name}@{name}": True for plugin in plugins},
    }
    if strict:
        settings["strictKnownMarketplaces"] = [{"source": "url", "url": url}]
    return json.dumps(settings, indent=2)
