"""The fake GitHub's manifest flow: the creation page and ``POST /app-manifests/{code}/
conversions`` answer as GitHub documents, and refuse what GitHub refuses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from bot.forges.github.manifest import build_manifest
from tests.fakeforge import FakeGitHub, github


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake
        assert fake.response_errors == []


def register(fake: FakeGitHub, manifest: object, path: str = "/settings/apps/new") -> str:
    answer = httpx.post(
        f"{fake.url}{path}?state=s1", data={"manifest": json.dumps(manifest)}, timeout=30
    )
    assert answer.status_code == 302, answer.text
    location = urlsplit(answer.headers["location"])
    query = parse_qs(location.query)
    assert query["state"] == ["s1"]
    return query["code"][0]


def test_the_conversion_is_described_and_served() -> None:
    [op] = [
        o for o in github.supplemented().operations if o.operation_id == "apps/create-from-manifest"
    ]
    assert (op.method, op.template) == ("POST", "/app-manifests/{code}/conversions")


def test_a_code_converts_once(fake: FakeGitHub) -> None:
    code = register(
        fake, build_manifest("https://bot.example"), "/organizations/acme/settings/apps/new"
    )
    first = httpx.post(f"{fake.url}/app-manifests/{code}/conversions")
    assert first.status_code == 201
    app = first.json()
    assert app["owner"]["login"] == "acme"
    assert app["permissions"] == build_manifest("x")["default_permissions"]
    assert app["pem"].startswith("-----BEGIN PRIVATE KEY-----") and app["webhook_secret"]
    again = httpx.post(f"{fake.url}/app-manifests/{code}/conversions")
    assert again.status_code == 404
    assert fake.registrations()[0]["converted"] is True
    fake.assert_clean()


def test_a_credential_on_the_conversion_is_refused(fake: FakeGitHub) -> None:
    code = register(fake, build_manifest("https://bot.example"))
    answer = httpx.post(
        f"{fake.url}/app-manifests/{code}/conversions",
        headers={"authorization": f"Bearer {fake.make_jwt()}"},
    )
    assert answer.status_code == 401
    assert fake.auth_failures and "takes no credentials" in fake.auth_failures[0]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"hook_attributes": {"url": "ftp://x"}}, "hook_attributes.url"),
        ({"default_permissions": {"checks": "all"}}, "default_permissions"),
        ({"default_events": ["installation"]}, "installation is not an event"),
        ({"redirect_url": None}, "redirect_url must be a full URL"),
    ],
)
def test_a_bad_manifest_is_refused(
    fake: FakeGitHub, change: dict[str, object], problem: str
) -> None:
    manifest = {**build_manifest("https://bot.example"), **change}
    answer = httpx.post(f"{fake.url}/settings/apps/new", data={"manifest": json.dumps(manifest)})
    assert answer.status_code == 422
    assert problem in answer.text
    assert problem in fake.validation_errors[0]
