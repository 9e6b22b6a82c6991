#!/usr/bin/env python3
"""Generate ``bot/registry/builtin_types.json`` from the recorded Kubernetes discovery data.

Run by a maintainer when the data in ``../shared/k8s-discovery/`` changes; the output is
committed, and a test checks that this script still reproduces it byte for byte.

    .venv/bin/python scripts/gen_builtin_types.py [--source DIR] [--output FILE|-]

Sources, in order of trust (see PROVENANCE.md beside the data):

- ``aggregated_v2.json`` + ``api__v1.json``: upstream discovery snapshots (Kubernetes 1.33; the
  core list is slightly older). Authoritative: every type they list is taken as they list it.
- ``builtin-types.k8s-1.37.openapi-lightkube.json``: a table derived from the 1.37 OpenAPI spec.
  It only *adds* group/version/kinds that discovery lacks (real repositories already use them);
  where it overlaps discovery it is ignored, because its verbs and subresources are known to be
  less exact there.

Both snapshots' git blob ids are checked against PROVENANCE.md, so the output cannot silently
come from altered copies.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bot.registry.discovery import ServedType, SubresourceKind, read_discovery

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = ROOT.parent / "shared" / "k8s-discovery"
DEFAULT_OUTPUT = ROOT / "bot" / "registry" / "builtin_types.json"

DISCOVERY_FILES = ("aggregated_v2.json", "api__v1.json")
OPENAPI_TABLE = "builtin-types.k8s-1.37.openapi-lightkube.json"
OPENAPI_ORIGIN = "PyPI lightkube-models==1.37.0.8 (Kubernetes 1.37.0 OpenAPI), via PROVENANCE.md"
SOURCE_DISCOVERY = "discovery-1.33"
SOURCE_OPENAPI = "openapi-1.37"

_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")
_PROVENANCE_ROW = re.compile(
    r"^\|\s*`(?P<file>[^`]+)`\s*\|\s*`(?P<upstream>[^`]+)`\s*\|\s*`(?P<commit>[0-9a-f]{40})`"
    r"\s*\|\s*\d+\s*\|\s*`(?P<blob>[0-9a-f]{40})`\s*\|$"
)


class GenerationError(Exception):
    pass


def git_blob_id(data: bytes) -> str:
    """What ``git hash-object`` prints for these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes version order: GA over beta over alpha, then higher numbers first."""
    match = _VERSION.fullmatch(version)
    if match is None:
        raise GenerationError(f"unexpected API version {version!r}")
    major, stability, minor = match.groups()
    rank = {"alpha": 0, "beta": 1, None: 2}[stability]
    return rank, int(major), int(minor or 0)


def _provenance(source: Path) -> list[dict[str, str]]:
    claimed: dict[str, dict[str, str]] = {}
    for line in (source / "PROVENANCE.md").read_text(encoding="utf-8").splitlines():
        match = _PROVENANCE_ROW.match(line.strip())
        if match:
            claimed[match["file"]] = match.groupdict()
    rows: list[dict[str, str]] = []
    for name in DISCOVERY_FILES:
        if name not in claimed:
            raise GenerationError(f"PROVENANCE.md has no row for {name}")
        actual = git_blob_id((source / name).read_bytes())
        if actual != claimed[name]["blob"]:
            raise GenerationError(
                f"{name}: git blob id {actual} differs from PROVENANCE.md ({claimed[name]['blob']})"
            )
        row = claimed[name]
        rows.append(
            {
                "file": name,
                "blob": actual,
                "origin": f"kubernetes/kubernetes@{row['commit']}:{row['upstream']}",
                "source": SOURCE_DISCOVERY,
            }
        )
    rows.append(
        {
            "file": OPENAPI_TABLE,
            # Not listed in PROVENANCE.md; computed here so a changed table is visible in review.
            "blob": git_blob_id((source / OPENAPI_TABLE).read_bytes()),
            "origin": OPENAPI_ORIGIN,
            "source": SOURCE_OPENAPI,
        }
    )
    return rows


def _discovery(source: Path) -> tuple[list[ServedType], list[SubresourceKind]]:
    docs = [json.loads((source / name).read_text(encoding="utf-8")) for name in DISCOVERY_FILES]
    found = read_discovery(docs)
    # Aggregated discovery lists a group's preferred version first; the merge below re-derives
    # it from version priority, so check that the two agree on the authoritative data.
    for t in found.types:
        first = t.preferred
        best = max(
            (o.version for o in found.types if o.group == t.group and t.group),
            key=version_priority,
            default=t.version,
        )
        if t.group and first != (t.version == best):
            raise GenerationError(f"{t.group}: preferred version is not the highest priority one")
    return list(found.types), list(found.subresource_kinds)


def _openapi_rows(source: Path) -> list[dict[str, Any]]:
    rows = json.loads((source / OPENAPI_TABLE).read_text(encoding="utf-8"))
    if not isinstance(rows, list):
        raise GenerationError(f"{OPENAPI_TABLE}: expected a list of rows")
    return rows


def _answer(text: str, parent: ServedType, name: str) -> SubresourceKind | None:
    """``"policy/v1 Eviction"`` (the table's response kind) when it is not the parent's kind."""
    group_version, _, kind = text.partition(" ")
    group, _, version = group_version.rpartition("/")
    if (group, version, kind) == (parent.group, parent.version, parent.kind):
        return None
    via = f"{group_version_of(parent)} {parent.resource}/{name}"
    return SubresourceKind(group, version, kind, via)


def group_version_of(t: ServedType) -> str:
    return f"{t.group}/{t.version}" if t.group else t.version


def merge(source: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    types, answers = _discovery(source)
    origin = {(t.group, t.version, t.kind): SOURCE_DISCOVERY for t in types}
    by_gvk = {(t.group, t.version, t.kind) for t in types}
    by_gvr = {(t.group, t.version, t.resource) for t in types}
    added = 0
    for row in _openapi_rows(source):
        t = ServedType(
            group=row["group"],
            version=row["version"],
            kind=row["kind"],
            resource=row["resource"],
            scope=row["scope"],
            verbs=tuple(sorted(row["verbs"])),
            subresources=tuple(sorted(row["subresources"])),
        )
        gvk, gvr = (t.group, t.version, t.kind), (t.group, t.version, t.resource)
        if gvk in by_gvk and gvr in by_gvr:
            continue  # discovery is authoritative where the two overlap
        if gvk in by_gvk or gvr in by_gvr:
            raise GenerationError(f"{OPENAPI_TABLE}: {gvk} / {gvr} half-overlaps discovery")
        types.append(t)
        origin[gvk] = SOURCE_OPENAPI
        by_gvk.add(gvk)
        by_gvr.add(gvr)
        added += 1
        for name, sub in sorted(row["subresources"].items()):
            answer = _answer(sub["responseKind"], t, name)
            if answer is not None:
                answers.append(answer)
    preferred: dict[str, str] = {}
    for t in types:
        best = preferred.get(t.group)
        if best is None or version_priority(t.version) > version_priority(best):
            preferred[t.group] = t.version
    entries = [
        {
            "group": t.group,
            "version": t.version,
            "kind": t.kind,
            "resource": t.resource,
            "scope": t.scope,
            "verbs": list(t.verbs),
            "subresources": list(t.subresources),
            "preferred": preferred[t.group] == t.version,
            "source": origin[(t.group, t.version, t.kind)],
        }
        for t in types
    ]
    entries.sort(key=lambda e: (e["group"], e["version"], e["kind"]))
    _check_bijection(entries)
    return (
        entries,
        _subresource_kinds(answers, by_gvk),
        {
            SOURCE_DISCOVERY: len(entries) - added,
            SOURCE_OPENAPI: added,
        },
    )


def _check_bijection(entries: Iterable[dict[str, Any]]) -> None:
    kinds: dict[tuple[str, str, str], str] = {}
    resources: dict[tuple[str, str, str], str] = {}
    for e in entries:
        gv = (e["group"], e["version"])
        if kinds.setdefault((*gv, e["resource"]), e["kind"]) != e["kind"]:
            raise GenerationError(f"{gv} {e['resource']} serves two kinds")
        if resources.setdefault((*gv, e["kind"]), e["resource"]) != e["resource"]:
            raise GenerationError(f"{gv} {e['kind']} is served by two resources")


def _subresource_kinds(
    answers: Iterable[SubresourceKind], types: set[tuple[str, str, str]]
) -> list[dict[str, Any]]:
    """Kinds served only as a subresource's answer; a kind that is also a type is left out."""
    via: dict[tuple[str, str, str], set[str]] = {}
    for a in answers:
        if (a.group, a.version, a.kind) not in types:
            via.setdefault((a.group, a.version, a.kind), set()).add(a.via)
    return [
        {"group": g, "version": v, "kind": k, "via": sorted(paths)}
        for (g, v, k), paths in sorted(via.items())
    ]


def render(source: Path) -> str:
    """The JSON text: compact, one entry per line so a change reads well in review."""
    entries, answers, counts = merge(source)
    header = {
        "generator": "scripts/gen_builtin_types.py",
        "sources": _provenance(source),
        "counts": counts,
    }

    def dump(value: object) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    lines = ["{", f'"provenance":{dump(header)},', '"subresourceKinds":[']
    lines.append(",\n".join(dump(a) for a in answers))
    lines.append("],")
    lines.append('"types":[')
    lines.append(",\n".join(dump(e) for e in entries))
    lines.append("]}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # the hand-joined text must still be one JSON document
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="k8s-discovery dir")
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="file to write, or -")
    args = parser.parse_args(argv)
    try:
        text = render(args.source)
    except (GenerationError, OSError, ValueError, KeyError, TypeError) as exc:
        print(f"gen_builtin_types: {exc}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
