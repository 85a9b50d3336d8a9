"""Which @-mentions of a set of skills resolve to nothing."""

from collections.abc import Iterable

from pixie.core.namespace.engine import parse_mentions


def unresolved_by_skill(
    bodies: Iterable[tuple[str, str]], known_slugs: set[str]
) -> dict[str, list[str]]:
    """Map each missing slug to the skills (in order) that mention it."""
    missing: dict[str, list[str]] = {}
    for skill_slug, body in bodies:
        for mention in parse_mentions(body):
            if mention not in known_slugs:
                missing.setdefault(mention, []).append(skill_slug)
    return missing


def describe_unresolved(missing: dict[str, list[str]]) -> list[str]:
    return [
        f"@{slug} is mentioned by {', '.join('@' + s for s in skills)} but is neither a skill "
        "in this bundle nor a tool"
        for slug, skills in missing.items()
    ]
