"""Pages that carry their own count: one query a page instead of COUNT and then the page."""

from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.db.models import Count, Window
from rest_framework.pagination import PageNumberPagination

# Databases take LIMIT and OFFSET as signed 64-bit integers; a page that starts past
# this is past the end of any table, and asking the database for it would be an error.
LAST_ROW = 2**63 - 1


class CountInPagePaginator(Paginator):
    """Fetches a page with COUNT(*) OVER () alongside, so the total needs no query of its own.

    Only for querysets without DISTINCT or aggregation: the window counts rows
    before either applies. A page past the end costs the usual COUNT to say so.
    """

    def page(self, number):
        number = self._page_number(number)
        bottom = (number - 1) * self.per_page
        if bottom + self.per_page > LAST_ROW:
            raise EmptyPage(self.error_messages["no_results"])
        counted = self.object_list.annotate(_count_in_page=Window(Count("*")))
        rows = list(counted[bottom : bottom + self.per_page])
        if rows:
            self.__dict__["count"] = rows[0]._count_in_page  # Paginator.count is cached
        elif number == 1 and self.allow_empty_first_page:
            self.__dict__["count"] = 0
        else:
            raise EmptyPage(self.error_messages["no_results"])
        return self._get_page(rows, number, self)

    def _page_number(self, number) -> int:
        try:
            if isinstance(number, float) and not number.is_integer():
                raise ValueError
            number = int(number)
        except (TypeError, ValueError):
            raise PageNotAnInteger(self.error_messages["invalid_page"]) from None
        if number < 1:
            raise EmptyPage(self.error_messages["min_page"])
        return number


class CountInPagePagination(PageNumberPagination):
    django_paginator_class = CountInPagePaginator
