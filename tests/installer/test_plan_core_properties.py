"""Properties of the pure planner (pixie.installer.plan_core), over generated workspaces
and bundles: no database, as the namespace core's tests run."""

from hypothesis import given, settings
from hypothesis import strategies as st

from pixie.core.namespace.engine import SLUG_RE, parse_mentions
from pixie.installer.plan_core import (
    BundleState,
    CatalogSkill,
    InstalledSkill,
    PlanInputs,
    compute_plan,
)
from pixie.installer.steps import step_problems
from tests.suite import examples

SLUGS = ["invoice-chase", "dunning", "ledger", "payment-plan", "late-fee", "reminder"]
HOSTS = ["api.ledger.example", "mail.example", "pay.example"]

slugs = st.lists(st.sampled_from(SLUGS), min_size=1, max_size=len(SLUGS), unique=True)


@st.composite
def bundles(draw, version_id_base: int = 100):
    chosen = draw(slugs)
    skills = []
    for index, slug in enumerate(chosen):
        mentioned = draw(st.lists(st.sampled_from(chosen), max_size=3))
        body = f"Do the {slug} work. " + " ".join(f"Then use @{m}." for m in mentioned)
        approvals = draw(
            st.lists(
                st.fixed_dictionaries(
                    {"operation": st.sampled_from(["send-email", "refund"]), "rule": st.just("ask")}
                ),
                max_size=1,
            )
        )
        skills.append(
            CatalogSkill(
                slug=slug,
                version_id=version_id_base + index,
                version="1.0.0",
                name=slug.replace("-", " ").title(),
                description=f"About {slug}.",
                body=body,
                approvals=tuple(approvals),
                digest=f"d-{slug}-{body}",
            )
        )
    hosts = tuple(
        (host, 443, f"reach {host}")
        for host in draw(st.lists(st.sampled_from(HOSTS), unique=True, max_size=2))
    )
    credentials = tuple((f"TOKEN_{i}", host, "auth") for i, (host, _, _) in enumerate(hosts))
    return BundleState(version_id_base, "accounts", "1.0.0", tuple(skills), hosts, credentials)


@st.composite
def installs(draw):
    """An install into a workspace where some incoming slugs are already held."""
    target = draw(bundles())
    incoming = [skill.slug for skill in target.skills]
    held = draw(st.lists(st.sampled_from(incoming), unique=True))
    occupied = {slug: draw(st.sampled_from(["skill", "tool"])) for slug in held}
    return PlanInputs(
        kind="install",
        target=target,
        current=None,
        installed={},
        occupied=occupied,
        egress={},
        needed_by_others=frozenset(),
        credentials={},
        agents=((1, "Collections"),) if draw(st.booleans()) else (),
    )


def installed_from(bundle: BundleState, *, edited: frozenset = frozenset()) -> dict:
    return {
        skill.slug: InstalledSkill(
            slug=skill.slug,
            skill_id=index + 1,
            head_id=index + 1,
            revision_number=2 if skill.slug in edited else 1,
            name=skill.name,
            description=skill.description,
            body=skill.body + (" My own line." if skill.slug in edited else ""),
            frontmatter={},
            upstream=skill,
            approvals=skill.approvals,
        )
        for index, skill in enumerate(bundle.skills)
    }


def upgrade_of(current: BundleState, target: BundleState, edited=frozenset()) -> PlanInputs:
    return PlanInputs(
        kind="upgrade",
        target=target,
        current=current,
        installed=installed_from(current, edited=edited),
        occupied={},
        egress={(host, port): True for host, port, _ in current.hosts},
        needed_by_others=frozenset(),
        credentials={name: True for name, _, _ in current.credentials},
    )


def assert_typed(steps):
    problems = [p for step in steps for p in step_problems(step)]
    assert problems == []


