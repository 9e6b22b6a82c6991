"""Helpers for the YAML edit tests: the changed lines as difflib sees them, and both readings."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from ruamel.yaml import YAML

import bot.yaml.edit as edit

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "yaml_edits"

# (1-based first old line, the old lines, the new lines), endings included: with the lines
# difflib finds equal, this pins every byte of the result.
Hunk = tuple[int, list[str], list[str]]


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def hunks(before: bytes, after: bytes) -> list[Hunk]:
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        (i1 + 1, [line.decode() for line in old[i1:i2]], [line.decode() for line in new[j1:j2]])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def parse_hunks(text: str) -> list[Hunk]:
    """Hunks written as a diff: ``@<line>``, then ``-old`` and ``+new`` lines (each ending in
    LF unless a ``\\ No newline at end of file`` line follows it)."""
    out: list[Hunk] = []
    last: list[str] = []
    for line in text.strip("\n").split("\n"):
        if line.startswith("@"):
            out.append((int(line[1:]), [], []))
        elif line == "\\ No newline at end of file":
            last[-1] = last[-1].removesuffix("\n")
        else:
            last = out[-1][1] if line[0] == "-" else out[-1][2]
            assert line[0] in "-+", line
            last.append(line[1:] + "\n")
    return out


@dataclass(frozen=True)
class Case:
    fixture: str
    document: int
    op: str
    path: tuple[str, ...]
    value: object
    diff: list[Hunk]

    def __str__(self) -> str:
        return f"{self.fixture}:{self.document}:{self.op}:{'.'.join(self.path)}"


def parse_cases(text: str) -> list[Case]:
    """Edits written as ``== <fixture> <document> <op> <path> = <JSON value>`` (the value may
    go on over more lines), each followed by its diff (`parse_hunks`). A path is dotted, or a
    JSON list when a key holds a dot."""
    cases = []
    for block in ("\n" + text.strip()).split("\n== ")[1:]:
        header, at, diff = block.partition("\n@")
        head, _, value = " ".join(header.split("\n")).partition(" = ")
        diff = at[1:] + diff
        name, document, op, where = head.split(" ", 3)
        path = json.loads(where) if where.startswith("[") else where.split(".")
        cases.append(
            Case(name, int(document), op, tuple(path), json.loads(value), parse_hunks(diff))
        )
    return cases


def without_lines(data: bytes, first: int, last: int) -> bytes:
    """``data`` without its lines ``first``..``last`` (1-based, inclusive)."""
    lines = data.splitlines(keepends=True)
    return b"".join(lines[: first - 1] + lines[last:])


def readings(data: bytes) -> tuple[list[object], list[object]]:
    """How PyYAML's safe loader (libyaml) and ruamel.yaml's safe loader read every document."""
    text = data.decode("utf-8-sig")
    libyaml = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    ruamel = list(YAML(typ="safe", pure=True).load_all(text))
    return libyaml, ruamel


def at(value: object, path: Sequence[str]) -> object:
    for segment in path:
        if isinstance(value, list):
            value = value[int(segment)]
        else:
            assert isinstance(value, dict), (path, value)
            value = value[segment]
    return value


def typed(value: object) -> object:
    """A value with each scalar's type beside it, so True and 1 (or "1") never compare equal."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def assert_reads(data: bytes, document: int, path: Sequence[str], value: object) -> None:
    """Both parsers read ``value`` at ``path`` of that document."""
    for reading in readings(data):
        assert typed(at(reading[document], path)) == typed(value)


@pytest.fixture(params=["roundtrip", "lines"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each edit twice: ruamel.yaml's round trip first (the normal way), and line edits only
    (the fallback, as when the round trip would change other lines): the same bytes result."""
    if request.param == "lines":
        monkeypatch.setattr(edit, "roundtrip", lambda *args: None)
    yield str(request.param)
