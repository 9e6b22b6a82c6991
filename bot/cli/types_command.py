"""``ichor-bot types``: every type a target's registry knows, its verdict, and why not.

The repository is read as a snapshot exactly as ``check`` reads it (the directory on disk, or
the git objects at ``--rev``). Each target's registry is the built-in types, plus the CRDs in
the target's YAML files, plus the target's capabilities file. ``--suggest`` writes a target's
capabilities file instead (``bot.cli.suggest_command``).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

from bot.cli.suggest_command import check_suggest_arguments, run_suggest
from bot.cli.targets import (
    add_tree_arguments,
    adhoc_target,
    open_snapshot,
    read_capabilities_file,
    resolve_targets,
)
from bot.errors import UsageError
from bot.gate.policy import CONFIG_FILE, TargetPolicy
from bot.gate.run import prepare_target
from bot.git.snapshot import Snapshot
from bot.paths import display_path
from bot.registry.capabilities import Capabilities, CapabilitiesError
from bot.registry.followability import TypeRecord
from bot.render.as_json import dumps, report_path
from bot.render.text import config_issue_line, counted

TYPES_JSON_VERSION = 1


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
            "file. A refused type shows the check that turned it away. With --suggest, write "
            "the capabilities file a --path target needs instead: an entry for each type its "
            "objects use that nothing else declares, taken from the file given with "
            "--capabilities (a recording of the cluster), else a CustomResourceDefinition "
            "anywhere in the repository, else a catalog of well-known CRD types; a type found "
            "nowhere is listed on standard error, not guessed. Review the file before "
            "committing it. Exit 0, or 2 on a usage or configuration error."
        ),
        epilog=(
            "examples:\n"
            "  ichor-bot types --path clusters/dev --capabilities api-resources.txt\n"
            "  ichor-bot types . --rev HEAD --format json\n"
            "  ichor-bot types --suggest --path clusters/dev --output clusters/dev.caps.txt\n"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "repo", nargs="?", default=".", metavar="PATH", help="the repository (default: .)"
    )
    add_tree_arguments(parser, "list the types of")
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: a table per target; json: every type with its checks (default: text)",
    )
    parser.add_argument(
        "--suggest",
        action="store_true",
        help="write the capabilities file the --path target needs (default: list the types)",
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="with --suggest: write the file here (default: standard output); it may be the "
        "file --capabilities names, which is read first",
    )


def run_types(args: argparse.Namespace) -> int:
    """Print the listing; errors are raised as ``IchorError`` for the CLI to print (exit 2)."""
    check_suggest_arguments(args)
    if args.suggest:
        return run_suggest(args)
    capabilities = read_capabilities_file(args.capabilities, args.target)
    targets = collect_types(args.repo, args.rev, args.target, capabilities)
    for target in targets:
        for warning in target.warnings:
            print(f"ichor-bot: warning: {warning}", file=sys.stderr)
    text = types_to_json(targets) if args.format == "json" else types_to_text(targets)
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def collect_types(
    repo: str, rev: str | None, target: str | None, capabilities: Capabilities | None = None
) -> list[TargetTypes]:
    adhoc = adhoc_target(target, capabilities) if target is not None else None
    with open_snapshot(repo, rev) as snapshot:
        targets = resolve_targets(snapshot, repo, adhoc, rev)
        if targets.policy is None:
            for issue in targets.config_issues:
                print(f"ichor-bot: error: {config_issue_line(issue)}", file=sys.stderr)
            count = counted(len(targets.config_issues), "error")
            raise UsageError(f"{CONFIG_FILE} has {count}; fix it first")
        return [_target_types(snapshot, t) for t in targets.policy.targets]


def _target_types(snapshot: Snapshot, target: TargetPolicy) -> TargetTypes:
    """The registry the gate itself uses for this target: built-ins, its CRDs, its capabilities."""
    prepared = prepare_target(snapshot, target)
    if prepared.catalog_error is not None:
        raise CapabilitiesError(prepared.catalog_error)
    warnings = tuple(
        f"{display_path(path)}: CustomResourceDefinition {problem}"
        for path, crd in prepared.crds
        for problem in crd.problems
    )
    return TargetTypes(target.name, target.path, prepared.registry.records(), warnings)


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
                "path": report_path(t.path),  # the real path, as in the check's JSON
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
    return dumps(types_to_dict(targets))
