"""``ichor-bot check``: its options, the targets the given paths select, and the exit status."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from bot.cli.check_paths import CheckScope, locate, require_present, select_targets
from bot.cli.targets import (
    add_tree_arguments,
    adhoc_target,
    open_snapshot,
    read_capabilities_file,
    resolve_targets,
)
from bot.errors import UsageError
from bot.gate import Report
from bot.gate.codes import Severity
from bot.gate.content.cache import FactsCache
from bot.gate.policy import DEFAULT_MAX_YAML_BYTES
from bot.gate.run import run_gate
from bot.render import (
    report_to_brief,
    report_to_github,
    report_to_json,
    report_to_sarif,
    report_to_text,
)
from bot.render.sarif import DOCS_URL
from bot.render.text import config_issue_line
from bot.state.facts_disk import DirectoryFactsCache

FORMATS: Mapping[str, Callable[[Report], str]] = {
    "text": report_to_text,
    "json": report_to_json,
    "sarif": report_to_sarif,
    "github": report_to_github,
    "brief": report_to_brief,
}
_FORMAT_HELP = (
    "text: verdicts, issues grouped by code and the fix for each, for a person; json: the "
    "report; sarif: SARIF 2.1.0 for code scanning, its help links under ICHOR_DOCS_URL (this "
    "version's docs); github: GitHub Actions annotations; brief: one 'path:line: code: "
    "message' line per issue (default: text)"
)

EXAMPLES = """\
examples:
  ichor-bot check                          every target of ./.ichor.yaml, files on disk
  ichor-bot check . --rev HEAD             what was committed at HEAD
  ichor-bot check clusters/prod/app.yaml   the target(s) holding these paths (as pre-commit does)
  ichor-bot check --path clusters/dev --capabilities api-resources.txt
                                           one directory as a target, without .ichor.yaml
  ichor-bot check --rev HEAD --format sarif -o ichor.sarif
  ichor-bot check --format brief | grep not-followable

exit status: 0 every target accepted; 1 a target refused (or, with --fail-on-warning, has a
warning); 2 a usage or configuration error (one line each on standard error); 3 an internal
error, never a verdict (ICHOR_DEBUG=1 shows its traceback).
"""


def add_check_parser(commands: Any, formatter: type[argparse.HelpFormatter]) -> None:
    """Register ``check`` on the CLI's subcommand action (``argparse._SubParsersAction``)."""
    check = commands.add_parser(
        "check",
        help="run the acceptance gate on a repository, or on the targets holding some paths",
        description=(
            "Check every target of .ichor.yaml (or one ad-hoc --path) and print the verdict of "
            "each. Without --rev the directory on disk is read; with --rev, the git objects at "
            "REV. A tree, not a change, is checked: every issue counts, also in a target under "
            "enforce: new (which weighs pull requests on the forge)."
        ),
        epilog=EXAMPLES,
        formatter_class=formatter,
    )
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="the repository root; or files and directories inside one repository, each "
        "selecting the whole target that holds it (others are skipped) (default: .)",
    )
    add_tree_arguments(check, "check")
    check.add_argument("--format", choices=list(FORMATS), default="text", help=_FORMAT_HELP)
    check.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the report to FILE, never coloured (default: standard output)",
    )
    check.add_argument(
        "-q", "--quiet", action="store_true", help="text: the verdict lines only (default: off)"
    )
    check.add_argument(
        "--fail-on-warning",
        action="store_true",
        help="exit 1 when any target has a warning, even if every target is accepted "
        "(default: off)",
    )
    check.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text report; auto: only on a terminal, and never when NO_COLOR is "
        "set (default: auto)",
    )
    check.add_argument(
        "--max-yaml-size",
        type=int,
        default=DEFAULT_MAX_YAML_BYTES,
        metavar="BYTES",
        help=f"YAML files over this size are refused unread (default: {DEFAULT_MAX_YAML_BYTES})",
    )
    check.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="keep what was read from each YAML file here, keyed by blob id, so repeated --rev "
        "checks read only changed files (default: no cache)",
    )


class CheckRun(NamedTuple):
    report: Report
    skipped: tuple[str, ...] = ()  # paths given that no target holds
    # Checked targets under enforce: new, which weighs a pull request's check on the forge:
    # a tree has no change to weigh, so check gives them the full verdict and says so.
    enforce_new: tuple[str, ...] = ()


