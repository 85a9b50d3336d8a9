"""Read a workspace into the plain data the plan core computes over.

A fixed number of queries whatever the sizes of the bundle and the workspace;
`reads` is the part of the workspace the plan depends on, compared again just
before the plan is applied.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json

from django.conf import settings
from django.db.models import (
    BooleanField,
    Case,
    CharField,
    ExpressionWrapper,
    F,
    IntegerField,
    Q,
    Value,
    When,
    prefetch_related_objects,
)
from django.db.models.functions import Coalesce, Length

from agents.models import Agent, AgentSkill
from catalog.finding_rules import guardrail_rules
from catalog.models import (
    BundleCredential,
    BundleHost,
    BundleSkill,
    BundleVersion,
    Installation,
    RevisionFile,
    SkillFile,
    Tool,
    WorkspaceSkill,
)
from catalog.selectors import CONTENTS, blob_texts
from catalog.services.findings import bundle_version_findings
from egress.models import CredentialRequirement, EgressRule
from pixie.core.namespace.engine import slug_candidates
from pixie.installer.plan_core import (
    BundleState,
    CatalogSkill,
    FileInfo,
    InstalledSkill,
    PlanInputs,
    texts_needed,
)


def bundle_state(bundle_version: BundleVersion | int | None) -> BundleState | None:
    """The version's skills, hosts and credentials (accepts a row already fetched)."""
    return bundle_states(bundle_version)[0]


def bundle_states(*bundle_versions: BundleVersion | int | None) -> list[BundleState | None]:
    """bundle_state of each (an upgrade's target and current version): read together, the
    skills in one query and the hosts and credentials in another, whatever their number."""
    ids = [v for v in bundle_versions if v is not None and not isinstance(v, BundleVersion)]
    fetched = BundleVersion.objects.select_related("bundle").in_bulk(ids) if ids else {}
    rows = [fetched[v] if isinstance(v, int) else v for v in bundle_versions]
    present = [v for v in rows if v is not None]
    if not present:
        return list(rows)
    prefetch_related_objects(present, CONTENTS[0])
    reach: dict[int, tuple[list, list]] = {v.pk: ([], []) for v in present}
    for of, version_id, a, b, c, d in _hosts_and_credentials([v.pk for v in present]):
        if of == "host":
            reach[version_id][0].append((a, b, c))
        else:
            reach[version_id][1].append((a, d, c))
    return [
        None
        if version is None
        else BundleState(
            bundle_version_id=version.pk,
            bundle=version.bundle.name,
            version=version.version,
            skills=tuple(catalog_skill(entry.skill_version) for entry in version.skills.all()),
            hosts=tuple(reach[version.pk][0]),
            credentials=tuple(reach[version.pk][1]),
            findings=tuple(bundle_version_findings(version)),
        )
        for version in rows
    ]


def _hosts_and_credentials(version_ids: list[int]):
    """("host", version id, host, port, purpose, None) and ("credential", version id, name,
    0, purpose, host) rows in the order the models' default orderings give: one UNION."""
    no = Value(None, output_field=CharField())
    hosts = (
        BundleHost.objects.filter(bundle_version_id__in=version_ids)
        .annotate(of=Value("host", output_field=CharField()), a=F("host"), b=F("port"),
                  c=F("purpose"), d=no)
        .values_list("of", "bundle_version_id", "a", "b", "c", "d")
    )  # fmt: skip
    credentials = (
        BundleCredential.objects.filter(bundle_version_id__in=version_ids)
        .annotate(of=Value("credential", output_field=CharField()), a=F("name"), b=Value(0),
                  c=F("purpose"), d=F("host"))
        .values_list("of", "bundle_version_id", "a", "b", "c", "d")
    )  # fmt: skip
    return hosts.order_by().union(credentials.order_by(), all=True).order_by("of", "a", "b")


