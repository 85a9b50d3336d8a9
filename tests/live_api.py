"""Calling the API of a Pixie server a test started in a subprocess, with a token."""

import json
import urllib.error
import urllib.request


def api_call(
    base_url: str, token: str, method: str, path: str, data: dict | None = None, *, timeout=60
) -> tuple[int, dict]:
    """(status, parsed JSON body) of one request; an HTTP error is an answer, not a raise."""
    request = urllib.request.Request(  # noqa: S310 (a loopback URL the test built)
        base_url + path,
        data=None if data is None else json.dumps(data).encode(),
        method=method,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")
