"""The text table ``kubectl api-resources -o wide`` prints, read back into served types.

kubectl writes it through a tab writer: columns are space-padded to a common width and a cell
may itself hold spaces (older kubectl prints VERBS as ``[get list watch]``; newer ones as
``get,list,watch``) and SHORTNAMES or CATEGORIES may be empty. So a row is cut at the column
offsets of the header line, never split on whitespace. Subresources are not in the table, so
every type read from it serves none as far as the registry can tell.
"""

from __future__ import annotations

import re

from bot.registry.discovery import ServedType
from bot.registry.followability import CLUSTER, NAMESPACED

REQUIRED_COLUMNS = ("NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS")
_HEADER_WORD = re.compile(r"\S+")
_VERB = re.compile(r"[a-z]+")
MAX_ROWS = 20_000


class TableError(ValueError):
    def __init__(self, line: int, problem: str) -> None:
        super().__init__(f"line {line}: {problem}")
        self.line = line
        self.problem = problem


def looks_like_table(text: str) -> bool:
    """Whether the first meaningful line is the table's header."""
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            words = line.split()
            return bool(words) and words[0] == "NAME" and "KIND" in words
    return False


def read_table(text: str) -> tuple[ServedType, ...]:
    columns: list[tuple[str, int]] | None = None
    types: list[ServedType] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if columns is None:
            columns = _header(line, number)
            continue
        if len(types) >= MAX_ROWS:
            raise TableError(number, f"more than {MAX_ROWS} rows")
        types.append(_row(_cells(line, columns, number), number))
    if columns is None:
        raise TableError(1, "no header line (NAME SHORTNAMES APIVERSION ...)")
    return tuple(types)


def _header(line: str, number: int) -> list[tuple[str, int]]:
    columns = [(m.group(), m.start()) for m in _HEADER_WORD.finditer(line)]
    names = [name for name, _ in columns]
    if "APIGROUP" in names and "APIVERSION" not in names:
        raise TableError(
            number,
            "the table has APIGROUP but no APIVERSION column, so versions are unknown; record "
            "it with a kubectl that prints APIVERSION",
        )
    missing = [c for c in REQUIRED_COLUMNS if c not in names]
    if missing:
        hint = " (record it with `kubectl api-resources -o wide`)" if "VERBS" in missing else ""
        raise TableError(number, f"the header lacks the column(s) {', '.join(missing)}{hint}")
    if len(set(names)) != len(names):
        raise TableError(number, "the header names a column twice")
    return columns


def _cells(line: str, columns: list[tuple[str, int]], number: int) -> dict[str, str]:
    cells: dict[str, str] = {}
    for index, (name, start) in enumerate(columns):
        end = columns[index + 1][1] if index + 1 < len(columns) else len(line)
        if start > 0 and start <= len(line) and not line[start - 1].isspace():
            raise TableError(
                number,
                f"the {name} column does not start where the header says; the row is "
                "not aligned with the header",
            )
        cells[name] = line[start:end].strip()
    return cells


def _row(cells: dict[str, str], number: int) -> ServedType:
    name, api_version, kind = cells["NAME"], cells["APIVERSION"], cells["KIND"]
    for column, value in (("NAME", name), ("APIVERSION", api_version), ("KIND", kind)):
        if not value or " " in value:
            raise TableError(number, f"{column} {value!r} is not a single word")
    if "/" in name:
        raise TableError(number, f"NAME {name!r} is a subresource; the table lists resources")
    if api_version.count("/") > 1:
        raise TableError(number, f"APIVERSION {api_version!r} is not group/version")
    group, _, version = api_version.rpartition("/")
    namespaced = cells["NAMESPACED"]
    if namespaced not in ("true", "false"):
        raise TableError(number, f"NAMESPACED {namespaced!r} is not true or false")
    return ServedType(
        group=group,
        version=version,
        kind=kind,
        resource=name,
        scope=NAMESPACED if namespaced == "true" else CLUSTER,
        verbs=_verbs(cells["VERBS"], number),
        subresources=(),
    )


def _verbs(cell: str, number: int) -> tuple[str, ...]:
    inner = cell.removeprefix("[").removesuffix("]") if cell.startswith("[") else cell
    if cell.startswith("[") != cell.endswith("]"):
        raise TableError(number, f"VERBS {cell!r} has an unbalanced bracket")
    verbs = [v for v in re.split(r"[\s,]+", inner) if v]
    bad = [v for v in verbs if not _VERB.fullmatch(v)]
    if bad:
        raise TableError(number, f"VERBS holds {bad[0]!r}, which is not a verb")
    return tuple(sorted(set(verbs)))
