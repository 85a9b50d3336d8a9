"""axe-core in the system Chromium: the serious and critical violations of a page in the
admin's light and dark themes, less the markup Django's admin draws itself, which no
template of ours can change.

The axe-core injected is the one the repository's package.json pins (node_modules/axe-core,
which ``npm ci --omit=optional`` installs: scripts/test does when npm exists, .ci/run
always), not the older copy a Python wrapper bundles. Without it the tests that read a
page with axe skip, saying why; under CI=true, or PIXIE_REQUIRE_CLIENTS=1 as .ci/run sets,
they fail instead."""

import json
import os
import re
from pathlib import Path

import pytest

HEAVY = os.environ.get("PIXIE_HEAVY") == "1"
THEMES = ("light", "dark")
SERIOUS = {"serious", "critical"}
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
# (rule, CSS selector the failing node matches, why it is not ours to fix). Only markup
# Django's admin renders itself, which no template of ours can change without replacing
# Django's whole template or widget, belongs here; each is a gap in Django's admin.
DJANGOS_OWN = [
    (
        "label",
        "p.datetime > input.vDateField, p.datetime > input.vTimeField",
        "AdminSplitDateTime writes 'Date:' and 'Time:' as bare text before its two inputs "
        "(admin/widgets/split_datetime.html); the field's own label names the pair",
    ),
    (
        "label",
        ".inline-group .tabular td.delete > input[type=checkbox]",
        "a tabular inline's delete box has no label, only its column header "
        "(admin/edit_inline/tabular.html)",
    ),
    (
        "select-name",
        ".inline-group .tabular td[class^='field-'] select",
        "a tabular inline's fields are named by their column headers, not by labels "
        "(admin/edit_inline/tabular.html)",
    ),
    (
        "aria-prohibited-attr",
        ".selector .help-tooltip.search-label-icon",
        "filter_horizontal's search icon is a span with an aria-label and no role "
        "(admin/js/SelectFilter2.js)",
    ),
    (
        "aria-input-field-name",
        ".select2-container .select2-selection[role=combobox], "
        ".select2-container .select2-selection__rendered[role=textbox]",
        "select2, as the admin's autocomplete widget ships it, names its combobox by the "
        "chosen value (a span of role textbox), so neither has a name while nothing is chosen",
    ),
    (
        "label-title-only",
        "#changelist-search #searchbar[aria-describedby]",
        "the changelist search box is labelled by a magnifier image; with search_help_text "
        "(DRF's TokenAdmin has one) axe reads only the description (admin/search_form.html)",
    ),
]
# axe-core (4.12 to 4.14.1 at least) fetches a stylesheet's relative @import against the
# page's URL, not the stylesheet's (dequelabs/axe-core#5268, open): the admin's forms.css
# imports widgets.css, so axe asks for /admin/<page>/widgets.css and the console reports
# that 404. (Routing the request to the real file would turn off the browser's cache for
# the whole crawl.)
AXE_IMPORT_MISS = re.compile(r"status of 404 \(Not Found\) at \S+/widgets\.css(/change/)?$")

ROOT = Path(__file__).resolve().parents[2]
PINNED_AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# The oldest axe-core the crawl may run: 4.14 runs rules 4.12 left experimental
# (label-content-name-mismatch: a visible label is part of the accessible name).
LEAST_AXE_VERSION = (4, 14, 1)


def pinned_axe_version() -> str:
    """The axe-core version package.json pins."""
    return json.loads((ROOT / "package.json").read_text())["dependencies"]["axe-core"]


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.partition("-")[0])[:3])


# The script to inject; empty when node_modules has no axe-core (require_axe says so).
AXE_SCRIPT = PINNED_AXE.read_text() if PINNED_AXE.exists() else ""


