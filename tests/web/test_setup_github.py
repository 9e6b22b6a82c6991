"""Registering the GitHub App from its manifest, end to end over real HTTP: a browser (httpx
with a cookie jar) opens the setup page, posts its form to the fake GitHub's creation page,
follows the redirect back, and the bot exchanges the code with the fake's REST API, which
checks the request against GitHub's OpenAPI description."""

from __future__ import annotations

import contextlib
import html
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette

from bot.forges.github.manifest import build_manifest
from bot.settings import Settings
from bot.web.setup_github import setup_routes
from tests.fakeforge import FakeGitHub
from tests.support.forkserver import Process, popen_ichor_bot
from tests.web.conftest import Serve, free_port, started_within

BIN = Path(sys.executable).parent


class _Forms(HTMLParser):
    """Each form of a page: its method, action and named inputs; and whether a script is."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, object]] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        if tag == "script" or any(k.startswith("on") for k in values):
            self.scripts += 1
        if tag == "form":
            self.forms.append({**values, "inputs": {}})
        elif tag == "input" and self.forms and "name" in values:
            inputs = self.forms[-1]["inputs"]
            assert isinstance(inputs, dict)
            inputs[values["name"]] = values.get("value", "")


def manifest_form(page: str) -> tuple[str, str]:
    """The action and the ``manifest`` field of the page's form that posts to GitHub."""
    parser = _Forms()
    parser.feed(page)
    assert parser.scripts == 0, "the setup page runs no script"
    [form] = [f for f in parser.forms if f.get("method") == "post"]
    inputs = form["inputs"]
    assert isinstance(inputs, dict) and set(inputs) == {"manifest"}
    return str(form["action"]), inputs["manifest"]


def assert_private_page(response: httpx.Response) -> None:
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert "script-src" not in response.headers["content-security-policy"]
    assert "default-src 'none'" in response.headers["content-security-policy"]