@settings(max_examples=examples(150), deadline=None)
@given(installs())
def test_an_install_lands_every_skill_once_on_a_free_slug(inputs):
    draft = compute_plan(inputs)
    assert_typed(draft.steps)
    created = [s for s in draft.steps if s["type"] == "skill.create"]
    reslugs = {s["from"]: s["to"] for s in draft.steps if s["type"] == "skill.reslug"}
    incoming = sorted(skill.slug for skill in inputs.target.skills)
    assert sorted(s["catalog_slug"] for s in created) == incoming
    landed = [s["slug"] for s in created]
    assert len(set(landed)) == len(landed)
    for slug in landed:
        assert SLUG_RE.fullmatch(slug)
        assert slug not in inputs.occupied  # nothing lands on a held slug
    assert set(reslugs) == set(inputs.occupied)
    # The bundle's mentions follow its re-slugged skills: none points at a held slug.
    for step in created:
        assert not set(parse_mentions(step["body"])) & set(reslugs)


@settings(max_examples=examples(100), deadline=None)
@given(installs())
def test_a_plan_is_the_same_plan_computed_twice(inputs):
    assert compute_plan(inputs).steps == compute_plan(inputs).steps


@settings(max_examples=examples(100), deadline=None)
@given(installs())
def test_reach_grows_exactly_when_the_plan_adds_a_host_a_credential_or_a_rule(inputs):
    draft = compute_plan(inputs)
    grows = any(
        s["type"] == "egress.add"
        or (s["type"] in ("credential.require", "approval.rule") and s["new"])
        for s in draft.steps
    )
    assert draft.expands_reach == grows
    assert draft.expands_reach == bool(inputs.target.hosts or any(
        skill.approvals for skill in inputs.target.skills
    ))  # fmt: skip


@settings(max_examples=examples(100), deadline=None)
@given(bundles())
def test_upgrading_to_the_same_content_changes_nothing(bundle):
    draft = compute_plan(upgrade_of(bundle, bundle))
    assert_typed(draft.steps)
    kinds = {s["type"] for s in draft.steps}
    assert kinds & {"skill.create", "skill.update", "skill.fork", "skill.remove"} == set()
    assert not draft.expands_reach
    assert sum(s["type"] == "skill.unchanged" for s in draft.steps) == len(bundle.skills)


@settings(max_examples=examples(100), deadline=None)
@given(bundles(), st.data())
def test_an_edited_skill_is_a_fork_kept_unless_the_owner_chooses(bundle, data):
    edited = frozenset(data.draw(st.lists(st.sampled_from([s.slug for s in bundle.skills]))))
    newer = BundleState(
        bundle.bundle_version_id + 1000,
        bundle.bundle,
        "2.0.0",
        tuple(
            CatalogSkill(
                **{
                    **skill.__dict__,
                    "body": skill.body + " New line.",
                    "version": "2.0.0",
                    "version_id": skill.version_id + 1000,
                    "digest": skill.digest + "-2",
                }
            )  # fmt: skip
            for skill in bundle.skills
        ),
        bundle.hosts,
        bundle.credentials,
    )
    draft = compute_plan(upgrade_of(bundle, newer, edited=edited))
    assert_typed(draft.steps)
    forks = {s["slug"]: s for s in draft.steps if s["type"] == "skill.fork"}
    updates = {s["slug"] for s in draft.steps if s["type"] == "skill.update"}
    assert set(forks) == edited
    assert updates == {s.slug for s in bundle.skills} - edited
    for fork in forks.values():
        assert fork["choice"] == "keep"  # never overwritten without the owner's choice
        assert fork["choice"] in fork["choices"]
        assert ("merge" in fork["choices"]) == (not fork["conflict"])


@settings(max_examples=examples(100), deadline=None)
@given(bundles())
def test_an_uninstall_removes_every_installed_skill_and_creates_nothing(bundle):
    inputs = PlanInputs(
        kind="uninstall",
        target=None,
        current=bundle,
        installed=installed_from(bundle),
        occupied={},
        egress={(host, port): True for host, port, _ in bundle.hosts},
        needed_by_others=frozenset(),
        credentials={name: True for name, _, _ in bundle.credentials},
    )
    draft = compute_plan(inputs)
    assert_typed(draft.steps)
    removed = {s["slug"] for s in draft.steps if s["type"] == "skill.remove"}
    assert removed == {s.slug for s in bundle.skills}
    assert not any(s["type"] in ("skill.create", "egress.add") for s in draft.steps)
    assert {(s["host"], s["port"]) for s in draft.steps if s["type"] == "egress.remove"} == {
        (host, port) for host, port, _ in bundle.hosts
    }
