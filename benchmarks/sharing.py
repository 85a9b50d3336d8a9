"""How long the sharing engine takes at its limits. Not a test: it prints figures.

    .venv/bin/python benchmarks/sharing.py            # the pure core only
    .venv/bin/python benchmarks/sharing.py --import   # also a real import (throwaway test DB)

The pure core: ``decode`` of a maximum-size share (12 items, just under 64 KiB),
``merge`` of 12 items against a workspace of 10,000 skills (half of the items
collide and are re-slugged, cascading over the bundle), and ``apply_rename``
over 10,000 bodies. Then mentions in Markdown: ``parse_mentions``, ``mention_set``,
``apply_rename(s)`` on a 30,000-character body with code, and a rename cascade over
10,000 such bodies of 2,347 characters, each against one compiled regex pass over the
same text. With --import, ``share_import`` of that share into a workspace of 10,000
skills, with its query count.
"""

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _setup import django_with_test_database, record  # noqa: E402

from pixie.core.namespace.engine import (  # noqa: E402
    _MENTION_RE,
    _mention_of,
    apply_rename,
    apply_renames,
    mention_set,
    parse_mentions,
)
from pixie.core.skillshare import MAX_ITEMS, MAX_WIRE_BYTES, Item, decode, encode, merge  # noqa: E402

LOCAL_SKILLS = 10_000
SIZES = (1_000, 10_000, 100_000)  # local skills for merge, bodies for the cascade
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


def markdown_section(number: int) -> str:
    """One section of a skill body in the shape of the demo skills: a heading, numbered
    steps with nested bullets, mentions, an email address, inline code (one span holds a
    scoped npm package), and a Python fence with a decorator, a blank line and an email
    address in it. About 1 in 100 characters is a backtick, 1 in 100 an "@" and 1 in 50
    a line end; a third of the "@"s are in code."""
    return (
        f"## {number}. Reconcile the ledger\n\n"
        "Use this when a payment arrives without a reference, or when someone asks "
        "you to match one by hand. Open balance and overdue mean what @ar-ground-rules "
        "says they mean.\n\n"
        "1. Look up the customer with @query-ledger: number, currency, total, due date, "
        "payments and credit notes posted.\n"
        "2. Send nothing if any of these is true:\n"
        "   - the open balance is zero (it has been paid);\n"
        "   - the invoice is marked `disputed` in the ledger notes;\n"
        "   - an agreed credit would cover it. Handle that with @apply-credit-note.\n"
        "3. If the build of the payment page fails, extend `@parcel/config-default` in "
        "`.parcelrc` and ask billing@example.com for the keys.\n\n"
        "Register the matcher as a tool so @take-payment can call it:\n\n"
        "```python\n"
        "@mcp.tool()\n"
        "def match_payment(reference: str, amount: Decimal) -> str:\n"
        '    """Match one payment; see @take-payment."""\n'
        "    invoice = ledger.find(reference)\n"
        "\n"
        "    return invoice.apply(amount)  # ops@example.com\n"
        "```\n\n"
        "Then send the receipt with @send-email and note it in the ledger. Never send "
        "the same receipt twice, and never on weekends; if in doubt, hand over to "
        "@escalate-to-human with the invoice number and what you tried.\n\n"
    )


def markdown_body(size: int) -> str:
    """Sections of ``markdown_section`` up to ``size`` characters (the last one cut)."""
    sections = []
    while sum(map(len, sections)) < size:
        sections.append(markdown_section(len(sections) + 1))
    return "".join(sections)[:size]


def reference_pass(text: str) -> int:
    """The reference: one pass of the compiled mention regex over ``text``."""
    return sum(1 for _ in _MENTION_RE.finditer(text))


def row(
    what: str, seconds: float, reference: float | None = None, note: str = "", target: str = ""
) -> None:
    if target:
        record(
            f"{target}: within 3x of one compiled regex pass",
            f"{seconds * 1000:.2f} ms vs {reference * 1000:.2f} ms: {seconds / reference:.2f}x",
            seconds / reference <= 3,
        )
    ratio = f"{seconds / reference:.2f}x" if reference else ""
    ref = f"{reference * 1000:.2f}" if reference else ""
    print(f"| {what} | {seconds * 1000:.2f} | {ref} | {ratio} | {note} |")


def pure_core() -> None:
    skill, closure = biggest_share()
    body = encode(skill, closure)
    share = decode(body)
    assert share is not None and len(share.items) == MAX_ITEMS
    size = len(body.encode())
    print("## Sharing: decode, merge and rename cascade\n")
    print("Pure code, no database. Each figure is the median of 7 runs; the reference is one")
    print("pass of the compiled mention regex over the same text, timed in the same run.\n")
    print("| what | ms | reference ms | ratio | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    row(
        f"decode, maximum share ({MAX_ITEMS} items, {size:,} bytes)",
        timed(lambda: decode(body), number=20)[0],
        timed(lambda: reference_pass(body), number=20)[0],
    )
    tools = {"query-ledger", "send-email", "read-calendar"}
    bundle_text = "\n".join(item.detailed_body for item in share.items)
    for local_size in SIZES:
        local = {
            f"local-skill-{i}": (f"Local {i}", f"Use @query-ledger ({i}).")
            for i in range(local_size)
        }
        # Half of the incoming slugs are taken locally by different skills.
        for item in share.items[::2]:
            local[item.id] = ("Someone else's", "A different procedure.")
        before = dict(local)
        outcome = merge(share, local, tools)
        assert len(outcome.renames) == MAX_ITEMS // 2 and local == before
        row(
            f"merge, {MAX_ITEMS} items vs {local_size:,} local skills",
            timed(lambda share=share, local=local: merge(share, local, tools), number=5)[0],
            timed(lambda: reference_pass(bundle_text), number=5)[0],
            f"{len(outcome.renames)} renames cascaded over the {MAX_ITEMS} bodies",
            target=f"Merge of {MAX_ITEMS} items vs {local_size:,} skills"
            if local_size == LOCAL_SKILLS
            else "",
        )

    for count in SIZES:
        bodies = [
            f"Skill {i}: check @meeting-prep, then @meeting-prep-notes, mail ann@example.com, "
            f"and @send-email. " * 5
            for i in range(count)
        ]

        def rename_all(bodies=bodies):
            return [apply_rename("meeting-prep", "prep-meeting", text) for text in bodies]

        renamed = rename_all()
        assert "@prep-meeting," in renamed[0] and "@meeting-prep-notes" in renamed[0]
        joined = "\n".join(bodies)
        row(
            f"rename cascade over {count:,} bodies ({len(bodies[0])} chars each)",
            timed(rename_all, repeat=RUNS if count <= LOCAL_SKILLS else 3)[0],
            timed(lambda joined=joined: reference_pass(joined), repeat=3)[0],
            target=f"Rename cascade over {count:,} bodies" if count == LOCAL_SKILLS else "",
        )
    print()
    markdown()


