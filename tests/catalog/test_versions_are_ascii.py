"""A version is written in ASCII digits: other scripts' digits (which Python's \\d
matches) are not a version, wherever one is read (bundle.toml, a tag, the admin)."""

import pytest
from django.core.exceptions import ValidationError

from catalog.validators import is_semver, validate_semver, version_key


@pytest.mark.parametrize("value", ["١.٢.٠", "1.٢.0", "１.0.0", "1.0.0-rc.٣"])
def test_digits_of_other_scripts_are_not_a_version(value):
    assert not is_semver(value)
    with pytest.raises(ValidationError):
        validate_semver(value)
    assert version_key(value) == (0, 0, 0, 0, ())


def test_an_ascii_version_still_is_one():
    assert is_semver("1.20.3-rc.1+build.5")
    assert version_key("1.20.3") > version_key("1.20.3-rc.1")