@contextlib.contextmanager
def bot_process(env: dict[str, str], port: int, log: Path) -> Iterator[Process]:
    """``ichor-bot serve`` as it runs in production (in-process queue: no Redis needed)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("ICHOR_")}
    proc = popen_ichor_bot(
        ["serve", "--port", str(port)], {**base, **env, "PYTHONUNBUFFERED": "1"}, log
    )
    try:
        for _ in range(600):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            assert proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.05)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_manifest_flow_through_ichor_bot_serve(tmp_path: Path) -> None:
    port = free_port()
    bot = f"http://127.0.0.1:{port}"
    log = tmp_path / "web.log"
    with FakeGitHub() as fake:
        env = {
            "ICHOR_SETUP_ENABLED": "true",
            "ICHOR_PUBLIC_URL": bot + "/",
            # The fake serves GitHub's web pages and API on one origin, as Enterprise Server.
            "ICHOR_GITHUB_URL": fake.url,
            "ICHOR_GITHUB_API_URL": fake.url,
            "ICHOR_DATA_DIR": str(tmp_path / "data"),
        }
        with bot_process(env, port, log), httpx.Client(base_url=bot, timeout=30) as browser:
            page = browser.get("/setup/github", params={"org": "octo-org"})
            assert page.status_code == 200
            assert_private_page(page)
            assert f"form-action 'self' {fake.url};" in page.headers["content-security-policy"]
            action, manifest = manifest_form(page.text)
            state = browser.cookies["ichor_setup_state"]
            assert action == f"{fake.url}/organizations/octo-org/settings/apps/new?state={state}"
            assert json.loads(manifest) == build_manifest(bot)

            # The browser posts the form to GitHub; once the App exists GitHub sends it back.
            created = browser.post(action, data={"manifest": manifest})
            assert created.status_code == 302
            back = created.headers["location"]
            [registration] = fake.registrations()
            code = registration["code"]
            assert back == f"{bot}/setup/github/callback?code={code}&state={state}"
            assert registration["path"] == "/organizations/octo-org/settings/apps/new"

            shown = browser.get(back)
            assert shown.status_code == 200, shown.text
            assert_private_page(shown)
            [call] = fake.calls
            answer = call.response
            text = html.unescape(shown.text)
            assert f"ICHOR_GITHUB_APP_ID={answer['id']}\n" in text
            assert f"ICHOR_GITHUB_WEBHOOK_SECRET={answer['webhook_secret']}\n" in text
            assert f"ICHOR_GITHUB_PRIVATE_KEY='{answer['pem'].strip()}'" in text
            assert answer["slug"] in text and answer["client_secret"] not in text
            assert "ichor_setup_state" not in browser.cookies  # deleted with the page

            again = browser.get(back)  # reload, or the link replayed: never shown twice
            assert again.status_code == 400
            assert "already used" in again.text
            assert answer["webhook_secret"] not in again.text

        # Exactly one exchange, unauthenticated, validated against GitHub's description.
        assert fake.calls_summary() == [f"POST /app-manifests/{code}/conversions 201"]
        assert call.token is None and "authorization" not in call.headers
        assert fake.registrations()[0]["converted"] is True
        fake.assert_clean()
    logged = log.read_text()
    assert answer["webhook_secret"] not in logged
    assert answer["client_secret"] not in logged
    assert answer["pem"].splitlines()[1] not in logged
    assert f"GitHub App {answer['slug']} (id {answer['id']}) created" in logged


def test_setup_is_404_unless_enabled(serve: Serve) -> None:
    running = serve(redis_url=None)
    for path in ("/setup/github", "/setup/github/callback?code=a&state=b"):
        assert httpx.get(running.url + path).status_code == 404


def test_without_public_url_the_page_address_is_the_base(serve: Serve) -> None:
    with FakeGitHub() as fake:
        running = serve(redis_url=None, setup_enabled=True, github_url=fake.url)
        page = httpx.get(running.url + "/setup/github")
        assert page.status_code == 200
        action, manifest = manifest_form(page.text)
        assert action.startswith(f"{fake.url}/settings/apps/new?state=")
        assert json.loads(manifest)["hook_attributes"]["url"] == running.url + "/webhooks/github"
        assert "this page&#x27;s address" in page.text
        assert fake.calls == []


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@contextlib.contextmanager
def setup_app(fake: FakeGitHub, clock: _Clock) -> Iterator[str]:
    """Only the setup routes (with an injected clock) over a real loopback HTTP server."""
    settings = Settings(
        setup_enabled=True, github_url=fake.url, github_api_url=fake.url, public_url=None
    )
    app = Starlette(routes=setup_routes(settings, clock=clock))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    started_within(server, thread)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _register(browser: httpx.Client, fake_url: str) -> str:
    """Open the page and submit its form on the fake GitHub: the callback URL it sends back."""
    action, manifest = manifest_form(browser.get("/setup/github").text)
    assert action.startswith(fake_url)
    created = browser.post(action, data={"manifest": manifest})
    assert created.status_code == 302
    return created.headers["location"]


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake
        assert fake.response_errors == []


def test_an_expired_state_is_refused(fake: FakeGitHub) -> None:
    clock = _Clock()
    with setup_app(fake, clock) as url, httpx.Client(base_url=url) as browser:
        back = _register(browser, fake.url)
        clock.now += 15 * 60  # the state's lifetime
        refused = browser.get(back)
        assert refused.status_code == 400
        assert "expired" in refused.text
    assert fake.calls == []  # GitHub never asked


def test_a_state_inside_its_lifetime_works(fake: FakeGitHub) -> None:
    clock = _Clock()
    with setup_app(fake, clock) as url, httpx.Client(base_url=url) as browser:
        back = _register(browser, fake.url)
        clock.now += 15 * 60 - 1
        assert browser.get(back).status_code == 200
    assert [c.status for c in fake.calls] == [201]
    fake.assert_clean()


def test_another_browser_cannot_use_the_callback(fake: FakeGitHub) -> None:
    """A callback link for an App someone else registered (they know its key) is refused."""
    with setup_app(fake, _Clock()) as url, httpx.Client(base_url=url) as attacker:
        back = _register(attacker, fake.url)
        with httpx.Client(base_url=url) as victim:
            refused = victim.get(back)
            assert refused.status_code == 400
            assert "another browser" in refused.text
        # Refused once, the state is spent: not even the browser that started it may use it.
        assert attacker.get(back).status_code == 400
    assert fake.calls == []


def test_a_flood_of_setup_pages_cannot_spend_anothers_state(fake: FakeGitHub) -> None:
    """Anyone may open the page; 150 openings must not evict the state of the browser that is
    on GitHub creating its App (a global cap of 100 once did, and its callback was refused)."""
    with setup_app(fake, _Clock()) as url, httpx.Client(base_url=url) as browser:
        back = _register(browser, fake.url)
        for _ in range(150):
            assert httpx.get(url + "/setup/github").status_code == 200
        assert browser.get(back).status_code == 200
    assert [c.status for c in fake.calls] == [201]
    fake.assert_clean()


def test_a_code_github_does_not_know(fake: FakeGitHub) -> None:
    with setup_app(fake, _Clock()) as url, httpx.Client(base_url=url) as browser:
        back = _register(browser, fake.url)
        forged = back.replace("code=", "code=0", 1)
        refused = browser.get(forged)
        assert refused.status_code == 400
        assert "GitHub does not know this code" in refused.text
        assert_private_page(refused)
    assert [c.summary() for c in fake.calls] == [
        f"POST /app-manifests/0{fake.registrations()[0]['code']}/conversions 404"
    ]
    fake.assert_clean()


def test_github_unavailable(fake: FakeGitHub) -> None:
    fake.inject("POST", r"/app-manifests/.*", status=503)
    with setup_app(fake, _Clock()) as url, httpx.Client(base_url=url) as browser:
        failed = browser.get(_register(browser, fake.url))
        assert failed.status_code == 502
        assert "503" in failed.text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/setup/github?org=-bad", "not a GitHub organization name"),
        ("/setup/github/callback?code=abc", "the state is missing or malformed"),
        ("/setup/github/callback?state=abc&code=a%2Fb", "the code is missing or malformed"),
        ("/setup/github/callback?state=unknown&code=abc", "unknown, expired or already used"),
    ],
)
def test_bad_requests_are_refused(fake: FakeGitHub, path: str, message: str) -> None:
    with setup_app(fake, _Clock()) as url:
        refused = httpx.get(url + path)
    assert refused.status_code == 400
    assert message in refused.text
    assert fake.calls == []


def test_the_page_escapes_what_it_shows(fake: FakeGitHub) -> None:
    with setup_app(fake, _Clock()) as url:
        page = httpx.get(url + "/setup/github", params={"org": '"><script>'})
    assert page.status_code == 400
    assert "<script>" not in page.text and "&quot;&gt;&lt;script&gt;" in page.text
