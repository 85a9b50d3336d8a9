"""The bundle version's picture: well-formed SVG naming every skill, host and credential."""

import xml.etree.ElementTree as ET

import pytest
from django.urls import reverse

from catalog.bundle_picture import PictureSkill, bundle_svg, reaches

SVG = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # noqa: S314 - our own output, parsed to prove it well-formed


def texts(svg: str) -> list[str]:
    return [element.text for element in parse(svg).iter(f"{SVG}text")]


def test_fifty_skills_draw_as_well_formed_svg_with_every_skill_in_order():
    skills = [
        PictureSkill(f"step-{n}", f"Step {n}", f"Then run @step-{n + 1} and @send-email.")
        for n in range(50)
    ]
    svg = bundle_svg(
        title="Big 1.0.0", skills=skills, tools={"send-email"},
        hosts=[("mail.example.com", 443)], credentials=[("MAIL_TOKEN", "mail.example.com")],
    )  # fmt: skip
    labels = texts(svg)
    skill_labels = [label for label in labels if label.startswith(tuple("0123456789"))]
    assert [label.split(" ")[1] for label in skill_labels] == [f"@step-{n}" for n in range(50)]
    assert "tool @send-email" in labels and "key MAIL_TOKEN" in labels
    arcs = [t.text for t in parse(svg).iter(f"{SVG}title")]
    assert "@step-3 mentions @step-4" in arcs
    assert int(parse(svg).get("height")) < 1700  # one 30 px row a skill


def test_names_are_escaped_never_markup():
    svg = bundle_svg(
        title="<script>alert(1)</script>",
        skills=[PictureSkill("evil", "<script>alert(1)</script>", "hi & bye")],
        tools=set(), hosts=[], credentials=[],
    )  # fmt: skip
    root = parse(svg)
    assert "<script>" not in svg
    assert not list(root.iter(f"{SVG}script")) and not list(root.iter("script"))
    assert any("<script>" in (t or "") for t in texts(svg))  # shown as text


def test_a_skill_reaches_the_hosts_it_names_else_all_through_http_request():
    hosts = ["ledger.example.com", "payments.example.com"]
    names = PictureSkill("a", "A", "POST to https://payments.example.com with @http-request")
    generic = PictureSkill("b", "B", "Use @http-request.")
    quiet = PictureSkill("c", "C", "Just talk.")
    assert reaches(names, hosts) == ["payments.example.com"]
    assert reaches(generic, hosts) == hosts
    assert reaches(quiet, hosts) == []


@pytest.mark.django_db
def test_the_bundle_version_page_shows_its_picture(operator_client, demo_catalog):
    version = demo_catalog["2.2.0"]
    page = operator_client.get(reverse("admin:catalog_bundleversion_change", args=[version.pk]))
    html = page.content.decode()
    start = html.index("<svg", html.index('id="bundle-picture"'))
    svg = html[start : html.index("</svg>", start) + len("</svg>")]
    labels = texts(svg)
    skill_labels = [label.split(" — ")[0] for label in labels if label[0].isdigit()]
    assert skill_labels == [
        "1. @ar-ground-rules", "2. @invoice-chase", "3. @take-payment", "4. @payment-plan",
        "5. @apply-credit-note",
    ]  # fmt: skip
    assert "payments.example.com:443" in labels and "key PAYMENTS_API_KEY" in labels
