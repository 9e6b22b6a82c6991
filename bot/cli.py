"""``ichor-bot``: the command line. Errors are one line on stderr and exit 2, never a traceback.

Exit status: 0 accepted, 1 refused, 2 usage or configuration error, 3 internal error (a bug:
one line too, and the traceback only with ``ICHOR_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from bot import __version__
from bot.content.cache import DirectoryFactsCache, FactsCache
from bot.errors import IchorError, UsageError
from bot.forges.local import recent_results, result_for
from bot.gate import Report
from bot.gate.policy import DEFAULT_MAX_YAML_BYTES
from bot.gate.run import run_gate
from bot.processes import serve, work
from bot.render import report_to_json, report_to_sarif, report_to_text
from bot.replay import replay
from bot.settings import load_settings
from bot.targets import add_tree_arguments, adhoc_target, open_snapshot, resolve_targets
from bot.types_command import add_types_parser, run_types

EXIT_USAGE = 2
EXIT_INTERNAL = 3
_RENDERERS = {"text": report_to_text, "json": report_to_json, "sarif": report_to_sarif}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ichor-bot", description="Ichor Bot: guards GitTarget paths.")
    parser.add_argument("--version", action="version", version=f"ichor-bot {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    check = commands.add_parser(
        "check",
        help="run the acceptance gate on a repository or directory",
        description=(
            "Check every target of PATH/.ichor.yaml (or one ad-hoc --path) and print the verdict. "
            "Without --rev the directory on disk is read; with --rev, the git objects at REV. "
            "Exit 0: every target accepted; 1: a target refused; 2: usage or configuration error; "
            "3: internal error (ICHOR_DEBUG=1 shows the traceback)."
        ),
    )
    add_tree_arguments(check, "check")
    check.add_argument("--format", choices=sorted(_RENDERERS), default="text")
    check.add_argument(
        "--max-yaml-size",
        type=int,
        default=DEFAULT_MAX_YAML_BYTES,
        metavar="BYTES",
        help=f"YAML files over this size are refused unread (default {DEFAULT_MAX_YAML_BYTES})",
    )
    check.add_argument(
        "--cache-dir",
        help="keep parsed-file facts here, keyed by blob id, to speed up repeated --rev checks",
    )
    check.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    add_types_parser(commands)
    serve = commands.add_parser("serve", help="run the web process (webhooks, status, metrics)")
    serve.add_argument("--host", help="address to listen on (default ICHOR_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default ICHOR_PORT or 8000)")
    worker = commands.add_parser("worker", help="run an RQ worker (needs ICHOR_REDIS_URL)")
    worker.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    replay = commands.add_parser(
        "replay", help="sign a recorded webhook payload the way its forge would, and post it"
    )
    replay.add_argument("file", metavar="FILE")
    replay.add_argument("--forge", required=True, choices=["github", "gitlab", "gitea", "forgejo"])
    replay.add_argument("--url", default="http://127.0.0.1:8000", help="where ichor-bot serves")
    replay.add_argument("--secret", help="webhook secret (default: the forge's ICHOR_ setting)")
    replay.add_argument("--event", help="event name (default: from the file name)")
    replay.add_argument("--delivery", help="delivery id (default: a new UUID)")
    results = commands.add_parser(
        "results", help="show the local forge's recent check results (newest first)"
    )
    results.add_argument("--limit", type=int, default=20, help="how many (default 20)")
    results.add_argument("--show", metavar="SHA", help="print one result's summary and issues")
    return parser


def run_check(
    repo: str,
    rev: str | None,
    target: str | None,
    *,
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES,
    cache: FactsCache | None = None,
) -> Report:
    if max_yaml_bytes < 1:
        raise UsageError("--max-yaml-size must be a positive number of bytes")
    adhoc = adhoc_target(target) if target is not None else None  # before any reading
    with open_snapshot(repo, rev) as snapshot:
        targets = resolve_targets(snapshot, repo, adhoc)
        if targets.policy is None:
            return Report(revision=snapshot.revision, config_issues=targets.config_issues)
        policy = dataclasses.replace(targets.policy, max_yaml_bytes=max_yaml_bytes)
        return run_gate(snapshot, policy, cache=cache)


def _run_process(args: argparse.Namespace) -> int:
    settings = load_settings()  # read once, at start-up
    if args.command == "serve":
        return serve(settings, args.host, args.port)
    if args.command == "worker":
        return work(settings, burst=args.burst)
    forge_setting = "gitea" if args.forge == "forgejo" else args.forge
    secret = args.secret or next(iter(settings.webhook_secrets(forge_setting)), None)
    if not secret:
        raise UsageError(
            f"no secret: pass --secret or set ICHOR_{forge_setting.upper()}_WEBHOOK_SECRET"
        )
    response = replay(
        args.file,
        forge=args.forge,
        url=args.url,
        secret=secret,
        event=args.event,
        delivery=args.delivery,
    )
    print(f"{response.status_code} {response.text.strip()}")
    return 0 if response.status_code < 400 else 1


def show_results(data_dir: Path, limit: int, sha: str | None) -> int:
    if sha is not None:
        record = result_for(data_dir, sha)
        if record is None:
            raise UsageError(f"no local check result for {sha} under {data_dir}")
        print(f"{record['repository']} {record['head_sha']}: {record.get('conclusion')}")
        print(record.get("title", ""))
        print()
        print(record.get("text") or record.get("summary") or "")
        return 0
    rows = recent_results(data_dir, limit)
    if not rows:
        print(f"no local check results under {data_dir} yet")
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(row.get("completed_at") or 0))
        print(
            f"{when}  {row['repository']}  {row['head_sha'][:12]}  "
            f"{row.get('conclusion')}: {row.get('title')}"
        )
    return 0


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None


def main(argv: Sequence[str] | None = None) -> int:
    # Whatever a file name holds, printing it must never crash.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            build_parser().print_help(sys.stderr)
            return EXIT_USAGE
        if args.command == "types":
            return run_types(args)
        if args.command in ("serve", "worker", "replay"):
            return _run_process(args)
        if args.command == "results":
            return show_results(load_settings().data_dir, args.limit, args.show)
        cache = DirectoryFactsCache(args.cache_dir) if args.cache_dir else None
        report = run_check(
            args.repo, args.rev, args.target, max_yaml_bytes=args.max_yaml_size, cache=cache
        )
        _write(_RENDERERS[args.format](report), args.output)
        return report.exit_code
    except IchorError as exc:
        print(f"ichor-bot: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug, never a verdict: exit 1 would read as "refused"
        return _internal_error(exc, debug=os.environ.get("ICHOR_DEBUG") == "1")


def _internal_error(exc: BaseException, *, debug: bool) -> int:
    """One line on stderr (the traceback too with ``ICHOR_DEBUG=1``), and exit 3."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    text = " ".join(str(exc).split()) or "(no message)"
    hint = "" if debug else " (ICHOR_DEBUG=1 shows the traceback)"
    print(f"ichor-bot: internal error: {type(exc).__name__}: {text}{hint}", file=sys.stderr)
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
