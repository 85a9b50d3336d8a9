"""The guardrail rules in force: Pixie's own (catalog/finding_rules.toml) and the
operator's, from the TOML file PIXIE_FINDING_RULES_FILE names."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from catalog.findings import Rule, rules_from_toml

BUILT_IN = Path(__file__).with_name("finding_rules.toml")


@cache
def _rules(extra_path: str) -> tuple[Rule, ...]:
    sources = [BUILT_IN] + ([Path(extra_path)] if extra_path else [])
    rules: list[Rule] = []
    for source in sources:
        try:
            rules += rules_from_toml(source.read_text(encoding="utf-8"), str(source))
        except (OSError, ValueError) as exc:
            raise ImproperlyConfigured(f"Finding rules: {exc}") from None
    return tuple(rules)


def guardrail_rules() -> tuple[Rule, ...]:
    return _rules(settings.PIXIE_FINDING_RULES_FILE)
