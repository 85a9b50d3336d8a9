"""A git server on loopback with an upstream repository, and a source's mirror folder."""

import pytest

from tests.sources.git_server import git_server, upstream  # noqa: F401 (fixtures)


@pytest.fixture
def mirror(tmp_path):
    """Where a source's bare mirror lives (DATA_DIR/sources/<id>.git in Pixie)."""
    return tmp_path / "sources" / "1.git"
