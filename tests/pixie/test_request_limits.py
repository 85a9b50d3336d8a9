"""A request body past its ceiling is refused from its declared length, unread, whoever
sends it: an unauthenticated multipart POST was written whole to a temporary file (the
CSRF check parses every POST) before anything refused it."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_ceiling(settings):
    settings.PIXIE_REQUEST_MAX_BYTES = 1_000_000


def three_megabytes():
    return SimpleUploadedFile("big.bin", b"\0" * 3_000_000, "application/octet-stream")


def test_an_unauthenticated_multipart_post_past_the_ceiling_is_refused_unread(
    client, small_ceiling, monkeypatch
):
    from django.http import multipartparser

    def never(*args, **kwargs):
        raise AssertionError("the body was parsed")

    monkeypatch.setattr(multipartparser.MultiPartParser, "parse", never)
    fields = {"username": "x", "password": "y", "f": three_megabytes()}
    answer = client.post("/admin/login/", fields)
    assert answer.status_code == 413
    assert answer.content.decode().startswith("The request body is 3,000,")
    assert answer.content.decode().endswith("the limit here is 1,000,000 bytes.")


def test_the_api_answers_a_body_past_the_ceiling_in_json(client, small_ceiling):
    answer = client.post("/api/tokens/", {"f": three_megabytes()})
    assert answer.status_code == 413
    assert answer.json()["code"] == "too_large"


def test_a_body_within_the_ceiling_reaches_its_view(client, small_ceiling):
    answer = client.post("/admin/login/", {"username": "x", "password": "y", "f": b"small"})
    assert answer.status_code == 200
    assert "Please enter the correct username and password" in answer.content.decode()