def catalog_skill(skill_version) -> CatalogSkill:
    return CatalogSkill(
        slug=skill_version.package.slug,
        version_id=skill_version.pk,
        version=skill_version.version,
        name=skill_version.name,
        description=skill_version.description,
        body=skill_version.body,
        approvals=tuple(skill_version.approvals),
        frontmatter=skill_version.frontmatter,
        digest=skill_version.digest,
    )


def _installed_skills(workspace, installation, incoming: set[str]) -> dict[str, InstalledSkill]:
    """This installation's skills, and archived ones from an earlier install of the same
    skills (so a reinstall revives them), keyed by the catalog slug they came from."""
    skills = _installed_rows(workspace, installation, incoming).select_related(
        "head__upstream__package"
    )
    found = {}
    for skill in skills:
        head = skill.head
        upstream = head.upstream
        key = upstream.package.slug if upstream else skill.slug
        found[key] = InstalledSkill(
            slug=skill.slug,
            skill_id=skill.pk,
            head_id=head.pk,
            revision_number=head.number,
            name=head.name,
            description=head.short_description,
            body=head.body,
            frontmatter=head.frontmatter,
            upstream=catalog_skill(upstream) if upstream else None,
            approvals=tuple(head.approvals),
            origin=head.origin,
        )
    return found


def _installed_rows(workspace, installation, incoming: set[str]):
    """The rows _installed_skills reads (and the staleness check, narrower), by pk."""
    skills = WorkspaceSkill.objects.filter(workspace=workspace)
    if installation is not None:
        return skills.filter(installation=installation).order_by("pk")
    return skills.filter(
        installation__isnull=True,
        archived_at__isnull=False,
        head__upstream__package__slug__in=incoming,
    ).order_by("pk")


_FILE_COLUMNS = ("path", "executable", "blob_id", "size", "media_type")


def _with_files(target, installed, occupant_heads: set[int] = frozenset()):
    """The supporting files a plan shows and compares: those of every incoming version (a
    created skill lists what arrives with it; a local skill is reused only with the same
    files), of the installed heads and of the versions they came from; and of the heads
    of the skills of elsewhere holding incoming slugs (returned by revision id, for
    _occupants). One query (a UNION of the versions' and the heads' files) whatever the
    sizes."""
    if not installed and target is None:
        return target, installed, {}
    version_ids = {s.version_id for s in target.skills} if target else set()
    version_ids |= {s.upstream.version_id for s in installed.values() if s.upstream}
    head_ids = {s.head_id for s in installed.values()} | occupant_heads
    of_version = (
        SkillFile.objects.filter(skill_version_id__in=version_ids)
        .order_by()
        .annotate(of=Value("version", output_field=CharField()), owner=F("skill_version_id"))
        .values_list("of", "owner", *_FILE_COLUMNS)
    )
    of_head = (
        RevisionFile.objects.filter(revision_id__in=head_ids)
        .order_by()
        .annotate(of=Value("head", output_field=CharField()), owner=F("revision_id"))
        .values_list("of", "owner", *_FILE_COLUMNS)
    )
    found: dict[tuple[str, int], list[FileInfo]] = {}
    for of, owner, *row in of_version.union(of_head, all=True):
        found.setdefault((of, owner), []).append(FileInfo(*row))
    for files in found.values():
        files.sort(key=lambda f: f.path)

    def filed(skill):
        return dataclasses.replace(skill, files=tuple(found.get(("version", skill.version_id), ())))

    if target is not None:
        target = dataclasses.replace(
            target,
            skills=tuple(filed(s) for s in target.skills),
        )
    installed = {
        key: dataclasses.replace(
            skill,
            files=tuple(found.get(("head", skill.head_id), ())),
            upstream=filed(skill.upstream) if skill.upstream else None,
        )
        for key, skill in installed.items()
    }
    return target, installed, {o: found.get(("head", o), []) for o in occupant_heads}


