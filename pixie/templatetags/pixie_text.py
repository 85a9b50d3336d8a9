"""Text as a reviewer must see it: hidden characters written out (catalog.findings)."""

from django import template

from catalog.findings import visible as written_out

register = template.Library()


@register.filter
def visible(text):
    """Every character a reader of the page would not see, written out as ⟨U+…⟩."""
    return written_out(str(text or ""))
