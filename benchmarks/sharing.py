"""How long the sharing engine takes at its limits. Not a test: it prints figures.

    .venv/bin/python benchmarks/sharing.py            # the pure core only
    .venv/bin/python benchmarks/sharing.py --import   # also a real import (throwaway test DB)

The pure core: ``decode`` of a maximum-size share (12 items, just under 64 KiB),
``merge`` of 12 items against a workspace of 10,000 skills (half of the items
collide and are re-slugged, cascading over the bundle), and ``apply_rename``
over 10,000 bodies. With --import, ``share_import`` of that share into a
workspace of 10,000 skills, with its query count.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pixie.namespace import apply_rename  # noqa: E402
from pixie.skillshare import MAX_ITEMS, MAX_WIRE_BYTES, Item, decode, encode, merge  # noqa: E402

LOCAL_SKILLS = 10_000
RUNS = 7


def timed(function, *, repeat: int = RUNS, number: int = 1) -> tuple[float, float]:
    """(median, best) seconds per call."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            function()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples), min(samples)


def biggest_share() -> tuple[Item, list[Item]]:
    """Twelve items, each mentioning its bundle-mates, as close to 64 KiB as allowed."""
    ids = [f"step-{i:02d}-of-the-procedure" for i in range(MAX_ITEMS)]
    line = "Then, if the invoice is overdue, " + " ".join(f"run @{slug}" for slug in ids) + ".\n"
    items = []
    for slug in ids:
        body = (line * 200)[:8000]
        items.append(Item(slug, slug.replace("-", " ").title(), "One line. " * 40, body))
    while len(encode(items[0], items[1:]).encode()) > MAX_WIRE_BYTES:
        items = [
            Item(item.id, item.name, item.short_description, item.detailed_body[:-100])
            for item in items
        ]
    return items[0], items[1:]


def report(label: str, median: float, best: float, extra: str = "") -> None:
    print(f"{label:<58} median {median * 1000:9.3f} ms   best {best * 1000:9.3f} ms  {extra}")


def pure_core() -> None:
    skill, closure = biggest_share()
    body = encode(skill, closure)
    share = decode(body)
    assert share is not None and len(share.items) == MAX_ITEMS
    size = len(body.encode())
    report(
        f"decode, maximum share ({MAX_ITEMS} items, {size:,} bytes)",
        *timed(lambda: decode(body), number=20),
    )

    local = {
        f"local-skill-{i}": (f"Local {i}", f"Use @query-ledger ({i}).") for i in range(LOCAL_SKILLS)
    }
    # Half of the incoming slugs are taken locally by different skills.
    for item in share.items[::2]:
        local[item.id] = ("Someone else's", "A different procedure.")
    tools = {"query-ledger", "send-email", "read-calendar"}
    before = dict(local)
    outcome = merge(share, local, tools)
    assert len(outcome.renames) == MAX_ITEMS // 2 and local == before
    report(
        f"merge, {MAX_ITEMS} items vs {LOCAL_SKILLS:,} local skills",
        *timed(lambda: merge(share, local, tools), number=5),
        f"({len(outcome.renames)} renames cascaded)",
    )

    bodies = [
        f"Skill {i}: check @meeting-prep, then @meeting-prep-notes, mail ann@example.com, "
        f"and @send-email. " * 5
        for i in range(LOCAL_SKILLS)
    ]

    def rename_all():
        return [apply_rename("meeting-prep", "prep-meeting", text) for text in bodies]

    renamed = rename_all()
    assert "@prep-meeting," in renamed[0] and "@meeting-prep-notes" in renamed[0]
    report(
        f"apply_rename over {LOCAL_SKILLS:,} bodies ({len(bodies[0])} chars each)",
        *timed(rename_all),
    )


def real_import() -> None:
    from _setup import django_with_test_database

    connection, teardown = django_with_test_database()
    try:
        _real_import(connection)
    finally:
        teardown()


def _real_import(connection) -> None:
    from django.contrib.auth import get_user_model
    from django.test.utils import CaptureQueriesContext

    from catalog.models import SkillRevision, WorkspaceSkill
    from catalog.services.workspace_skills import skill_create
    from pixie import sharing
    from pixie.models import Membership, Message, Workspace

    user_model = get_user_model()
    ann = user_model.objects.create_user("ann")
    bob = user_model.objects.create_user("bob")
    alpha = Workspace.objects.create(slug="alpha", name="Alpha")
    beta = Workspace.objects.create(slug="beta", name="Beta")
    Membership.objects.create(workspace=alpha, user=ann, role="owner")
    Membership.objects.create(workspace=beta, user=bob, role="owner")
    skills = WorkspaceSkill.objects.bulk_create(
        WorkspaceSkill(workspace=beta, slug=f"local-skill-{i}") for i in range(LOCAL_SKILLS)
    )
    revisions = SkillRevision.objects.bulk_create(
        SkillRevision(
            skill=skill, number=1, name=f"Local {i}", short_description="Local.", body="Local."
        )
        for i, skill in enumerate(skills)
    )
    for skill, revision in zip(skills, revisions, strict=True):
        skill.head = revision
    WorkspaceSkill.objects.bulk_update(skills, ["head"], batch_size=2000)

    root, closure = biggest_share()
    for item in reversed([root, *closure]):
        skill_create(
            workspace=alpha, slug=item.id, name=item.name, short_description="One line.",
            body=item.detailed_body, actor=ann,
        )  # fmt: skip
    for item in [root, *closure][::2]:
        skill_create(
            workspace=beta, slug=item.id, name="Someone else's", short_description="Other.",
            body="A different procedure.", actor=bob,
        )  # fmt: skip
    to_beta = sharing.contact_add_local(workspace=alpha, other_slug="beta", actor=ann)
    sharing.contact_add_local(workspace=beta, other_slug="alpha", actor=bob)
    root_skill = WorkspaceSkill.objects.get(workspace=alpha, slug=root.id)
    start = time.perf_counter()
    sharing.share_send(workspace=alpha, skill=root_skill, contact=to_beta, actor=ann)
    sent_in = time.perf_counter() - start
    message = Message.objects.get(workspace=beta)
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        result = sharing.share_import(workspace=beta, message=message, actor=bob)
        took = time.perf_counter() - start
    print(f"{'share_send, 12 items (seal + local delivery)':<58} {sent_in * 1000:9.3f} ms")
    print(
        f"{f'share_import, 12 items into {LOCAL_SKILLS:,} skills ({connection.vendor})':<58} "
        f"{took * 1000:9.3f} ms   {len(queries)} queries, "
        f"{len(result.outcome['renames'])} renames"
    )


if __name__ == "__main__":
    pure_core()
    if "--import" in sys.argv:
        real_import()