def _texts(inputs: PlanInputs) -> PlanInputs:
    """The text of the changed text files the plan diffs, in one query (none if none)."""
    needed = texts_needed(inputs)
    if not needed:
        return inputs
    return dataclasses.replace(inputs, texts=blob_texts(needed))


def read_plan_inputs(
    *,
    workspace,
    kind: str,
    bundle_version: BundleVersion | int | None,
    installation: Installation | None,
    agent_ids: list[int],
    fork_choices: dict[str, str],
    leave_out: list[int] | tuple = (),
    following: list[int] | tuple = (),
    recommend: str = "",
    only_slugs: set[str] | None = None,
    diffs: bool = True,
) -> tuple[PlanInputs, dict]:
    """The plan's inputs and the reads it depends on. ``only_slugs`` (with the bundle's
    own) narrows the namespace read, for a check that needs only those slugs' reads;
    ``diffs=False`` skips reading the text of changed files (a check needs no diffs).

    Otherwise the namespace is read where the bundle can collide: its slugs and, for each
    of its skills that collides, the first RESLUG_CANDIDATES re-slug candidates of its
    name (one more query), by index, never the whole set; the plan core asks for more
    (SlugsUnread, then read_more_candidates) in the rare case it needs them."""
    target, current = bundle_states(
        bundle_version if kind != "uninstall" else None,
        installation.bundle_version_id if installation else None,
    )
    incoming = {s.slug for s in target.skills} if target else set()
    installed = _installed_skills(workspace, installation, incoming)
    mine = {s.skill_id for s in installed.values()}
    if only_slugs is not None:
        slugs = only_slugs | incoming
    else:
        slugs = incoming | {s.slug for s in installed.values()}
    occupied, heads, occupying = _namespace(workspace, mine, slugs, occupying=incoming)
    target, installed, occupant_files = _with_files(
        target, installed, {head_id for _id, head_id, *_text in occupying.values()}
    )
    if only_slugs is None:
        # Re-slug candidates only for the skills that collide (usually none: no query).
        taken = set(occupied) | {s.slug for s in installed.values()}
        candidates = {
            slug
            for skill in (target.skills if target else ())
            if skill.slug not in installed and skill.slug in taken
            for slug in itertools.islice(slug_candidates(skill.name), RESLUG_CANDIDATES)
        } - slugs
        if candidates:
            more, more_heads, _none = _namespace(workspace, mine, candidates, tools=False)
            occupied.update(more)
            heads.update(more_heads)
            slugs |= candidates
    egress, needed, credentials = _reach(workspace, installation)
    agents, attached = _chosen_agents(workspace, agent_ids)
    pins, follows, overrides, holders = _agents_using(mine)
    touched = {a for a, _ in agents} | {h for h, _n, _f in holders}
    # What the plan archives: the installation's skills the target does not bring.
    removing = (
        {s.slug for key, s in installed.items() if key not in incoming} if installation else set()
    )
    inputs = PlanInputs(
        kind=kind,
        target=target,
        current=current,
        installed=installed,
        occupied=occupied,
        egress=egress,
        needed_by_others=frozenset(needed),
        credentials=credentials,
        agents=agents,
        pins=pins,
        follows=follows,
        overrides=overrides,
        occupants=_occupants(occupying, occupant_files),
        fork_choices=fork_choices,
        attached=_by_agent(attached),
        holders=holders,
        left_out=frozenset(leave_out),
        following=frozenset(following),
        recommend=recommend,
        # The mention check is the plan's, not the apply's (which re-reads to compare).
        **(_runs(touched) if diffs else {}),
        context_budget=settings.PIXIE_AGENT_CONTEXT_BUDGET_TOKENS if diffs else 0,
        mentions_removed=_mentions_of(touched, removing) if diffs and removing else {},
        rules=guardrail_rules() if diffs else (),
        known=frozenset(slugs),
    )
    if diffs:
        inputs = _texts(inputs)
    reads = _reads(
        installation=installation,
        installed=[(s.slug, s.head_id) for s in installed.values()],
        egress=egress,
        credentials=credentials,
        attached=attached,
        holders=holders,
        heads=heads,
    )
    return inputs, reads


