"""The admin's pages as Pixie draws them: where a model is listed, for breadcrumbs, and a
list that draws more under a row than its cells."""

from django import template
from django.contrib import admin

register = template.Library()


@register.simple_tag
def admin_section(opts) -> dict:
    """``{% admin_section opts as section %}``: the name and URL of the section the model
    is listed under on the index (pixie.core.web.admin_site)."""
    return admin.site.section(opts.model)


@register.filter
def with_objects(results, changelist):
    """Each row's cells beside the object it shows, for a model's change_list_results.html:
    ``{% for cells, obj in results|with_objects:cl %}``. The admin builds its rows from
    ``cl.result_list``, in that order."""
    return zip(results, changelist.result_list, strict=True)
