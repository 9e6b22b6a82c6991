"""The documentation: README.md, the pages of docs/ (the site mkdocs.yml builds) and the notes
under deploy/ link only to files of this repository and to headings that exist — on GitHub and
on the site alike —, the pages link only to each other (the site has nothing else), and every
page is in the site's nav. ``make docs`` builds the site with ``mkdocs build --strict``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.support.markdown_links import broken_links, github_anchors, links, site_anchors

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
DOCUMENTS = [ROOT / "README.md", *PAGES, *sorted((ROOT / "deploy").rglob("*.md"))]


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_relative_links_resolve(document: Path) -> None:
    broken = broken_links(document, ROOT)
    assert not broken, f"{_name(document)}:\n" + "\n".join(broken)


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_points_only_inside_the_repository(document: Path) -> None:
    text = document.read_text(encoding="utf-8")
    assert not re.search(r"\bDESIGN\b|seeds/", text), _name(document)


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_pages_link_only_to_pages(page: Path) -> None:
    outside = [
        target
        for target in links(page.read_text(encoding="utf-8"))
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)
        and target.partition("#")[0]
        and not (page.parent / target.partition("#")[0]).resolve().is_relative_to(DOCS)
    ]
    assert not outside, f"{_name(page)} links outside docs/ (the site has only docs/): {outside}"


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for entry in nav for page in _nav_pages(entry)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    assert sorted(nav) == sorted(page.name for page in PAGES)
    assert len(nav) == len(set(nav))


def test_the_link_checker(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/a.md").write_text("# A\n\n## Twice\n\n## Twice\n\n## Sub: `x --y`\n")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/a.md) [ok](docs/a.md#twice) [ok](#b) [web](https://example.org/x)\n"
        "[gone](docs/b.md) [no heading](docs/a.md#c) [out](../elsewhere.md)\n"
        "[site differs](docs/a.md#sub-x---y) [repeated](docs/a.md#twice-1)\n"
        "`[code](docs/b.md)`\n```\n[fenced](docs/b.md)\n```\n## B\n"
    )
    assert broken_links(page, tmp_path) == [
        "docs/b.md: no such file in the repository",
        "docs/a.md#c: no such heading in docs/a.md",
        "../elsewhere.md: no such file in the repository",
        "docs/a.md#sub-x---y: no such heading in docs/a.md",
        "docs/a.md#twice-1: no such heading in docs/a.md",
    ]


def test_the_anchor_rules() -> None:
    text = "# A `b`: c.d\n```\n# not a heading\n```\n## Twice\n## Twice\n## x --y\n"
    assert github_anchors(text) == {"a-b-cd", "twice", "twice-1", "x---y"}
    assert site_anchors(text) == {"a-b-cd", "twice", "twice_1", "x-y"}
