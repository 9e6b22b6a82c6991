"""docs/design.md: the product's rules, cited by section as ``design.md 5.1`` from code, tests
and docs. Its sections keep their numbers, its issue-code table is ``bot/gate/codes.py``, every
citation names a section it has, and nothing cites a document outside the repository.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from bot.gate.codes import CODES, IssueCode
from tests.conftest import ROOT

DESIGN = ROOT / "docs" / "design.md"
TEXT = DESIGN.read_text(encoding="utf-8")
# Where citations may be: the code, its tests, data and docs.
SCANNED = ("bot", "workers", "tests", "docs", "scripts", "bench", "fixtures", "deploy")
SCANNED_FILES = ("README.md",)
# The sections the code cites; numbers are never reused for something else.
NUMBERED = {"1", "2", "3", "4", "5", "6", "7", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6"}
NUMBERED |= {"5.1", "6.4", "6.5", "6.6"}

_SECTION = re.compile(r"^(?:## (\d+)\.|### (\d+\.\d+)) ", re.M)
_NUMBER = r"\d+(?:\.\d+)?"
# ``design.md 5.1``, ``design.md 5, 5.1``, ``design.md 3.1-3.5``: every number after the name.
_CITATION = re.compile(rf"design\.md((?:,? (?:and )?{_NUMBER}(?:[-–]{_NUMBER})?)+)(?![\d.]\d)")
# Citations of the document outside the repository, and citations in another form than
# ``design.md N`` (one form, so a search finds every one).
_OUTSIDE = re.compile(r"\bDESIGN\s+\d|\bDESIGN order|DESIGN\.md|\.\./shared/DESIGN")
_OTHER_FORM = re.compile(rf"docs/design\.md {_NUMBER}")


def _sections() -> set[str]:
    return {major or minor for major, minor in _SECTION.findall(TEXT)}


def _files() -> Iterator[Path]:
    for name in SCANNED:
        for path in sorted((ROOT / name).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield path
    for name in SCANNED_FILES:
        yield ROOT / name


def _texts() -> Iterator[tuple[Path, str]]:
    this = Path(__file__).resolve()
    for path in _files():
        if path.resolve() == this:
            continue
        try:
            yield path, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary data cites nothing


def _where(path: Path, text: str, at: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, at) + 1}"


def test_sections_keep_their_numbers() -> None:
    assert _sections() == NUMBERED


def test_issue_code_table_is_codes_py() -> None:
    part = TEXT.split("\n### 3.1 ", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \| (\w+) \| (.+) \|$", part, re.M)
    expected = [(code.value, CODES[code].severity.value, CODES[code].summary) for code in IssueCode]
    assert rows == expected, "regenerate the table of design.md 3.1 from bot/gate/codes.py"


def test_nothing_cites_the_outside_document() -> None:
    found = [
        f"{_where(path, text, m.start())}: {m.group()}"
        for path, text in _texts()
        for m in (*_OUTSIDE.finditer(text), *_OTHER_FORM.finditer(text))
    ]
    assert not found, "cite docs/design.md as `design.md N.N`:\n" + "\n".join(found)


def test_every_citation_names_a_section() -> None:
    sections = _sections()
    cited = 0
    missing: list[str] = []
    for path, text in _texts():
        for match in _CITATION.finditer(text):
            for number in re.findall(_NUMBER, match.group(1)):
                cited += 1
                if number not in sections:
                    missing.append(f"{_where(path, text, match.start())}: design.md {number}")
    assert not missing, "no such section in docs/design.md:\n" + "\n".join(missing)
    assert cited > 50  # the citations are found at all


def test_citation_pattern() -> None:
    def numbers(text: str) -> list[str]:
        return [n for m in _CITATION.finditer(text) for n in re.findall(_NUMBER, m.group(1))]

    assert numbers("(design.md 5.1)") == ["5.1"]
    assert numbers("design.md 5, 5.1 and more") == ["5", "5.1"]
    assert numbers("the content gate (design.md 3.1-3.5): one case") == ["3.1", "3.5"]
    assert numbers("design.md 5's table") == ["5"]
    assert numbers('design.md 6, "Safety"') == ["6"]
    assert numbers("see design.md 3.4.") == ["3.4"]
    assert numbers("[docs/design.md](docs/design.md) lists") == []
    assert _OUTSIDE.search("see DESIGN 5.1") and _OUTSIDE.search("the DESIGN.md file")
    assert not _OUTSIDE.search('assert "DESIGN" not in text')