def _reads(*, installation, installed, egress, credentials, attached, holders, heads) -> dict:
    """The reads a plan depends on, from what was read: read_plan_inputs' and the
    staleness check's alike, so the two cannot drift apart."""
    return {
        "installation": installation.bundle_version_id if installation else None,
        "installed": sorted([slug, head_id] for slug, head_id in installed),
        "egress": sorted([h, p, by_plan] for (h, p), by_plan in egress.items()),
        "credentials": sorted(credentials),
        "agents": sorted([a, s] for a, s in attached),
        # Who holds the installation's skills, and how: an upgrade adds its new ones to them.
        "holders": [[agent_id, follows] for agent_id, _name, follows in holders],
        "_heads": heads,  # reduced to the relevant slugs by the caller
    }


def staleness_reads(
    *, workspace, kind: str, bundle_version, installation, agent_ids: list[int], steps: list[dict]
) -> dict:
    """What ``relevant_reads(*read_plan_inputs(...))`` gives for a plan's steps (with
    ``only_slugs=step_slugs(steps)``), reading only what those reads hold: the bundle's
    skill slugs, the installation's skills' slugs and heads, the heads at the slugs the
    plan names, the egress rules and credentials, the chosen agents' attachments and,
    when the plan adds skills to them, the holders. Not the bundles' contents, files,
    findings, tools, occupants, pins or overrides, which the plan's fingerprint does not
    cover. (tests/installer/test_plan_staleness.py holds the two equal.)"""
    version_id = getattr(bundle_version, "pk", bundle_version)
    incoming: set[str] = set()
    if kind != "uninstall" and version_id is not None:
        incoming = {slug for (slug,) in _incoming(version_id)}
    installed: dict[str, tuple[str, int, int]] = {}
    for skill_id, slug, head_id, upstream in _installed_rows(
        workspace, installation, incoming
    ).values_list("pk", "slug", "head_id", "head__upstream__package__slug"):
        # Keyed as _installed_skills keys them: by the catalog slug it came from.
        installed[slug if upstream is None else upstream] = (slug, skill_id, head_id)
    mine = {skill_id for _slug, skill_id, _head in installed.values()}
    _occupied, heads, _none = _namespace(workspace, mine, step_slugs(steps) | incoming, tools=False)
    egress, _needed, credentials = _reach(workspace, installation)
    _agents, attached = _chosen_agents(workspace, agent_ids)
    holders: tuple = ()
    if _adds_to_holders(steps):
        columns = ("agent_id", "agent__name", "skill__slug", "pinned_revision__number")
        holders = _holders(_held(mine).values_list(*columns))
    reads = _reads(
        installation=installation,
        installed=[(slug, head_id) for slug, _skill_id, head_id in installed.values()],
        egress=egress,
        credentials=credentials,
        attached=attached,
        holders=holders,
        heads=heads,
    )
    return _relevant(reads, steps, incoming, {slug for slug, _id, _h in installed.values()})


def _incoming(bundle_version_id: int):
    """The slugs of a bundle version's skills (the staleness check of every apply)."""
    return (
        BundleSkill.objects.filter(bundle_version_id=bundle_version_id)
        .order_by()
        .values_list("skill_version__package__slug")
    )


# Re-slug candidates read for each incoming skill's name at first: base, base-2 ... base-8.
RESLUG_CANDIDATES = 8


def read_more_candidates(workspace, inputs: PlanInputs, reads: dict, name: str, depth: int):
    """``inputs`` and ``reads`` with the first ``depth`` re-slug candidates of ``name``
    read too (the plan core asked: SlugsUnread): one query for the candidates not read
    yet, not the whole of read_plan_inputs again."""
    candidates = set(itertools.islice(slug_candidates(name), depth)) - inputs.known
    if not candidates:
        return inputs, reads
    mine = {s.skill_id for s in inputs.installed.values()}
    more, more_heads, _none = _namespace(workspace, mine, candidates, tools=False)
    reads = {**reads, "_heads": {**reads["_heads"], **more_heads}}
    inputs = dataclasses.replace(
        inputs, occupied={**inputs.occupied, **more}, known=inputs.known | candidates
    )
    return inputs, reads


