"""{% findings_grouped findings as block %}: findings grouped by rule for the findings
include (catalog.findings_display)."""

from django import template

from catalog.findings_display import findings_block

register = template.Library()


@register.simple_tag
def findings_grouped(findings):
    return findings_block(list(findings or []))
