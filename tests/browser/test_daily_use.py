"""The status page in daily use, in headless Chromium at 1280 px: a repository's page and a
long check's page, served from a Redis seeded as the workers write it (tests/browser/seeded.py).
Pages are compared by structure (sections, rows, what is open or collapsed, links, widths),
never by pixels."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.cdp import load_page
from tests.browser.harness import require_chromium, screenshot
from tests.browser.seeded import (
    LONG_EXISTING,
    LONG_NEW,
    LONG_PULL,
    WEB,
    SeededServer,
    seeded_server,
)

require_chromium()

WIDTH = 1280
VIEWPORT = (WIDTH, 900)
# Run by DevTools in the page once loaded: the structure the assertions read.
COMMON = {
    "scripts": "document.scripts.length",
    "sheets": "document.styleSheets.length",
    # Readable at 1280 px: nothing wider than the window, so no sideways scrolling.
    "overflow": "document.documentElement.scrollWidth - document.documentElement.clientWidth",
    "refresh": "document.querySelector('meta[http-equiv=refresh]')?.content ?? null",
}


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SeededServer]:
    with seeded_server(tmp_path_factory.mktemp("seeded")) as running:
        yield running


def _rows(section: str) -> str:
    """Each body row's text of a section, its white space collapsed."""
    rows = f"[...document.querySelectorAll('#{section} tbody tr')]"
    return rows + ".map(r => r.innerText.replace(/\\s+/g, ' ').trim())"


def test_a_repository_page_at_1280_px(seeded: SeededServer, tmp_path: Path) -> None:
    probes = {
        **COMMON,
        "sections": "[...document.querySelectorAll('main section')].map(s => s.id)",
        "targets": _rows("targets"),
        "latest": _rows("latest"),
        "waiting": _rows("waiting"),
        "changes": _rows("change-prs"),
        "commands": "document.querySelectorAll('#commands tbody tr').length",
        "forge": "document.querySelector('h2.repository a')?.href ?? null",
    }
    log = load_page(seeded.repository_url, tmp_path / "chrome", probes, viewport=VIEWPORT)
    values = log.values
    assert log.errors == [], log.entries
    assert (values["scripts"], values["sheets"], values["overflow"]) == (0, 1, 0)
    assert values["refresh"] == "30"
    assert values["sections"] == [
        "targets",
        "latest",
        "waiting",
        "change-prs",
        "commands",
        "deliveries",
    ]
    assert values["forge"] == WEB
    targets = values["targets"]
    assert [t.split()[0] for t in targets] == ["platform", "prod", "staging"]
    # prod's state is main's newest push; the pull requests it fails are named beside it.
    assert "✓ accepted" in targets[1] and "main" in targets[1] and "#45, #42" in targets[1]
    latest = values["latest"]
    assert len(latest) == 6  # main once (its newest push), release, #42 to #45
    assert latest[0].startswith("2026-01-01 01:10:30 github main")
    assert any("#45 bulk-import" in row and "✗ failure" in row for row in latest)
    assert all("waited 1.2 s, ran" in row for row in latest)
    assert [w.split()[0] for w in values["waiting"]] == ["#44", "#44"]
    assert "v1/Namespace payments" in values["waiting"][0]
    changes = values["changes"]
    assert "reject" in changes[0] and "#46" in changes[0] and "no check kept" in changes[0]
    assert "approve" in changes[1] and "#43" in changes[1] and "✓ success" in changes[1]
    assert values["commands"] == 4
    shot = screenshot(seeded.repository_url, tmp_path / "repository.png", tmp_path / "c2")
    assert _png_width(shot) == WIDTH


def test_a_long_check_page_new_issues_first_the_rest_collapsed(
    seeded: SeededServer, tmp_path: Path
) -> None:
    url = seeded.check_url(LONG_PULL)
    probes = {
        **COMMON,
        "new": "document.querySelectorAll('#issues > table.findings tbody tr').length",
        "links": "[...document.querySelectorAll('#issues > table.findings a')].map(a => a.href)",
        "open": "document.querySelector('details.existing').open",
        "summary": "document.querySelector('details.existing > summary').innerText",
        "kept": "document.querySelectorAll('details.existing tbody tr').length",
        # Collapsed: the 180 rows are in the page, and the details take the summary's line.
        "collapsed": "document.querySelector('details.existing').getBoundingClientRect().height",
        "line": (
            "document.querySelector('details.existing > summary').getBoundingClientRect().height"
        ),
        "height": "document.documentElement.scrollHeight",
        "first_heading": "document.querySelector('#issues h2').innerText",
        "emphasis": "[...document.querySelectorAll('.markdown em')].map(e => e.innerText)",
        "asterisks": "document.querySelector('.markdown').innerText.includes('*')",
        "glyphs": (
            "[...document.querySelectorAll('.glyph')].every(g => g.getAttribute('aria-hidden')"
            " === 'true' && g.parentElement.innerText.trim().length > g.innerText.length)"
        ),
    }
    log = load_page(url, tmp_path / "chrome", probes, viewport=VIEWPORT)
    values = log.values
    assert log.errors == [], log.entries
    assert (values["scripts"], values["sheets"], values["overflow"]) == (0, 1, 0)
    assert values["refresh"] is None  # a check's page does not change: it does not reload
    assert values["first_heading"] == f"New issues ({LONG_NEW})"
    assert values["new"] == LONG_NEW
    assert len(values["links"]) == LONG_NEW
    assert all(
        link.startswith(f"{WEB}/blob/{'06' * 20}/clusters/prod/") for link in values["links"]
    )
    assert f"{WEB}/blob/{'06' * 20}/clusters/prod/apps/app-1/secret.yaml#L4" in values["links"]
    assert values["open"] is False and values["collapsed"] < 2 * values["line"]
    assert values["summary"] == f"{LONG_EXISTING} issues already on base"
    assert values["kept"] == LONG_EXISTING
    assert values["height"] < 3 * VIEWPORT[1]  # 192 issues, and the page stays short
    assert values["emphasis"] == ["(already on base)"] and values["asterisks"] is False
    assert values["glyphs"] is True  # every glyph is decoration beside a word
    shot = screenshot(url, tmp_path / "check.png", tmp_path / "c2")
    assert _png_width(shot) == WIDTH


def test_filters_and_refresh_in_the_browser(seeded: SeededServer, tmp_path: Path) -> None:
    rows = "[...document.querySelectorAll('#checks tbody tr')].map(r => r.innerText)"
    probes = {**COMMON, "rows": rows, "stop": "document.querySelector('header .refresh a').href"}
    log = load_page(seeded.url + "/?verdict=failure&forge=github", tmp_path / "c1", probes)
    assert log.errors == [], log.entries
    failures = log.values["rows"]
    assert len(failures) == 4 and all("failure" in row for row in failures)
    assert log.values["refresh"] == "30"
    stop = log.values["stop"]
    assert stop.endswith("/?verdict=failure&forge=github&refresh=0")
    stopped = load_page(stop, tmp_path / "c2", {**COMMON, "rows": rows})
    assert stopped.values["refresh"] is None and len(stopped.values["rows"]) == 4


def _png_width(path: Path) -> int:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width: int = struct.unpack(">I", data[16:20])[0]
    return width
