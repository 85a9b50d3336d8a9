"""If-None-Match as the delivery URLs read it (pixie.delivery.views.if_none_match): a pure
function, so a client's header answers 304 exactly when it lists the tag served."""

from pixie.delivery.views import if_none_match


def test_a_client_listing_several_tags_is_read_tag_by_tag():
    assert if_none_match('"old", W/"weak" ,"current"') == ['"old"', 'W/"weak"', '"current"']


def test_a_member_that_is_not_an_entity_tag_is_left_out():
    assert if_none_match('current, "kept", W/half, "') == ['"kept"']


def test_a_bare_star_is_kept_as_a_star_and_matches_no_served_tag():
    assert if_none_match(" * ") == ["*"]
    assert '"current"' not in if_none_match("*")


def test_a_weak_tag_does_not_match_the_strong_tag_served():
    assert '"current"' not in if_none_match('W/"current"')


def test_no_header_lists_nothing():
    assert if_none_match("") == []