def _namespace(workspace, mine: set[int], slugs: set[str], tools: bool = True,
               occupying: set[str] = frozenset()):  # fmt: skip
    """Who holds each of ``slugs`` (skills not of this installation), and each such skill's
    head; with ``tools``, every tool too (a mention of a tool resolves). One query: a UNION
    of the tools and the skills read by the (workspace, slug) index. Third: for the
    ``occupying`` slugs (the bundle's), the live skill of elsewhere holding each, with its
    head's text, to reuse one that is identical (_occupants)."""
    no_text = Value(None, output_field=CharField())
    every_tool = (
        Tool.objects.order_by()
        .annotate(of=Value("tool", output_field=CharField()), sid=Value(0), s=F("slug"),
                  hid=Value(None, output_field=IntegerField()), n=no_text, d=no_text, b=no_text)
        .values_list("of", "sid", "s", "hid", "n", "d", "b")
    )  # fmt: skip
    # Only an occupant's head is read: not the text of this installation's own skills.
    occupant = (
        Q(slug__in=occupying, archived_at__isnull=True, head__isnull=False) & ~Q(pk__in=mine)
        if occupying
        else Q(pk__in=[])
    )

    def if_occupant(field):
        return Case(When(occupant, then=F(field)), default=no_text, output_field=CharField())

    # Unordered: the default ordering joins the workspace to sort 10,000 rows for nothing.
    skills = (
        WorkspaceSkill.objects.filter(workspace=workspace, slug__in=slugs)
        .order_by()
        .annotate(of=Value("skill", output_field=CharField()), sid=F("id"), s=F("slug"),
                  hid=F("head_id"))
    )  # fmt: skip
    if occupying:
        skills = skills.annotate(
            n=if_occupant("head__name"),
            d=if_occupant("head__short_description"),
            b=if_occupant("head__body"),
        ).values_list("of", "sid", "s", "hid", "n", "d", "b")
    else:
        skills = skills.annotate(n=no_text, d=no_text, b=no_text).values_list(
            "of", "sid", "s", "hid", "n", "d", "b"
        )
    occupied: dict[str, str] = {}
    heads: dict[str, int | None] = {}
    occupants: dict[str, tuple] = {}
    rows = every_tool.union(skills, all=True) if tools else skills
    for of, skill_id, slug, head_id, name, description, body in rows:
        if of == "tool":
            occupied[slug] = "tool"
            continue
        heads[slug] = head_id
        if skill_id not in mine:
            occupied.setdefault(slug, "skill")
        if body is not None:
            occupants[slug] = (skill_id, head_id, name, description, body)
    return occupied, heads, occupants


def _occupants(found: dict[str, tuple], files: dict[int, list]) -> dict[str, tuple]:
    """The heads of other skills holding incoming slugs (from _namespace), with their
    files (from _with_files): an identical skill is reused only if its files are the
    same too."""
    return {
        slug: (
            skill_id,
            name,
            description,
            body,
            tuple(sorted((f.path, f.executable, f.sha256) for f in files.get(head_id, ()))),
        )
        for slug, (skill_id, head_id, name, description, body) in found.items()
    }


def _reach(workspace, installation):
    """The workspace's egress rules, what other installations need, its credentials: one
    query (a UNION of the four reads, each row tagged with what it is)."""
    workspace_id = getattr(workspace, "pk", workspace)
    rows = _reach_query(workspace_id, None if installation is None else installation.pk)
    egress, needed, credentials = {}, set(), {}
    for of, a, b, c in rows:
        if of == "egress":
            egress[a, b] = bool(c)
        elif of == "host":
            needed.add((a, b))
        elif of == "name":
            needed.add(a)
        else:
            credentials[a] = bool(c)
    return egress, needed, credentials


