"""The manifest flow's pure core: the manifest, GitHub's URLs, the conversion answer."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml

from bot.forges.github import manifest as github_manifest
from bot.forges.github.manifest import (
    AppCredentials,
    ManifestError,
    build_manifest,
    conversion_path,
    creation_url,
    environment_lines,
    parse_conversion,
    public_base,
)
from bot.settings import Settings
from bot.webhooks.github import _HANDLERS
from tests.fakeforge.github import shared_private_key

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "https://ichor.example.com"


def test_deploy_manifest_is_what_the_code_builds() -> None:
    recorded = yaml.safe_load((ROOT / "deploy/github-app.yml").read_text())
    assert recorded == build_manifest(EXAMPLE)


def test_events_are_the_ones_the_webhook_parser_acts_on() -> None:
    # Installation events reach every App unasked; ping is the hook's own.
    unasked = {"installation", "installation_repositories", "ping"}
    assert set(github_manifest.EVENTS) == set(_HANDLERS) - unasked


def test_docs_list_every_permission_and_event() -> None:
    page = (ROOT / "docs/installing.md").read_text()
    section = page.split("## On GitHub (a GitHub App)")[1].split("\n## ")[0]
    section = " ".join(section.split())
    for words in ("Checks", "Contents", "Pull requests", "Issues", "Merge queues", "Metadata"):
        assert f"{words} *" in section, words
    for event in github_manifest.EVENTS:
        assert f"`{event}`" in section, event


def test_manifest_urls_come_from_the_base() -> None:
    manifest = build_manifest("https://bot.example/ichor")
    assert manifest["url"] == "https://bot.example/ichor"
    assert manifest["hook_attributes"] == {
        "url": "https://bot.example/ichor/webhooks/github",
        "active": True,
    }
    assert manifest["redirect_url"] == "https://bot.example/ichor/setup/github/callback"
    assert manifest["public"] is False
    json.dumps(manifest)  # it travels as JSON


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("https://bot.example/", "https://bot.example"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        (" https://bot.example/a/b/ ", "https://bot.example/a/b"),
    ],
)
def test_public_base(url: str, base: str) -> None:
    assert public_base(url) == base


@pytest.mark.parametrize(
    "url",
    ["ftp://bot.example", "bot.example", "https://", "https://u:p@bot.example", "https://b/?q=1"],
)
def test_public_base_refuses(url: str) -> None:
    with pytest.raises(ManifestError, match="ICHOR_PUBLIC_URL"):
        public_base(url)


def test_creation_url_user_org_and_enterprise() -> None:
    assert (
        creation_url("https://github.com", "s1") == "https://github.com/settings/apps/new?state=s1"
    )
    assert (
        creation_url("https://github.com/", "s1", "octo-org")
        == "https://github.com/organizations/octo-org/settings/apps/new?state=s1"
    )
    assert (
        creation_url("https://ghe.example", "s-_1")
        == "https://ghe.example/settings/apps/new?state=s-_1"
    )


@pytest.mark.parametrize("org", ["-octo", "octo-", "a--b", "a/b", "a" * 40, "x y", "..", ""])
def test_creation_url_refuses_bad_org(org: str) -> None:
    with pytest.raises(ManifestError, match="organization"):
        creation_url("https://github.com", "s1", org)


def test_default_web_url_is_not_the_api() -> None:
    settings = Settings()
    assert creation_url(settings.github_url, "s").startswith("https://github.com/settings/")


@pytest.mark.parametrize("code", ["", "a/b", "../x", "a b", "a%2f", "x" * 201])
def test_conversion_path_refuses_bad_codes(code: str) -> None:
    with pytest.raises(ManifestError, match="code"):
        conversion_path(code)


def test_conversion_path() -> None:
    assert conversion_path("0a1b-C_d") == "/app-manifests/0a1b-C_d/conversions"


def _answer(**changes: object) -> bytes:
    body: dict[str, object] = {
        "id": 7,
        "slug": "ichor-bot",
        "name": "Ichor Bot",
        "html_url": "https://github.com/apps/ichor-bot",
        "owner": {"login": "octo-org"},
        "client_id": "Iv1.x",
        "client_secret": "cs",
        "webhook_secret": "whs",
        "pem": shared_private_key(),
    }
    body.update(changes)
    return json.dumps({k: v for k, v in body.items() if v is not ...}).encode()


def test_parse_conversion() -> None:
    app = parse_conversion(_answer())
    assert (app.app_id, app.slug, app.owner, app.webhook_secret) == (
        7,
        "ichor-bot",
        "octo-org",
        "whs",
    )
    assert app.pem.startswith("-----BEGIN PRIVATE KEY-----")
    assert "whs" not in repr(app) and "PRIVATE" not in repr(app)


def test_parse_conversion_null_webhook_secret() -> None:
    assert parse_conversion(_answer(webhook_secret=None)).webhook_secret is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"id": "7"}, "field id: expected an integer"),
        ({"id": ...}, "missing field id"),
        ({"pem": ...}, "missing field pem"),
        ({"pem": "not a key"}, "field pem is not a PEM key"),
        ({"slug": "a b"}, "field slug: not a valid name"),
        ({"owner": "x"}, "field owner: expected an object"),
        ({"html_url": "javascript:alert(1)"}, "field html_url is not a URL"),
    ],
)
def test_parse_conversion_names_what_failed(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        parse_conversion(_answer(**changes))


def test_parse_conversion_bounds() -> None:
    with pytest.raises(ManifestError, match="not JSON"):
        parse_conversion(b"<html>")
    with pytest.raises(ManifestError, match="over 1 MiB"):
        parse_conversion(b" " * (github_manifest.MAX_CONVERSION_BYTES + 1))


def test_environment_lines_quote_for_the_shell() -> None:
    app = AppCredentials(7, "s", "S", "https://x", "o", "a'b", shared_private_key())
    lines = environment_lines(app)
    assert lines.startswith("ICHOR_GITHUB_APP_ID=7\nICHOR_GITHUB_PRIVATE_KEY='-----BEGIN")
    assert "ICHOR_GITHUB_WEBHOOK_SECRET='a'\"'\"'b'\n" in lines
    # The names are the settings the bot reads.
    for name in ("github_app_id", "github_private_key", "github_webhook_secret"):
        assert f"ICHOR_{name.upper()}=" in lines
        assert name in Settings.model_fields


def test_the_core_is_pure() -> None:
    for module in ("bot/forges/github/manifest.py", "bot/web/setup_pages.py"):
        tree = ast.parse((ROOT / module).read_text())
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }
        io = {"httpx", "redis", "rq", "subprocess", "socket", "os", "time", "pathlib", "starlette"}
        assert not imported & io, (module, imported & io)
