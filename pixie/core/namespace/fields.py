"""Model and form fields for the shared skill/tool slug namespace."""

from django.core.exceptions import ValidationError
from django.db import models

from pixie.core.namespace.engine import is_slug

SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
SLUG_HELP = "Lowercase letters, digits and hyphens; starts with a letter or digit; at most 64."


def validate_slug(value: str) -> None:
    # Imported lazily so the pure engine stays importable without Django.

    if not is_slug(value):
        raise ValidationError(
            "%(value)r is not a valid slug: " + SLUG_HELP, params={"value": value}, code="slug"
        )


class SlugField(models.CharField):
    """A slug of the shared namespace, checked with a full match (no trailing newline)."""

    default_validators = [validate_slug]

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("max_length", 64)
        kwargs.setdefault("help_text", SLUG_HELP)
        super().__init__(*args, **kwargs)