def _reach_query(workspace_id: int, installation_id: int | None = None):
    others = Installation.objects.filter(workspace_id=workspace_id)
    if installation_id is not None:
        others = others.exclude(pk=installation_id)
    other_versions = others.values("bundle_version_id")

    def tagged(queryset, of: str, a, b, c):
        return (
            queryset.order_by()
            .annotate(of=Value(of, output_field=CharField()), a=a, b=b, c=c)
            .values_list("of", "a", "b", "c")
        )

    no_port, no = Value(0), Value(False, output_field=BooleanField())
    return tagged(
        EgressRule.objects.filter(workspace_id=workspace_id), "egress", F("host"), F("port"),
        ExpressionWrapper(Q(plan__isnull=False), output_field=BooleanField()),
    ).union(
        tagged(BundleHost.objects.filter(bundle_version__in=other_versions), "host",
               F("host"), F("port"), no),
        tagged(BundleCredential.objects.filter(bundle_version__in=other_versions), "name",
               F("name"), no_port, no),
        tagged(CredentialRequirement.objects.filter(workspace_id=workspace_id), "credential",
               F("name"), no_port, F("confirmed")),
        all=True,
    )  # fmt: skip


def _chosen_agents(workspace, agent_ids: list[int]):
    """The agents an install attaches to, and the skills each has already."""
    agents = tuple(
        Agent.objects.filter(workspace=workspace, pk__in=agent_ids)
        .order_by("name", "pk")
        .values_list("pk", "name")
    )
    attached = list(
        AgentSkill.objects.filter(agent_id__in=[a for a, _ in agents])
        .order_by("agent_id", "position", "pk")
        .values_list("agent_id", "skill_id")
    )
    return agents, attached


def _by_agent(attached: list[tuple[int, int]]) -> dict[int, frozenset[int]]:
    has: dict[int, set[int]] = {}
    for agent_id, skill_id in attached:
        has.setdefault(agent_id, set()).add(skill_id)
    return {agent_id: frozenset(ids) for agent_id, ids in has.items()}


def _agents_using(mine: set[int]):
    """Agents using this installation's skills: pinned, following the latest, overriding;
    and each agent holding any of them, by name, with whether it follows them all."""
    overrides = tuple(
        AgentSkill.objects.filter(skill_id__in=mine, override__isnull=False)
        .order_by("agent__name", "position")
        .values_list("agent__name", "skill__slug", "override__number")
    )
    pins, follows = [], []
    columns = ("agent_id", "agent__name", "skill__slug", "pinned_revision__number")
    rows = list(_held(mine).values_list(*columns))
    for _agent_id, agent_name, slug, number in rows:
        if number is None:
            follows.append((agent_name, slug))
        else:
            pins.append((agent_name, slug, number))
    return tuple(pins), tuple(follows), overrides, _holders(rows)


def _held(mine: set[int]):
    """The attachments of this installation's skills, in the holders' order."""
    return AgentSkill.objects.filter(skill_id__in=mine).order_by(
        "agent__name", "agent_id", "position"
    )


def _holders(rows) -> tuple:
    """(agent id, name, follows them all) of each agent in rows of (agent id, agent name,
    anything, pinned revision number), in the order first seen."""
    holders: dict[int, list] = {}
    for agent_id, agent_name, _slug, number in rows:
        holder = holders.setdefault(agent_id, [agent_name, True])
        if number is not None:
            holder[1] = False
    return tuple((agent_id, name, all_follow) for agent_id, (name, all_follow) in holders.items())


