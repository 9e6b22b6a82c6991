"""The status page in a real browser: headless Chromium against ``ichor-bot serve`` (in-process
queue, local forge), as a newcomer running ``make run`` sees it."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from bot.cli.demo import DEMO_PULL_REPO
from bot.state.history import FileHistory
from tests.browser.cdp import load_page
from tests.browser.harness import (
    HOSTILE_FILES,
    HOSTILE_NAME,
    HOSTILE_REPO,
    Server,
    demo_server,
    dump_dom,
    require_chromium,
    screenshot,
    start,
    stop,
)

require_chromium()


class _Dom(HTMLParser):
    """Element names, attribute names and text of a dumped DOM."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.hrefs: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]
        self.hrefs += [value or "" for name, value in attrs if name == "href"]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _dom(html: str) -> _Dom:
    parsed = _Dom()
    parsed.feed(html)
    return parsed


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with demo_server(tmp_path_factory.mktemp("status-page")) as running:
        yield running


def _check_url(server: Server, repository: str) -> str:
    entry = next(
        c for c in FileHistory(server.data_dir / "history").checks() if c.repository == repository
    )
    return f"{server.url}/checks/{entry.id}"


def test_demo_check_page_shows_the_refused_target_and_the_issue(
    server: Server, tmp_path: Path
) -> None:
    dom = _dom(dump_dom(_check_url(server, DEMO_PULL_REPO), tmp_path / "chrome"))
    text = " ".join(" ".join(dom.text).split())
    assert "demo/gitops #1" in text
    assert "✗ failure 1 target refused · 1 new issue" in text
    # The delivery was GitHub's; the result went to the local forge (make run): both, truly.
    assert "delivered by github posted to local" in text
    assert "branch add-cache" in text and "job github-demo-1" in text
    assert "prod clusters/prod ✗ refused ✓ accepted 1 0" in text  # the targets, as values
    assert "Target Path At head At base New issues On base" in text  # the summary's table
    assert "| prod | <code>clusters/prod</code> | ❌ refused |" in text  # and as posted
    assert "New issues (1)" in text
    assert "clusters/prod/v1/secrets/web/cache-password.yaml:1 prod error plaintext-secret" in text
    assert "Secret 'cache-password' is sensitive and stored in plain text" in text
    assert "already on base" not in text  # the demo's base has none: nothing collapsed


def test_overview_lists_verdicts_refusals_and_jobs(server: Server, tmp_path: Path) -> None:
    dom = _dom(dump_dom(server.url + "/", tmp_path / "chrome"))
    text = " ".join(" ".join(dom.text).split())
    assert "github posted to local demo/gitops #1 add-cache" in text
    assert "failure 1 target refused · 1 new issue" in text
    assert "401 unauthorized X-Hub-Signature-256: signature does not match" in text
    assert "400 bad-request body is not JSON" in text
    assert "2 finished" in text and "0 failed" in text
    assert "No comment commands handled yet." in text


def test_hostile_names_render_as_text(server: Server, tmp_path: Path) -> None:
    urls = [
        server.url + "/",
        _check_url(server, HOSTILE_REPO),  # file names from a real check
        _check_url(server, HOSTILE_NAME),  # a repository name, from the stored history
    ]
    for n, url in enumerate(urls):
        dom = _dom(dump_dom(url, tmp_path / f"chrome-{n}"))
        assert "script" not in dom.tags and "img" not in dom.tags and "b" not in dom.tags
        assert not [a for a in dom.attributes if a.startswith("on") or a == "style"]
        text = "".join(dom.text)
        if n == 1:
            for path in HOSTILE_FILES:
                assert path in text
        else:
            assert HOSTILE_NAME in text
    seeded = _dom(dump_dom(urls[2], tmp_path / "chrome-3"))
    assert "<script>alert(5)</script> | **summary**" in "".join(seeded.text)
    # Only the page's own links (stylesheet, icon, home, back, the repository's page): none
    # from the stored javascript: URL.
    assert seeded.hrefs and all(h.startswith("/") for h in seeded.hrefs), seeded.hrefs


@pytest.mark.parametrize("page", ["/", "demo", "hostile"])
def test_pages_have_no_console_errors(server: Server, tmp_path: Path, page: str) -> None:
    url = {
        "/": server.url + "/",
        "demo": _check_url(server, DEMO_PULL_REPO),
        "hostile": _check_url(server, HOSTILE_NAME),
    }[page]
    probes = {
        "scripts": "document.scripts.length",
        "sheets": "document.styleSheets.length",
        "styled": "getComputedStyle(document.querySelector('table')).borderCollapse",
        "alerted": "typeof window.__alerted",
    }
    log = load_page(url, tmp_path / "chrome", probes)
    assert log.errors == [], log.entries
    assert log.values == {"scripts": 0, "sheets": 1, "styled": "collapse", "alerted": "undefined"}


def test_console_errors_and_csp_violations_are_seen(server: Server, tmp_path: Path) -> None:
    """The collector above would pass on a page it cannot hear: prove it hears both kinds."""
    inject = (
        "document.body.insertAdjacentHTML('beforeend', '<p style=\"color:red\">x</p>');"
        "console.error('probe'); 1"
    )
    log = load_page(server.url + "/", tmp_path / "chrome", {"inject": inject})
    assert any("probe" in e for e in log.errors)
    assert any("Content Security Policy" in e for e in log.errors)


def test_history_survives_a_restart(server: Server, tmp_path: Path) -> None:
    stop(server)
    start(server, tmp_path / "serve.log")
    text = " ".join(" ".join(_dom(dump_dom(server.url + "/", tmp_path / "chrome")).text).split())
    assert "github posted to local demo/gitops #1" in text and "failure 1 target refused" in text
    assert "401 unauthorized" in text and "demo-1 202 queued" in text


def test_screenshots(server: Server, tmp_path: Path) -> None:
    for name, url in (
        ("overview", server.url + "/"),
        ("check", _check_url(server, DEMO_PULL_REPO)),
    ):
        shot = screenshot(url, tmp_path / f"{name}.png", tmp_path / f"chrome-{name}")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
