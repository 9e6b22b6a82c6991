"""``ICHOR_STATUS_AUTH``: basic auth on the status page and ``/metrics``, never on probes or
webhooks; checked against a real ``ichor-bot serve``."""

from __future__ import annotations

import base64

import httpx
import pytest

from bot.errors import UsageError
from bot.web.auth import BasicAuth, protected
from tests.web.conftest import ServeProc


def basic(credentials: bytes) -> bytes:
    return b"Basic " + base64.b64encode(credentials)


def test_the_check() -> None:
    auth = BasicAuth.parse("ops:pa:ss word")  # the password may hold colons and spaces
    assert auth.allows(basic(b"ops:pa:ss word"))
    assert auth.allows(b"basic  " + base64.b64encode(b"ops:pa:ss word"))
    for wrong in (
        None,
        b"",
        basic(b"ops:pa:ss wor"),
        basic(b"op:pa:ss word"),
        basic(b"ops"),
        b"Bearer " + base64.b64encode(b"ops:pa:ss word"),
        b"Basic not*base64",
    ):
        assert not auth.allows(wrong), wrong


@pytest.mark.parametrize("spec", ["nocolon", ":pw", "user:"])
def test_a_malformed_setting_is_refused(spec: str) -> None:
    with pytest.raises(UsageError, match="ICHOR_STATUS_AUTH"):
        BasicAuth.parse(spec)


def test_what_is_protected() -> None:
    assert protected("/") and protected("/metrics") and protected("/checks/x")
    assert not protected("/healthz") and not protected("/readyz")
    assert not protected("/webhooks/github")
    assert not protected("/api/v1/changes") and not protected("/api/v1/openapi.json")


def test_serve_asks_for_it(serve_process: ServeProc) -> None:
    server = serve_process(status_auth="ops:s3cret")
    for path in ("/", "/metrics", "/anything/below"):
        refused = httpx.get(server.url + path, timeout=5)
        assert refused.status_code == 401, path
        assert refused.headers["www-authenticate"].startswith("Basic ")
        assert httpx.get(server.url + path, auth=("ops", "wrong"), timeout=5).status_code == 401
    assert httpx.get(server.url + "/", auth=("ops", "s3cret"), timeout=5).status_code == 200
    assert httpx.get(server.url + "/metrics", auth=("ops", "s3cret"), timeout=5).status_code == 200
    assert httpx.get(server.url + "/healthz", timeout=5).status_code == 200
    assert httpx.get(server.url + "/readyz", timeout=5).status_code == 200
    assert server.post(timeout=5).status_code == 202


def test_without_it_the_page_is_open(serve_process: ServeProc) -> None:
    server = serve_process()
    assert httpx.get(server.url + "/", timeout=5).status_code == 200
