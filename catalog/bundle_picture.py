"""A server-side SVG picture of a bundle version: its skills in order, arrows for
their @-mentions (to other skills and to tools), and the hosts they reach with the
credential names those hosts need.

Reach rule: a skill reaches a host when its body names the host; a skill that
mentions @http-request but names none of the bundle's hosts reaches all of them
(it can call whatever the bundle allows). Credentials hang off their host.

The drawing is a pure function over plain data (`bundle_svg`); `bundle_picture`
loads one version's rows. Every piece of text is XML-escaped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from pixie.core.namespace.engine import parse_mentions

from .models import Tool

ROW = 30  # a row per skill keeps 50 skills at 1,500 px: scroll, but every label legible
BOX_H = 22
LANE = 100  # room on the left for skill-to-skill arcs
SKILL_X, SKILL_W = LANE, 310
RIGHT_X, RIGHT_W = SKILL_X + SKILL_W + 170, 260  # 860 px wide: fits the admin at 1280
TOP = 34
SKILL_COLOUR, TOOL_COLOUR, HOST_COLOUR = "#417690", "#777777", "#c05600"
HEADING = {"weight": "bold", "colour": "currentColor"}


@dataclass(frozen=True)
class PictureSkill:
    slug: str
    name: str
    body: str


@dataclass
class _Node:
    key: str
    label: str
    y: float
    lines: list[str] = field(default_factory=list)


def reaches(skill: PictureSkill, hosts: list[str]) -> list[str]:
    named = [host for host in hosts if host in skill.body]
    if named:
        return named
    return list(hosts) if "http-request" in parse_mentions(skill.body) else []


def _text(x, y, value, *, size=12, anchor="start", colour="#222", weight="normal") -> str:
    return (
        f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" fill="{colour}" '
        f'font-weight="{weight}">{escape(value)}</text>'
    )


def _clip(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def bundle_svg(
    *,
    title: str,
    skills: list[PictureSkill],
    tools: set[str],
    hosts: list[tuple[str, int]],
    credentials: list[tuple[str, str]],
) -> str:
    """The picture as an SVG document (a string)."""
    skill_slugs = {skill.slug for skill in skills}
    mentions = {skill.slug: parse_mentions(skill.body) for skill in skills}
    used_tools = sorted({m for ms in mentions.values() for m in ms if m in tools - skill_slugs})
    host_names = [host for host, _port in hosts]
    reach = {skill.slug: reaches(skill, host_names) for skill in skills}
    skill_y = {skill.slug: TOP + 20 + i * ROW for i, skill in enumerate(skills)}
    right, bottom = _right_column(skills, mentions, reach, skill_y, used_tools, hosts, credentials)
    height = max(TOP + 20 + len(skills) * ROW, bottom) + 20
    parts = _head(title, RIGHT_X + RIGHT_W + 20, height, has_right=bool(right))
    parts += _skill_arcs(skills, mentions, skill_y)
    parts += _reach_edges(skills, mentions, reach, skill_y, {node.key: node for node in right})
    parts += _skill_boxes(skills, skill_y)
    parts += _right_boxes(right)
    parts.append("</svg>")
    return "\n".join(parts)


def _right_column(skills, mentions, reach, skill_y, used_tools, hosts, credentials):
    """Tools first, then hosts; within each, a node sits level with the middle of the
    skills that point at it (pushed down only to avoid overlap), so edges stay short.
    The nodes, and where the column ends."""
    sources: dict[str, list[float]] = {}
    for skill in skills:
        for key in [f"tool:{m}" for m in mentions[skill.slug]] + [
            f"host:{h}" for h in reach[skill.slug]
        ]:
            sources.setdefault(key, []).append(skill_y[skill.slug])
    right: list[_Node] = []
    y = TOP + 20
    sections = [
        [_Node(f"tool:{slug}", f"tool @{slug}", 0) for slug in used_tools],
        [
            _Node(
                f"host:{host}", f"{host}:{port}", 0,
                [f"key {name}" for name, cred_host in credentials if cred_host == host],
            )
            for host, port in hosts
        ],
    ]  # fmt: skip
    for section in sections:
        wanted = {
            node.key: sum(sources.get(node.key, [y])) / len(sources.get(node.key, [y]))
            for node in section
        }
        for node in sorted(section, key=lambda n: wanted[n.key]):
            node.y = round(max(wanted[node.key], y), 1)
            y = node.y + ROW + 16 * len(node.lines)
            right.append(node)
        y += 16 if section else 0
    return right, y


def _head(title: str, width: int, height: float, *, has_right: bool) -> list[str]:
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-labelledby="bundle-picture-title" '
        'font-family="sans-serif">',
        f'<title id="bundle-picture-title">{escape(title)}</title>',
        "<defs>"
        + "".join(
            f'<marker id="arrow-{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            f'fill="{colour}"/></marker>'
            for name, colour in (
                ("skill", SKILL_COLOUR),
                ("tool", TOOL_COLOUR),
                ("host", HOST_COLOUR),
            )
        )  # fmt: skip
        + "</defs>",
        # The headings stand on the page itself: its text colour, light or dark theme.
        _text(SKILL_X, TOP - 8, "Skills, in the order agents get them", **HEADING),
    ]
    if has_right:
        parts.append(_text(RIGHT_X, TOP - 8, "Tools and hosts they reach", **HEADING))
    return parts


def _skill_arcs(skills, mentions, skill_y) -> list[str]:
    """Skill-to-skill mentions: arcs in the left lane, wider for longer jumps."""
    skill_slugs = {skill.slug for skill in skills}
    order = {skill.slug: i for i, skill in enumerate(skills)}
    parts = []
    for skill in skills:
        for target in dict.fromkeys(mentions[skill.slug]):
            if target in skill_slugs and target != skill.slug:
                y1, y2 = skill_y[skill.slug], skill_y[target]
                bulge = SKILL_X - min(LANE - 6, 20 + 8 * abs(order[target] - order[skill.slug]))
                parts.append(
                    f'<path d="M{SKILL_X},{y1} C{bulge},{y1} {bulge},{y2} {SKILL_X},{y2}" '
                    f'fill="none" stroke="{SKILL_COLOUR}" stroke-opacity="0.7" '
                    f'marker-end="url(#arrow-skill)"><title>@{escape(skill.slug)} mentions '
                    f"@{escape(target)}</title></path>"
                )
    return parts


def _reach_edges(skills, mentions, reach, skill_y, nodes) -> list[str]:
    """Skill-to-tool and skill-to-host edges: curves across the middle."""
    parts = []
    for skill in skills:
        targets = [(f"tool:{m}", "tool") for m in dict.fromkeys(mentions[skill.slug])]
        targets += [(f"host:{h}", "host") for h in reach[skill.slug]]
        for key, kind in targets:
            if key not in nodes:
                continue
            y1, y2 = skill_y[skill.slug], nodes[key].y
            x1, x2 = SKILL_X + SKILL_W, RIGHT_X
            colour = TOOL_COLOUR if kind == "tool" else HOST_COLOUR
            dash = "" if kind == "tool" else ' stroke-dasharray="5,3"'
            parts.append(
                f'<path d="M{x1},{y1} C{x1 + 90},{y1} {x2 - 90},{y2} {x2},{y2}" fill="none" '
                f'stroke="{colour}" stroke-opacity="0.6"{dash} marker-end="url(#arrow-{kind})">'
                f"<title>@{escape(skill.slug)} → {escape(nodes[key].label)}</title></path>"
            )
    return parts


def _skill_boxes(skills, skill_y) -> list[str]:
    parts = []
    for i, skill in enumerate(skills):
        y = skill_y[skill.slug]
        label = _clip(f"{i + 1}. @{skill.slug} — {skill.name}", 45)
        parts.append(
            f'<g class="skill"><rect x="{SKILL_X}" y="{y - BOX_H / 2}" width="{SKILL_W}" '
            f'height="{BOX_H}" rx="4" fill="#eaf2f7" stroke="{SKILL_COLOUR}"/>'
            + _text(SKILL_X + 8, y + 4, label)
            + "</g>"
        )
    return parts


def _right_boxes(right: list[_Node]) -> list[str]:
    parts = []
    for node in right:
        is_host = node.key.startswith("host:")
        colour = HOST_COLOUR if is_host else TOOL_COLOUR
        fill = "#fff4e5" if is_host else "#f2f2f2"
        box_h = BOX_H + 16 * len(node.lines)
        parts.append(
            f'<g class="{"host" if is_host else "tool"}"><rect x="{RIGHT_X}" '
            f'y="{node.y - BOX_H / 2}" width="{RIGHT_W}" height="{box_h}" rx="4" fill="{fill}" '
            f'stroke="{colour}"/>' + _text(RIGHT_X + 8, node.y + 4, _clip(node.label, 36))
        )
        for n, line in enumerate(node.lines):
            parts.append(
                _text(RIGHT_X + 20, node.y + 20 + 16 * n, _clip(line, 34), size=11, colour=colour)
            )
        parts.append("</g>")
    return parts


def bundle_picture(bundle_version) -> str:
    """The SVG for one bundle version (four queries whatever its size)."""

    entries = bundle_version.skills.select_related("skill_version__package").order_by(
        "position", "id"
    )
    skills = [
        PictureSkill(
            slug=entry.skill_version.package.slug,
            name=entry.skill_version.name,
            body=entry.skill_version.body,
        )
        for entry in entries
    ]
    return bundle_svg(
        title=f"{bundle_version.bundle.name} {bundle_version.version}",
        skills=skills,
        tools=set(Tool.objects.values_list("slug", flat=True)),
        hosts=list(bundle_version.hosts.values_list("host", "port")),
        credentials=list(bundle_version.credentials.values_list("name", "host")),
    )