def _runs(agent_ids: set[int]) -> dict:
    """What each agent the plan touches runs now (its enabled, live skills), for the
    mention check, and how long each body it runs and each menu line it shows is, for the
    context budget: one query, over those agents only (lengths computed in the database)."""
    runs: dict[int, list] = {}
    sizes: dict[int, dict[str, tuple[int, int]]] = {}
    rows = (
        AgentSkill.objects.filter(
            agent_id__in=agent_ids, enabled=True, skill__archived_at__isnull=True
        )
        .annotate(
            body_chars=Length(
                Coalesce(
                    F("override__body"), F("pinned_revision__body"), F("skill__head__body")
                )
            ),
            menu_chars=Length(F("skill__head__name")) + Length(F("skill__head__short_description")),
        )
        .order_by("agent_id", "position", "pk")
        .values_list(
            "agent_id", "agent__name", "skill__slug", "pinned_revision_id", "override_id",
            "body_chars", "menu_chars", "skill__advertised",
        )
    )  # fmt: skip
    for agent_id, name, slug, pinned, override, body, menu, advertised in rows:
        runs.setdefault(agent_id, [name, []])[1].append(
            (slug, pinned is None, override is not None)
        )
        sizes.setdefault(agent_id, {})[slug] = (body or 0, (menu or 0) if advertised else 0)
    return {
        "runs": {agent_id: (name, tuple(running)) for agent_id, (name, running) in runs.items()},
        "run_sizes": sizes,
    }


def _mentions_of(agent_ids: set[int], removing: set[str]) -> dict:
    """The bodies those agents run (their override, the pinned revision, or the head)
    that may mention a skill the plan removes: one query, narrowed in the database to
    bodies holding "@slug" for one of those slugs, then parsed exactly by the caller."""
    holds = Q()
    for slug in sorted(removing):
        holds |= Q(running_body__contains=f"@{slug}")
    found: dict[int, list] = {}
    for agent_id, slug, body, pinned, override in (
        AgentSkill.objects.filter(
            agent_id__in=agent_ids, enabled=True, skill__archived_at__isnull=True
        )
        .exclude(skill__slug__in=removing)
        .annotate(
            running_body=Coalesce(
                F("override__body"), F("pinned_revision__body"), F("skill__head__body")
            )
        )
        .filter(holds)
        .order_by("agent_id", "position", "pk")
        .values_list("agent_id", "skill__slug", "running_body", "pinned_revision_id", "override_id")
    ):
        # "follows": it runs the head, which the plan may change (then it reads that body).
        found.setdefault(agent_id, []).append((slug, body, pinned is None and override is None))
    return {agent_id: tuple(bodies) for agent_id, bodies in found.items()}


def relevant_reads(reads: dict, steps: list[dict], inputs: PlanInputs) -> dict:
    """Keep only the skills whose slugs the plan depends on, and the holders only when the
    plan adds skills to them."""
    incoming = {s.slug for s in inputs.target.skills} if inputs.target else set()
    return _relevant(reads, steps, incoming, {s.slug for s in inputs.installed.values()})


def _adds_to_holders(steps: list[dict]) -> bool:
    return any(s["type"] in ("agent.gains", "agent.left_out") for s in steps)


def _relevant(reads: dict, steps: list[dict], incoming: set[str], mine: set[str]) -> dict:
    heads = reads.pop("_heads")
    if not _adds_to_holders(steps):
        reads.pop("holders", None)
    slugs = step_slugs(steps) | incoming
    # A skill the plan changes is read to its head revision; any other slug
    # only for whether something holds it.
    reads["skills"] = {
        slug: heads.get(slug) if slug in mine else (slug in heads) for slug in sorted(slugs)
    }
    return reads


def step_slugs(steps: list[dict]) -> set[str]:
    """The slugs a plan's steps name (with the bundle's own, all its reads depend on)."""
    slugs = {s["slug"] for s in steps if "slug" in s}
    return slugs | {s["from"] for s in steps if s["type"] == "skill.reslug"}


def fingerprint(reads: dict) -> str:
    return hashlib.sha256(json.dumps(reads, sort_keys=True).encode()).hexdigest()
