"""``ichor-bot``: the command line. Errors are one line on stderr and exit 2, never a traceback.

Exit status: 0 accepted, 1 refused, 2 usage or configuration error, 3 internal error (a bug:
one line too, and the traceback only with ``ICHOR_DEBUG=1``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from bot import __version__
from bot.cli.audit import add_audit_parser, run_audit
from bot.cli.check import add_check_parser, run_check_command
from bot.cli.onboard import add_onboard_parser, run_onboard
from bot.cli.onboard_preview import run_dry_run
from bot.cli.processes import serve, work
from bot.cli.replay import replay
from bot.cli.types_command import add_types_parser, run_types
from bot.errors import IchorError, UsageError
from bot.forges.local import recent_results, result_for
from bot.settings import load_settings

EXIT_USAGE = 2
EXIT_INTERNAL = 3
_HELP = argparse.RawDescriptionHelpFormatter

EXAMPLES = """\
examples:
  ichor-bot check                      check every target of ./.ichor.yaml
  ichor-bot check . --rev HEAD         check what was committed
  ichor-bot check --path clusters/dev  check one directory as a target, without .ichor.yaml
  ichor-bot types --path clusters/dev  list the types that target may hold
  ichor-bot serve --port 8000          serve webhooks
  ichor-bot audit --since 2h           who ran which command, and what came of it
  ichor-bot onboard github acme/gitops --installation 42   propose .ichor.yaml again
  ichor-bot onboard --dry-run .                             preview that proposal here
  ichor-bot COMMAND --help             every option of COMMAND, with its default
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ichor-bot",
        description="Ichor Bot: guards GitTarget paths, the folders of a GitOps repository a "
        "Kubernetes operator owns.",
        epilog=EXAMPLES,
        formatter_class=_HELP,
    )
    parser.add_argument("--version", action="version", version=f"ichor-bot {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    add_check_parser(commands, _HELP)
    add_types_parser(commands)
    serve = commands.add_parser(
        "serve",
        help="run the web process (webhooks, status page, metrics)",
        description="Serve webhooks, the status page (/) and /metrics.",
        epilog="example:\n  ICHOR_GITHUB_WEBHOOK_SECRET=... ichor-bot serve --port 8000\n",
        formatter_class=_HELP,
    )
    serve.add_argument("--host", help="address to listen on (default: ICHOR_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default: ICHOR_PORT or 8000)")
    worker = commands.add_parser(
        "worker",
        help="run an RQ worker (needs ICHOR_REDIS_URL)",
        description="Run the queued check jobs, with the scheduler for retries.",
        epilog="example:\n  ICHOR_REDIS_URL=redis://127.0.0.1:6379/0 ichor-bot worker\n",
        formatter_class=_HELP,
    )
    worker.add_argument(
        "--burst", action="store_true", help="exit when the queue is empty (default: keep going)"
    )
    replay = commands.add_parser(
        "replay",
        help="sign a recorded webhook payload the way its forge would, and post it",
        description="Sign FILE as its forge would and post it to a running ichor-bot serve.",
        epilog="example:\n  ichor-bot replay pull_request__opened.json --forge github --secret s\n",
        formatter_class=_HELP,
    )
    replay.add_argument("file", metavar="FILE", help="the payload (JSON) to post")
    replay.add_argument(
        "--forge",
        required=True,
        choices=["github", "gitlab", "gitea", "forgejo"],
        help="whose headers and signature to use (required)",
    )
    replay.add_argument(
        "--url",
        default="http://127.0.0.1:8000",
        help="where ichor-bot serves (default: http://127.0.0.1:8000)",
    )
    replay.add_argument("--secret", help="webhook secret (default: the forge's ICHOR_ setting)")
    replay.add_argument(
        "--event", help="event name (default: from the file name, e.g. pull_request__opened)"
    )
    replay.add_argument("--delivery", help="delivery id (default: a new UUID)")
    results = commands.add_parser(
        "results",
        help="show the local forge's recent check results (newest first)",
        description="Show the check results the local forge kept under ICHOR_DATA_DIR.",
        epilog="example:\n  ICHOR_DATA_DIR=.ichor-data ichor-bot results --limit 5\n",
        formatter_class=_HELP,
    )
    results.add_argument("--limit", type=int, default=20, help="how many (default: 20)")
    results.add_argument(
        "--show", metavar="SHA", help="print one result's summary and issues (default: a list)"
    )
    add_audit_parser(commands, _HELP)
    add_onboard_parser(commands, _HELP)
    return parser


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
        if args.command == "audit":
            return run_audit(args, load_settings())
        if args.command == "onboard" and args.dry_run:
            return run_dry_run(args)  # no settings: nothing here reaches a forge
        if args.command == "onboard":
            return run_onboard(args, load_settings())
        return run_check_command(args, os.environ)
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
