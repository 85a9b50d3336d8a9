"""Published rows refuse change in code, not only in the admin.

The guard sits on the model and its queryset because every path (service,
shell, admin, QuerySet.update) must meet it; the rule itself is one line:
content fields of a published row never change.
"""

from django.db import models

from pixie.core.errors import ImmutableError


class GuardedQuerySet(models.QuerySet):
    def update(self, **kwargs):
        touched = set(kwargs) & set(self.model.CONTENT_FIELDS)
        if touched and self.filter(self.model.published_q()).exists():
            raise ImmutableError(
                f"Published {self.model._meta.verbose_name_plural} cannot be changed "
                f"({', '.join(sorted(touched))}); publish a new version instead."
            )
        return super().update(**kwargs)

    def delete(self):
        if self.filter(self.model.published_q()).exists():
            raise ImmutableError(
                f"Published {self.model._meta.verbose_name_plural} cannot be deleted."
            )
        return super().delete()


class PublishedImmutable(models.Model):
    """Mixin: subclasses name CONTENT_FIELDS and say when a row is published."""

    CONTENT_FIELDS: tuple[str, ...] = ()

    objects = GuardedQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        stored = self._stored()
        if stored is not None:
            changed = [
                field
                for field in self.CONTENT_FIELDS
                if getattr(stored, field) != getattr(self, field)
            ]
            if changed:
                raise ImmutableError(
                    f"{self._meta.verbose_name.capitalize()} {self} is published and cannot be "
                    f"changed ({', '.join(changed)}); publish a new version instead."
                )
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self._stored() is not None:
            raise ImmutableError(
                f"{self._meta.verbose_name.capitalize()} {self} is published and cannot be deleted."
            )
        return super().delete(*args, **kwargs)

    @classmethod
    def published_q(cls) -> models.Q:
        raise NotImplementedError

    def _stored(self):
        if self.pk is None:
            return None
        return type(self)._base_manager.filter(self.published_q(), pk=self.pk).first()
