"""``ichor-bot audit``: the audit records of commands and change requests, newest first.

They are read from the Redis stream the workers write (``ichor:audit``). Without
``ICHOR_REDIS_URL`` there is nothing this command can read: the in-process queue keeps its
records in the memory of the ``ichor-bot serve`` process that ran the commands, where only its
status page (``/commands``) shows them. That is a configuration error (exit 2) that says so,
rather than an empty list that would read as "no command was ever run".
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import redis

from bot.cli.processes import redis_location
from bot.errors import IchorError
from bot.settings import Settings
from bot.state.audit import escape_text, redis_audit, utc_now
from bot.state.base import AuditRecord
from bot.state.records import audit_to_json

DEFAULT_LIMIT = 50
_DURATION = re.compile(r"(\d{1,9})([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
HEADERS = ("time (UTC)", "forge", "repository", "pr", "actor", "verb", "result", "PR URL")
# Widest a column gets in the table (the last one is never cut); --json shows every field whole.
_WIDTH = {"result": 60}
_DEFAULT_WIDTH = 40
NO_REDIS = (
    "audit records are kept in Redis and ICHOR_REDIS_URL is not set: without it they stay in "
    "the memory of the `ichor-bot serve` process that ran the commands, and its status page "
    "shows them at /commands"
)


def parse_since(text: str, *, now: datetime) -> datetime:
    """An ISO-8601 time (UTC unless it names an offset) or a duration back from ``now``
    (``30m``, ``2h``, ``7d``; also ``s`` and ``w``). Raises ``ValueError`` naming the value."""
    duration = _DURATION.fullmatch(text.strip())
    try:
        if duration is not None:
            amount, unit = duration.groups()
            return now - timedelta(**{_UNITS[unit]: int(amount)})
        at = datetime.fromisoformat(text.strip())
    except (ValueError, OverflowError):
        pass
    else:
        return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    raise ValueError(
        f"'{escape_text(text)}' is neither an ISO-8601 time (2026-12-01T12:00:00Z) "
        "nor a duration like 30m, 2h or 7d"
    )


def _since(text: str) -> datetime:
    try:
        return parse_since(text, now=utc_now())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{escape_text(text)}' is not a whole number above 0")
    return value


def add_audit_parser(subparsers: Any, formatter: type[argparse.HelpFormatter]) -> None:
    """Register ``audit`` on the CLI's subcommand action (``argparse._SubParsersAction``)."""
    parser = subparsers.add_parser(
        "audit",
        help="show the audit records of commands and change requests (needs ICHOR_REDIS_URL)",
        description=(
            "Show who ran which command on which pull request, and what came of it (done, "
            "pr-opened, pr-existing, refused: why, error), newest first, from the audit "
            "stream in Redis (ICHOR_REDIS_URL). Exit 0, or 2 when Redis is not configured or "
            "cannot be read."
        ),
        epilog=(
            "examples:\n"
            "  ichor-bot audit --since 2h\n"
            "  ichor-bot audit --repo octo/widgets --since 2026-12-01T00:00Z --json\n"
        ),
        formatter_class=formatter,
    )
    parser.add_argument(
        "--repo", metavar="R", help="only this repository, owner/name (default: every one)"
    )
    parser.add_argument(
        "--since",
        metavar="T",
        type=_since,
        help="only records at or after T: an ISO-8601 time (UTC unless it names an offset) "
        "or a duration back from now such as 30m, 2h or 7d (default: no limit)",
    )
    parser.add_argument(
        "--limit",
        metavar="N",
        type=_limit,
        default=DEFAULT_LIMIT,
        help=f"at most N records, the newest (default: {DEFAULT_LIMIT})",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per line, every field (default: a table)",
    )


def _cells(record: AuditRecord) -> list[str]:
    at = record.time.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    number = "-" if record.number is None else f"#{record.number}"
    texts = [record.forge, record.repo, number, record.actor, record.verb, record.result]
    return [at, *(escape_text(t) for t in texts), escape_text(record.pr_url or "-")]


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(records: Sequence[AuditRecord]) -> str:
    """A table with a header row, columns two spaces apart, every control character escaped."""
    rows = [list(HEADERS), *(_cells(r) for r in records)]
    last = len(HEADERS) - 1
    widths = [
        min(max(len(row[i]) for row in rows), _WIDTH.get(HEADERS[i], _DEFAULT_WIDTH))
        for i in range(last)
    ]
    lines = []
    for row in rows:
        cells = [_fit(row[i], widths[i]).ljust(widths[i]) for i in range(last)]
        lines.append("  ".join([*cells, row[last]]).rstrip())
    return "\n".join(lines)


def _read(url: str, repo: str | None, since: datetime | None, limit: int) -> list[AuditRecord]:
    try:
        return redis_audit(url, timeout=5.0).recent(repo=repo, since=since, limit=limit)
    except (redis.exceptions.RedisError, ValueError) as exc:
        raise IchorError(
            f"cannot read the audit stream from Redis at {redis_location(url)}: "
            f"{type(exc).__name__}: {escape_text(str(exc))}"
        ) from None


def run_audit(args: argparse.Namespace, settings: Settings) -> int:
    if not settings.redis_url:
        raise IchorError(NO_REDIS)
    records = _read(settings.redis_url, args.repo, args.since, args.limit)
    if args.json:
        sys.stdout.write("".join(audit_to_json(r) + "\n" for r in records))
    elif not records:
        scope = f" for {escape_text(args.repo)}" if args.repo else ""
        since = args.since.strftime(" since %Y-%m-%d %H:%M:%S UTC") if args.since else ""
        print(f"no audit records{scope}{since}")
    else:
        print(format_table(records))
    return 0