def require_axe() -> None:
    """Skip the test (fail it under CI=true or PIXIE_REQUIRE_CLIENTS=1) unless the pinned
    axe-core is installed."""
    if AXE_SCRIPT:
        return
    message = (
        f"axe-core is not installed ({PINNED_AXE.relative_to(ROOT)}), so no page was read "
        "for accessibility: run `npm ci --omit=optional` at the repository's root (needs npm)"
    )
    if os.environ.get("CI") == "true" or os.environ.get("PIXIE_REQUIRE_CLIENTS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def djangos_own(page, rule: str, target: str, exempt=DJANGOS_OWN) -> bool:
    selectors = [selector for own, selector, _ in exempt if own == rule]
    return bool(selectors) and page.evaluate(
        "([target, selector]) => !!document.querySelector(target)?.matches(selector)",
        [target, ", ".join(selectors)],
    )


def serious_violations(
    page, where: str, rules: list[str] | None = None, exempt=DJANGOS_OWN
) -> list[str]:
    require_axe()
    options = {"resultTypes": ["violations"]}
    if rules:
        options["runOnly"] = {"type": "rule", "values": rules}
    violations = page.evaluate("options => axe.run(options).then(r => r.violations)", options)
    found = []
    for violation in violations:
        if violation["impact"] not in SERIOUS:
            continue
        for node in violation["nodes"]:
            target = " ".join(str(part) for part in node["target"])
            if djangos_own(page, violation["id"], target, exempt):
                continue
            summary = node["failureSummary"].splitlines()[-1].strip()
            found.append(
                f"{where}: {violation['id']} ({violation['impact']}) at {target}: {summary}"
            )
    return found


def axe_both_themes(tab, where: str) -> None:
    """axe on the page as it stands, in each theme (a screenshot of each), for a page a
    journey reaches that the crawl cannot (a confirmation after a POST)."""
    require_axe()
    page = tab.page
    # axe's miss of forms.css's @import (AXE_IMPORT_MISS), on a page that has a form.
    here = page.url.split("#")[0].split("?")[0]
    tab.refused |= {here + "widgets.css" + tail for tail in ("", "/", "/change/")}
    page.add_script_tag(content=AXE_SCRIPT)
    for n, theme in enumerate(THEMES):
        show_theme(page, theme)
        # A theme changes colours, not markup: past the first, only the rules of colour.
        assert serious_violations(page, f"{where} [{theme}]", COLOUR_RULES if n else None) == []
        tab.shot(f"{where}-{theme}")
    show_theme(page, "light")


def read_in_both_themes(page, where: str, themes, exempt=DJANGOS_OWN, each=None) -> list[str]:
    """axe in each of ``themes``, the first the one the page was opened in (every rule),
    the others for the rules of colour; ``each(theme)`` after each reading. The page is
    left in the last theme: a crawl that opens its next page in the theme the last one
    ended in (the admin keeps it) switches once a page, not thrice."""
    found = []
    for n, theme in enumerate(themes):
        show_theme(page, theme)
        rules = COLOUR_RULES if n and not HEAVY else None
        found += serious_violations(page, f"{where} {theme}", rules, exempt)
        if each is not None:
            each(theme)
    return found


def theme_order(themes, last: str) -> tuple[str, ...]:
    """``themes`` starting with ``last`` (the one the browser is in), when it is one."""
    return (last, *(t for t in themes if t != last)) if last in themes else tuple(themes)


def show_theme(page, theme: str):
    """What the admin's theme toggle does: remember the choice and apply it now; then
    wait out the admin's colour transitions (0.15 s on links), so axe reads final colours."""
    page.evaluate(
        """async theme => {
            localStorage.setItem('theme', theme);
            document.documentElement.dataset.theme = theme;
            // Two frames: what follows the theme in script (Swagger UI's dark mode) and the
            // styles it changes are in place, and their transitions started, before
            // the transitions are awaited.
            for (let frame = 0; frame < 2; frame++) {
                await new Promise(resolve => requestAnimationFrame(resolve));
            }
            // allSettled: an animation the page cancels meanwhile (Swagger UI's) rejects.
            await Promise.allSettled(document.getAnimations().map(animation => animation.finished));
        }""",
        theme,
    )


def crawl_parts(parts: dict[str, int], quick: set[str]) -> list:
    """pytest params (role, part, parts) of a crawl: each role's pages cut into ``parts``
    (so that no test passes the browser budget, and two workers share a role's pages),
    the roles outside ``quick`` marked slow: they run in the slow run (CI), the others in
    every run."""
    return [
        pytest.param(
            role, part, count,
            marks=() if role in quick else (pytest.mark.slow,),
            id=f"{role}-{part + 1}of{count}",
        )
        for role, count in parts.items()
        for part in range(count)
    ]  # fmt: skip
