"""The History pages' comparison of two recorded texts, drawn by the diff every other
comparison uses (catalog.diff_display: bounded work, each line escaped).

The page is the kernel's (pixie.core.audit.admin_history), which may not import the
catalog; its template loads this library, at the wiring layer, which may."""

from django import template

from catalog.diff_display import side_by_side

register = template.Library()


@register.simple_tag
def recorded_diff(before: str, after: str):
    """The text recorded before and the text recorded now, side by side."""
    return side_by_side(str(before or ""), str(after or ""))
