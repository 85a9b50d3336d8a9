"""If-None-Match as the delivery URLs read it (pixie.delivery.views.client_has, RFC 9110
13.1.2): a pure function, so a client's header answers 304 exactly when it holds the tag
served; tests/delivery/test_delivery_urls.py asks the real URLs the same."""

from pixie.delivery.views import client_has


def test_a_client_listing_several_tags_is_read_tag_by_tag():
    assert client_has('"old", W/"weak" ,"current"', '"current"')
    assert not client_has('"old", W/"weak"', '"current"')


def test_a_member_that_is_not_an_entity_tag_is_left_out():
    assert not client_has('current, W/current, "', '"current"')
    assert client_has('current, "current"', '"current"')


def test_a_bare_star_matches_whatever_is_served():
    assert client_has(" * ", '"current"')
    assert not client_has('"*"', '"current"')


def test_the_comparison_is_weak_as_if_none_match_asks():
    assert client_has('W/"current"', '"current"')
    assert client_has('"current"', 'W/"current"')
    assert not client_has('W/"curren"', '"current"')


def test_no_header_holds_nothing():
    assert not client_has("", '"current"')