def markdown() -> None:
    """Mentions in long Markdown bodies, where code must be found and skipped."""
    body = markdown_body(30_000)
    mentions = parse_mentions(body)
    assert "mcp" not in mentions and "parcel" not in mentions and "take-payment" in mentions
    print("## Mentions in Markdown: reading and renaming outside code\n")
    print("Pure code. A 30,000-character skill body mixing prose, numbered lists, inline code")
    print("(`@parcel/config-default`), Python fences with `@mcp.tool()`, e-mail addresses and")
    print(f'mentions ({body.count("`")} backticks, {body.count("@")} "@"s). Each figure is the')
    print("best of 15 runs, timed alternately with its reference: one compiled regex pass over")
    print("the same text, `_MENTION_RE.findall`. The note compares the renames with the single")
    print("`re.sub` per body that renamed a slug before mentions followed Markdown (it reads")
    print("code as prose, and is cheaper than a findall: few of its matches are the slug).\n")
    print("| what | ms | reference ms | ratio | note |")
    print("| --- | ---: | ---: | ---: | --- |")

    def versus(function, reference, number):
        ours, theirs = [], []
        for _ in range(15):
            ours.append(timed(function, repeat=1, number=number)[0])
            theirs.append(timed(reference, repeat=1, number=number)[0])
        return min(ours), min(theirs)

    findall = _MENTION_RE.findall
    old_sub = _mention_of("take-payment").sub
    renames = {"take-payment": "pay", "send-email": "mail", "query-ledger": "ledger"}

    def old_renames(text):
        for old, new in renames.items():
            text = _mention_of(old).sub("@" + new, text)
        return text

    cases = [
        ("parse_mentions", lambda: parse_mentions(body), None),
        ("mention_set", lambda: mention_set(body), None),
        (
            "apply_rename, one slug",
            lambda: apply_rename("take-payment", "pay", body),
            lambda: old_sub("@pay", body),
        ),
        (
            f"apply_renames, {len(renames)} slugs",
            lambda: apply_renames(renames, body),
            lambda: old_renames(body),
        ),
    ]
    for what, function, before in cases:
        seconds, reference = versus(function, lambda: findall(body), number=50)
        note = ""
        if before is not None:
            then = versus(before, lambda: findall(body), number=50)[0]
            note = f"{seconds / then:.2f}x the old re.sub ({then * 1000:.3f} ms)"
        name = what.split(",")[0]
        row(
            f"{what}, {len(body):,}-character body",
            seconds,
            reference,
            note,
            target=f"{name} on a {len(body):,}-character Markdown body",
        )

    count = 10_000
    base = markdown_section(1) + markdown_section(2)
    bodies = [f"# Skill {i}\n\n{base}" for i in range(count)]
    joined = "\n".join(bodies)

    def cascade():
        return [apply_rename("take-payment", "pay", text) for text in bodies]

    renamed = cascade()[0]
    assert "@pay can call" in renamed and "see @take-payment." in renamed
    seconds, reference = versus(cascade, lambda: findall(joined), number=1)
    then = versus(lambda: [old_sub("@pay", text) for text in bodies], cascade, number=1)[0]
    row(
        f"rename cascade over {count:,} Markdown bodies ({len(bodies[0]):,} chars each)",
        seconds,
        reference,
        f"{seconds / then:.2f}x the old re.sub on each body ({then * 1000:.1f} ms)",
        target=f"Rename cascade over {count:,} Markdown bodies",
    )
    print()


def real_import() -> None:

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
    from pixie.core.models import Membership, Workspace
    from pixie.sharing import services as sharing
    from pixie.sharing.models import Message

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
    # Each owner lists their workspace in the server's directory, as a local contact needs.
    sharing.directory_listing_set(workspace=alpha, listed=True, actor=ann)
    sharing.directory_listing_set(workspace=beta, listed=True, actor=bob)
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
    print("With the database (PostgreSQL), once each:\n")
    print("| what | ms | queries |")
    print("| --- | ---: | ---: |")
    print(f"| share_send, {MAX_ITEMS} items (seal and local delivery) | {sent_in * 1000:.1f} | |")
    print(
        f"| share_import, {MAX_ITEMS} items into {LOCAL_SKILLS:,} skills "
        f"({len(result.outcome['renames'])} renamed) | {took * 1000:.1f} | {len(queries)} |\n"
    )


if __name__ == "__main__":
    pure_core()
    if "--import" in sys.argv:
        real_import()
