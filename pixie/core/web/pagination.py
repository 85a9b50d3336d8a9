"""The API's pages: a page that does not exist answers 404 saying which pages do.

Every list endpoint pages through PagePagination (the REST_FRAMEWORK default); the
catalog's bundle list uses CountInPagePagination, which fetches a page and its count
in one query.
"""

from django.core.paginator import EmptyPage, Page, PageNotAnInteger, Paginator
from django.db.models import Count, Window
from rest_framework.exceptions import NotFound
from rest_framework.pagination import CursorPagination, PageNumberPagination

from pixie.core.web.whole_numbers import whole_number

# The largest row offset a database takes (a signed 64-bit integer): a page beyond it
# holds nothing, and asking the database would overflow (SQLite raises OverflowError,
# PostgreSQL "bigint out of range").
MAX_OFFSET = 2**63 - 1
# A page number echoed back in a message is cut to this many characters.
ECHO_MAX = 40


def pages_phrase(num_pages: int) -> str:
    return "there is 1 page" if num_pages == 1 else f"there are {num_pages:,} pages"


class ClearPaginator(Paginator):
    """A Paginator whose refusals name the page asked for and the pages there are."""

    def validate_number(self, number):
        number = self._page_number(number)
        if number > self.num_pages:
            raise self._missing(number)
        return number

    def _page_number(self, number) -> int:
        try:
            if isinstance(number, float) and not number.is_integer():
                raise ValueError
            number = int(number)
        except (TypeError, ValueError):
            shown = str(number)
            if len(shown) > ECHO_MAX:
                shown = shown[:ECHO_MAX] + "..."
            raise PageNotAnInteger(
                f"Page {shown!r} is not a page number: {pages_phrase(self.num_pages)}, "
                "numbered from 1."
            ) from None
        if number < 1:
            raise EmptyPage(
                f"Page {number:,} does not exist: pages are numbered from 1 "
                f"({pages_phrase(self.num_pages)})."
            )
        return number

    def _missing(self, number: int) -> EmptyPage:
        return EmptyPage(f"Page {number:,} does not exist: {pages_phrase(self.num_pages)}.")


class CountInPagePaginator(ClearPaginator):
    """Fetches a page with COUNT(*) OVER () alongside, so the total needs no query of its own.

    Only for querysets without DISTINCT or aggregation: the window counts rows
    before either applies. A page past the end costs the usual COUNT to say so.
    """

    def page(self, number):
        number = self._page_number(number)
        bottom = (number - 1) * self.per_page
        if bottom + self.per_page > MAX_OFFSET:
            raise self._missing(number)
        counted = self.object_list.annotate(_count_in_page=Window(Count("*")))
        rows = list(counted[bottom : bottom + self.per_page])
        count = rows[0]._count_in_page if rows else None
        if rows:
            self.__dict__["count"] = count  # Paginator.count is cached
        elif number == 1 and self.allow_empty_first_page:
            self.__dict__["count"] = 0
        else:
            raise self._missing(number)
        return Page(rows, number, self)


class PagePagination(PageNumberPagination):
    # The paginator's message says it all ("Page 9 does not exist: there are 3 pages.").
    django_paginator_class = ClearPaginator
    invalid_page_message = "{message}"


class CountInPagePagination(PagePagination):
    django_paginator_class = CountInPagePaginator


class IdCursorPagination(CursorPagination):
    """Cursor pages over a whole-number column (an id). A cursor is the client's to send
    back: one whose position is not a whole number (made up, "abc", "-5", "²") is refused
    as DRF refuses a garbled one (404, "Invalid cursor"), before the database is asked to
    compare the column with it and fails (500)."""

    def decode_cursor(self, request):
        cursor = super().decode_cursor(request)
        position = cursor.position if cursor is not None else None
        if position is not None and whole_number(position) is None:
            raise NotFound(self.invalid_cursor_message)
        return cursor