def run_check(
    scope: CheckScope,
    rev: str | None,
    target: str | None,
    *,
    capabilities_file: str | None = None,
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
    cache: FactsCache | None = None,
) -> CheckRun:
    if max_yaml_bytes < 1:
        raise UsageError("--max-yaml-size must be a positive number of bytes")
    capabilities = read_capabilities_file(capabilities_file, target)
    adhoc = adhoc_target(target, capabilities) if target is not None else None  # before reading
    with open_snapshot(scope.repo, rev) as snapshot:
        if scope.paths is not None:
            require_present(snapshot, scope, rev)
        targets = resolve_targets(snapshot, scope.repo, adhoc, rev)
        if targets.policy is None:
            return CheckRun(Report(snapshot.revision, targets.config_issues))
        policy = dataclasses.replace(targets.policy, max_yaml_bytes=max_yaml_bytes)
        skipped: tuple[str, ...] = ()
        if scope.paths is not None:
            selection = select_targets(policy.targets, scope.paths, scope.shown)
            policy = dataclasses.replace(policy, targets=selection.targets)
            skipped = selection.skipped
        enforce_new = tuple(t.name for t in policy.targets if t.enforce == "new")
        return CheckRun(run_gate(snapshot, policy, cache=cache), skipped, enforce_new)


def enforce_note(names: tuple[str, ...]) -> str:
    are = "is" if len(names) == 1 else "are"
    return (
        f"{', '.join(names)} {are} under enforce: new, which weighs a pull request's check on "
        "the forge; check checks a tree, not a change, so every issue counts here"
    )


def use_colour(choice: str, output: str | None, isatty: bool, environ: Mapping[str, str]) -> bool:
    if choice != "auto":
        return choice == "always"
    return output is None and isatty and not environ.get("NO_COLOR")


def exit_status(report: Report, *, fail_on_warning: bool) -> int:
    code = report.exit_code
    if code == 0 and fail_on_warning:
        warned = any(i.severity is Severity.WARNING for t in report.targets for i in t.issues)
        return 1 if warned else 0
    return code


def sarif_docs_url(environ: Mapping[str, str]) -> str:
    """``ICHOR_DOCS_URL``: where README.md and docs/ are for SARIF's links, when not this
    version's (a fork, a mirror); SARIF's links are absolute URIs."""
    value = environ.get("ICHOR_DOCS_URL")
    if not value:
        return DOCS_URL
    parts = urlsplit(value)
    if not (parts.scheme and parts.netloc):
        raise UsageError(
            f"ICHOR_DOCS_URL {value!r} must be an absolute URL (SARIF's links are), e.g. {DOCS_URL}"
        )
    return value if value.endswith("/") else f"{value}/"


def run_check_command(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    if args.target is not None and len(args.paths) > 1:
        raise UsageError("with --path, give at most one PATH: the repository")
    docs_url = sarif_docs_url(environ) if args.format == "sarif" else DOCS_URL
    if args.target is not None:
        scope = CheckScope(args.paths[0] if args.paths else ".", None)
    else:
        scope = locate(args.paths, Path.cwd())
    cache = DirectoryFactsCache(args.cache_dir) if args.cache_dir else None
    report, skipped, enforce_new = run_check(
        scope,
        args.rev,
        args.target,
        capabilities_file=args.capabilities,
        max_yaml_bytes=args.max_yaml_size,
        cache=cache,
    )
    for issue in report.config_issues:
        print(f"ichor-bot: error: {config_issue_line(issue)}", file=sys.stderr)
    if skipped and not args.quiet:
        print(f"ichor-bot: skipped (in no target): {', '.join(skipped)}", file=sys.stderr)
    if enforce_new and not args.quiet:
        print(f"ichor-bot: note: {enforce_note(enforce_new)}", file=sys.stderr)
    if scope.paths is not None and not report.targets and not report.config_issues:
        if not args.quiet:
            print("ichor-bot: no target holds the given paths; nothing to check", file=sys.stderr)
        return 0
    if report.config_issues and args.output is None and args.format in ("text", "brief"):
        pass  # the lines on standard error are the whole story; a file or a machine gets them too
    elif args.format == "text":
        colour = use_colour(args.color, args.output, sys.stdout.isatty(), environ)
        write(report_to_text(report, colour=colour, quiet=args.quiet), args.output)
    elif args.format == "sarif":
        write(report_to_sarif(report, docs_url=docs_url), args.output)
    else:
        write(FORMATS[args.format](report), args.output)
    return exit_status(report, fail_on_warning=args.fail_on_warning)


def write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None
