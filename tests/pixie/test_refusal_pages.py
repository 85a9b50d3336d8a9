"""What a person reads where Pixie refuses them outside the API's JSON: a page that says
what happened and the way on (templates/401.html, 403.html, 404.html), and a browsable
API that offers a write only to whom may make it (pixie.core.web.api.PixieBrowsableAPI)."""

import pytest
from django.test import Client

from tests.clients import admin_for

pytestmark = pytest.mark.django_db

HTML = {"HTTP_ACCEPT": "text/html"}


def test_an_admin_page_for_another_role_says_so_with_a_way_back(acme, member):
    refused = admin_for(member).get("/admin/auth/group/")
    assert refused.status_code == 403
    page = refused.content.decode()
    assert "<h1>Not allowed</h1>" in page
    assert "Your login may not open this page" in page
    assert '<a href="/">Back to Pixie</a>' in page


def test_another_workspaces_object_is_not_found_and_the_page_says_so(acme, member):
    from tests.factories import make_user, make_workspace

    globex = make_workspace("globex", owner=make_user("otto"))
    missing = admin_for(member).get(f"/admin/pixie/workspace/{globex.pk}/dashboard/")
    assert missing.status_code == 404
    assert "<h1>Not found</h1>" in missing.content.decode()
    assert "Globex" not in missing.content.decode()


def test_under_debug_another_workspaces_page_is_pixie_s_refusal_not_django_s_debug_page(
    acme, member, settings
):
    """./scripts/dev runs with DEBUG on: a refused page must not list the site's URLs."""
    from tests.factories import make_user, make_workspace

    settings.DEBUG = True
    globex = make_workspace("globex", owner=make_user("otto"))
    missing = admin_for(member).get(f"/admin/pixie/workspace/{globex.pk}/dashboard/")
    assert missing.status_code == 404
    page = missing.content.decode()
    assert "<h1>Not found</h1>" in page and "There is no such page" in page
    assert "URLconf" not in page and "Globex" not in page


@pytest.mark.parametrize("path", ["/no-such-page/", "/admin/pixie/nothing-here/"])
def test_under_debug_an_address_nothing_answers_is_pixie_s_page_not_a_list_of_urls(
    acme, member, settings, path
):
    """A mistyped address under ./scripts/dev: no route matches, so no view runs."""
    settings.DEBUG = True
    missing = admin_for(member).get(path)
    assert missing.status_code == 404
    page = missing.content.decode()
    assert "<h1>Not found</h1>" in page
    assert "URLconf" not in page and "admin/" not in page.split("<h1>Not found</h1>")[1]


def test_under_debug_an_api_address_nothing_answers_is_json(acme, member, settings):
    settings.DEBUG = True
    missing = admin_for(member).get("/api/no-such-thing/")
    assert missing.status_code == 404
    assert missing["Content-Type"].startswith("application/json")
    assert "URLconf" not in missing.content.decode()


def test_under_debug_an_address_without_its_slash_is_still_redirected(acme, member, settings):
    settings.DEBUG = True
    answer = admin_for(member).get("/admin")
    assert answer.status_code == 301 and answer["Location"] == "/admin/"


def test_the_api_docs_ask_a_stranger_to_log_in(db):
    refused = Client().get("/api/docs/", **HTML)
    assert refused.status_code == 401
    page = refused.content.decode()
    assert "<h1>Log in first</h1>" in page
    assert 'href="/admin/login/?next=/api/docs/"' in page


def test_the_api_docs_load_swagger_ui_from_pixie(acme, member):
    page = admin_for(member).get("/api/docs/").content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn." not in page


def test_the_browsable_api_offers_an_owner_the_form_and_a_member_none(acme, owner, member):
    plans = "/api/workspaces/acme/plans/"
    as_owner = admin_for(owner).get(plans, **HTML).content.decode()
    as_member = admin_for(member).get(plans, **HTML).content.decode()
    post_form = f'<form action="{plans}" method="POST"'
    assert post_form in as_owner
    assert post_form not in as_member
    assert "HTTP 200 OK" in as_member  # the member reads the list itself
    # A member may start an agent's run: that form is theirs.
    turns = "/api/workspaces/acme/agents/collections/turns/"
    from agents.models import Agent

    Agent.objects.create(workspace=acme, slug="collections", name="Collections")
    assert f'<form action="{turns}" method="POST"' in (
        admin_for(member).get(turns, **HTML).content.decode()
    )


def test_the_browsable_api_asks_a_stranger_to_log_in_and_offers_nothing(acme):
    page = Client().get("/api/workspaces/acme/plans/", **HTML)
    assert page.status_code == 401
    body = page.content.decode()
    assert 'href="/admin/login/?next=/api/workspaces/acme/plans/"' in body
    assert 'method="POST"' not in body
