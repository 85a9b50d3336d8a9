"""Reads for delivery's pages and API: a workspace's tokens, what each serves now, its
clients, what each client holds, and who is behind what the owners approved."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db.models import Count

from catalog.models import BundleSkill, Generation, Plan, SkillRevision

from .index import Index, tokens_indexes
from .models import ClientFetch, DeliveryClient, DeliveryToken

CLIENTS_SHOWN = 200  # the most recently seen; the page says how many more there are
REVOKED_SHOWN = 20  # revoked tokens listed under the live ones, the latest first
ONE_CLIENT = (
    "A client is one token seen from one program at one network (addresses kept to their "
    "/24 or /48): many machines behind one address with one token count as one client."
)
PLAN_MADE = {SkillRevision.Origin.CATALOG, SkillRevision.Origin.MERGE}
_VERBS = {
    Plan.Kind.INSTALL: "installed",
    Plan.Kind.UPGRADE: "upgraded to",
    Plan.Kind.ROLLBACK: "rolled back to",
    Plan.Kind.REPOINT: "repointed to",
}


@dataclass
class Holding:
    """What a client holds of one skill: the revision it last fetched, and whether that is
    still what its token serves."""

    slug: str
    revision: int
    digest: str
    last_seen: object
    from_update: bool
    current: bool = True
    served: bool = True  # False: the token no longer serves this skill at all
    yanked: str = ""  # "2.1.0": it came from a bundle version since yanked

    @property
    def words(self) -> str:
        if not self.served:
            return f"r{self.revision}, no longer delivered"
        return f"r{self.revision}" + ("" if self.current else ", behind")


def client_kind(user_agent: str) -> str:
    """What a client is, from its user agent: Claude Code's plugin manager says so; the
    skills CLI sends Node's own ("node")."""
    if user_agent.startswith("Claude-Code"):
        return "Claude Code"
    if user_agent == "node" or user_agent.startswith("node/"):
        return "the skills CLI (node)"
    return user_agent or "no user agent"


@dataclass
class ClientRow:
    client: DeliveryClient
    token: DeliveryToken
    holdings: list[Holding] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return client_kind(self.client.user_agent)

    @property
    def behind(self) -> list[Holding]:
        return [h for h in self.holdings if not h.current]

    @property
    def yanked(self) -> list[Holding]:
        return [h for h in self.holdings if h.yanked]


@dataclass
class Behind:
    """One served skill some clients do not hold yet: "2 clients behind since plan #41
    upgraded to 2.2.0"."""

    slug: str
    clients: int
    since: str

    @property
    def words(self) -> str:
        who = "1 client" if self.clients == 1 else f"{self.clients:,} clients"
        return f"@{self.slug}: {who} behind {self.since}".rstrip()


@dataclass
class Overview:
    tokens: list[DeliveryToken]
    revoked: list[DeliveryToken]
    indexes: dict[int, Index]
    clients: list[ClientRow]
    more_clients: int
    behind: list[Behind]

    @property
    def kinds(self) -> list[tuple[str, int]]:
        """How many of the clients shown are of each kind, the most first."""
        return Counter(row.kind for row in self.clients).most_common()

    @property
    def left_out(self) -> list[tuple[DeliveryToken, list]]:
        return [
            (token, self.indexes[token.pk].left_out)
            for token in self.tokens
            if self.indexes[token.pk].left_out
        ]


def delivery_overview(workspace, agent=None) -> Overview:
    """Everything delivery's page shows for ``workspace`` (or one ``agent`` of it), in a
    bounded number of queries whatever the tokens, clients and skills."""
    tokens = DeliveryToken.objects.filter(workspace=workspace).select_related(
        "agent", "created_by", "revoked_by", "workspace"
    )
    if agent is not None:
        tokens = tokens.filter(agent=agent)
    live = list(tokens.filter(revoked_at=None).order_by("agent__name", "name", "pk"))
    revoked = list(tokens.exclude(revoked_at=None).order_by("-revoked_at")[:REVOKED_SHOWN])
    everyone = live + revoked
    indexes = tokens_indexes(everyone)
    by_pk = {token.pk: token for token in everyone}
    clients = DeliveryClient.objects.filter(token__in=everyone).order_by("-last_seen", "pk")
    counts = dict(
        DeliveryClient.objects.filter(token__in=everyone)
        .values_list("token_id")
        .annotate(n=Count("pk"))
        .values_list("token_id", "n")
    )
    for token in everyone:
        token.client_count = counts.get(token.pk, 0)
    shown = list(clients[:CLIENTS_SHOWN])
    rows = [ClientRow(client=c, token=by_pk[c.token_id]) for c in shown]
    _holdings(rows, indexes)
    return Overview(
        tokens=live,
        revoked=revoked,
        indexes=indexes,
        clients=rows,
        more_clients=max(0, sum(counts.values()) - len(shown)),
        behind=_behind(rows, indexes),
    )


