"""``ichor-bot types``: every type a target's registry knows, its verdict, and why not.

The repository is read as a snapshot exactly as ``check`` reads it (the directory on disk, or
the git objects at ``--rev``). Each target's registry is the built-in types, plus the CRDs in
the target's YAML files, plus the target's capabilities file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from bot.config import load_config
from bot.config_paths import normalize_repo_path
from bot.dir_snapshot import read_directory
from bot.errors import UsageError
from bot.gate.policy import CONFIG_FILE
from bot.git_snapshot import GitRepository
from bot.paths import display_path
from bot.registry.capabilities import (
    MAX_CAPABILITIES_BYTES,
    Capabilities,
    CapabilitiesError,
    parse_capabilities,
)
from bot.registry.crd import CrdFacts, crd_facts, is_crd
from bot.registry.model import TypeRecord
from bot.registry.registry import build_registry
from bot.snapshot import EntryKind, Snapshot

TYPES_JSON_VERSION = 1
# Files over this size are not read for CRDs (the gate refuses them as file-too-large anyway).
MAX_CRD_FILE_BYTES = 4 << 20
_YAML_SUFFIXES = (".yaml", ".yml")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True, slots=True)
class TargetTypes:
    name: str
    path: str
    records: tuple[TypeRecord, ...]
    warnings: tuple[str, ...] = ()


def add_types_parser(subparsers: Any) -> None:
    """Register ``types`` on the CLI's subcommand action (``argparse._SubParsersAction``)."""
    parser = subparsers.add_parser(
        "types",
        help="list every type a target's registry knows, with its verdict",
        description=(
            "List the types each target of PATH/.ichor.yaml (or one ad-hoc --path) may hold: "
            "built-in Kubernetes types, CRDs found in the target, and the target's capabilities "
            "file. A refused type shows the check that turned it away. Exit 0, or 2 on a usage "
            "or configuration error."
        ),
    )
    parser.add_argument(
        "repo", nargs="?", default=".", metavar="PATH", help="repository (default: .)"
    )
    parser.add_argument("--rev", help="read the committed tree at this revision (e.g. HEAD)")
    parser.add_argument(
        "--path",
        dest="target",
        metavar="TARGET",
        help="list the types of this one repo-relative path; .ichor.yaml is not read",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run_types(args: argparse.Namespace) -> int:
    """Print the listing; errors are raised as ``IchorError`` for the CLI to print (exit 2)."""
    targets = collect_types(args.repo, args.rev, args.target)
    for target in targets:
        for warning in target.warnings:
            print(f"ichor-bot: warning: {warning}", file=sys.stderr)
    text = types_to_json(targets) if args.format == "json" else types_to_text(targets)
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def collect_types(repo: str, rev: str | None, target: str | None) -> list[TargetTypes]:
    with _snapshot(repo, rev) as snapshot:
        if target is not None:
            try:
                path = normalize_repo_path(target)
            except ValueError as exc:
                raise UsageError(f"--path {target!r}: {exc}") from None
            return [_target_types(snapshot, _adhoc_name(path), path, None)]
        result = load_config(snapshot)
        if not result.present:
            raise UsageError(
                f"no {CONFIG_FILE} in {repo}; add one, or pass --path TARGET to list the types "
                "of one path without configuration"
            )
        if result.config is None:
            for issue in result.issues:
                print(f"{CONFIG_FILE}: {issue.kind}: {issue.message}", file=sys.stderr)
            raise UsageError(f"{CONFIG_FILE} has {len(result.issues)} issue(s); fix it first")
        return [
            _target_types(snapshot, t.name, t.path, t.capabilities) for t in result.config.targets
        ]


def _snapshot(repo: str, rev: str | None) -> Snapshot:
    if rev is not None:
        return GitRepository(repo).snapshot(rev)
    return read_directory(repo)


def _adhoc_name(path: str) -> str:
    # The same rule `check --path` names its ad-hoc target by.
    last = path.rpartition("/")[2].lower()
    name = re.sub(r"[^a-z0-9-]+", "-", last).strip("-")[:63].strip("-")
    return name or "root"


def _target_types(
    snapshot: Snapshot, name: str, path: str, capabilities_path: str | None
) -> TargetTypes:
    warnings: list[str] = []
    crds: list[CrdFacts] = []
    for file_path, crd in _crds_in_target(snapshot, path):
        for problem in crd.problems:
            warnings.append(f"{display_path(file_path)}: CustomResourceDefinition {problem}")
        crds.append(crd)
    capabilities = None
    if capabilities_path is not None:
        capabilities = _read_capabilities(snapshot, capabilities_path)
    registry = build_registry(crds=crds, capabilities=capabilities)
    return TargetTypes(name, path, registry.records(), tuple(warnings))


def _crds_in_target(snapshot: Snapshot, root: str) -> Iterator[tuple[str, CrdFacts]]:
    """CRDs in the target's YAML files, read with the plain safe loader.

    A stand-in until the content gate's own reader (bounded, kustomize-aware) is shared: a
    file that does not parse, or is too large, simply contributes no CRD here.
    """
    for entry in snapshot.under(root):
        if entry.kind is not EntryKind.FILE or not entry.path.endswith(_YAML_SUFFIXES):
            continue
        if entry.size > MAX_CRD_FILE_BYTES:
            continue
        try:
            for doc in yaml.load_all(entry.read(), Loader=_Loader):
                if is_crd(doc):
                    facts = crd_facts(doc)
                    if facts is not None:
                        yield entry.path, facts
        except (yaml.YAMLError, ValueError, RecursionError):
            continue


def _read_capabilities(snapshot: Snapshot, path: str) -> Capabilities:
    shown = display_path(path)
    entry = snapshot.get(path)
    if entry is None:
        raise CapabilitiesError(f"the capabilities file {shown} does not exist")
    if entry.kind is not EntryKind.FILE:
        raise CapabilitiesError(f"the capabilities file {shown} is a {entry.kind}, not a file")
    if entry.size > MAX_CAPABILITIES_BYTES:
        raise CapabilitiesError(
            f"the capabilities file {shown} is {entry.size} bytes; the limit is "
            f"{MAX_CAPABILITIES_BYTES}"
        )
    try:
        return parse_capabilities(entry.read())
    except CapabilitiesError as exc:
        raise CapabilitiesError(f"{shown}: {exc}") from None


def _shown_path(path: str) -> str:
    return display_path(path) if path else "."


def _type_name(record: TypeRecord) -> str:
    return f"{record.group_version} {record.kind}"


def types_to_text(targets: list[TargetTypes]) -> str:
    lines: list[str] = []
    for target in targets:
        if lines:
            lines.append("")
        records = target.records
        followable = sum(1 for r in records if r.followable)
        lines.append(
            f"{target.name} ({_shown_path(target.path)}): {len(records)} types, "
            f"{followable} followable, {len(records) - followable} not followable"
        )
        rows = [("TYPE", "RESOURCE", "SCOPE", "ORIGIN", "VERDICT", "SUMMARY")]
        rows.extend(_row(r) for r in records)
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        for row in rows:
            cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
            lines.append("  " + "  ".join([*cells, row[5]]).rstrip())
    return "\n".join(lines) + "\n"


def _row(record: TypeRecord) -> tuple[str, str, str, str, str, str]:
    summary = record.summary
    failing = record.failing
    if failing is not None:
        summary += f"  [check: {failing.requirement}]"
    if record.sensitive:
        summary += "  (sensitive: stored SOPS-encrypted)"
    return (
        _type_name(record),
        record.resource or "-",
        record.scope or "-",
        record.origin,
        record.verdict.value,
        summary,
    )


def types_to_dict(targets: list[TargetTypes]) -> dict[str, Any]:
    return {
        "version": TYPES_JSON_VERSION,
        "targets": [
            {
                "name": t.name,
                "path": _shown_path(t.path),
                "types": [_record_dict(r) for r in t.records],
            }
            for t in targets
        ],
    }


def _record_dict(record: TypeRecord) -> dict[str, Any]:
    return {
        "group": record.group,
        "version": record.version,
        "kind": record.kind,
        "resource": record.resource,
        "scope": record.scope,
        "origin": record.origin,
        "verdict": record.verdict.value,
        "summary": record.summary,
        "sensitive": record.sensitive,
        "checks": [
            {
                "requirement": c.requirement,
                "result": "pass" if c.passed else "fail",
                "reason": c.reason,
                "detail": c.detail,
            }
            for c in record.checks
        ],
    }


def types_to_json(targets: list[TargetTypes]) -> str:
    return json.dumps(types_to_dict(targets), indent=2, ensure_ascii=False) + "\n"