def _holdings(rows: list[ClientRow], indexes: dict[int, Index]) -> None:
    """Each client's latest fetch of each skill (one query), compared with what its token
    serves now; marked when it came from a bundle version since yanked (one query)."""
    if not rows:
        return
    by_client = {row.client.pk: row for row in rows}
    fetches = (
        ClientFetch.objects.filter(client_id__in=by_client)
        .select_related("skill", "revision")
        .order_by("client_id", "skill__slug", "-last_seen", "-pk")
    )
    seen = set()
    upstream: dict[int, list[Holding]] = defaultdict(list)
    for fetch in fetches:
        if (fetch.client_id, fetch.skill_id) in seen:
            continue
        seen.add((fetch.client_id, fetch.skill_id))
        row = by_client[fetch.client_id]
        served = {e.slug: e.digest for e in indexes[row.token.pk].served}
        holding = Holding(
            slug=fetch.skill.slug,
            revision=fetch.revision.number,
            digest=fetch.digest,
            last_seen=fetch.last_seen,
            from_update=fetch.update_check,
            served=fetch.skill.slug in served,
            current=served.get(fetch.skill.slug) == fetch.digest,
        )
        row.holdings.append(holding)
        if fetch.revision.upstream_id:
            upstream[fetch.revision.upstream_id].append(holding)
    if upstream:
        _mark_yanked(upstream)


def _mark_yanked(upstream: dict[int, list[Holding]]) -> None:
    """A skill version is yanked for a client when every bundle version carrying it is."""
    carriers: dict[int, list[tuple[str, bool]]] = defaultdict(list)
    rows = BundleSkill.objects.filter(skill_version_id__in=upstream).values_list(
        "skill_version_id", "bundle_version__version", "bundle_version__yanked_at"
    )
    for skill_version_id, version, yanked_at in rows:
        carriers[skill_version_id].append((version, yanked_at is not None))
    for skill_version_id, holdings in upstream.items():
        found = carriers.get(skill_version_id, [])
        if found and all(yanked for _, yanked in found):
            for holding in holdings:
                holding.yanked = ", ".join(sorted(version for version, _ in found))


def _behind(rows: list[ClientRow], indexes: dict[int, Index]) -> list[Behind]:
    """Per served skill, how many clients hold something older, and since which plan
    (one query for the revisions served, one for their installations' generations)."""
    counts: Counter = Counter()
    current: dict[str, int] = {}
    for row in rows:
        entries = {e.slug: e for e in indexes[row.token.pk].served}
        for holding in row.behind:
            if holding.slug in entries:
                counts[holding.slug] += 1
                current[holding.slug] = entries[holding.slug].revision_id
    if not counts:
        return []
    revisions = SkillRevision.objects.filter(pk__in=current.values()).select_related("skill")
    since = _since({revision.pk: revision for revision in revisions})
    return [
        Behind(slug=slug, clients=count, since=since.get(current[slug], ""))
        for slug, count in sorted(counts.items())
    ]


def _since(revisions: dict) -> dict[int, str]:
    """For each revision, the plan whose apply made it ("since plan #41 upgraded to
    2.2.0"), or the revision's own date for a local edit."""
    installations = {r.skill.installation_id for r in revisions.values() if r.skill.installation_id}
    generations = defaultdict(list)
    found = (
        Generation.objects.filter(installation_id__in=installations)
        .select_related("plan", "bundle_version")
        .order_by("applied_at")
    )
    for generation in found:
        generations[generation.installation_id].append(generation)
    words = {}
    for pk, revision in revisions.items():
        words[pk] = f"since r{revision.number} of {revision.created_at:%Y-%m-%d}"
        if revision.origin not in PLAN_MADE:
            continue
        # An apply stamps its generation when it starts, then writes its revisions: the
        # plan that made a revision is the last generation stamped before it.
        made_by = None
        for generation in generations.get(revision.skill.installation_id, []):
            if generation.applied_at <= revision.created_at:
                made_by = generation
        if made_by is not None:
            verb = _VERBS.get(made_by.plan.kind, "applied")
            words[pk] = f"since plan #{made_by.plan_id} {verb} {made_by.bundle_version.version}"
    return words
