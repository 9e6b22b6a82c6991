"""The audit trail: one stored record and one log line per command, on Redis and in memory; a
hostile name never forges a line; a store that is down never fails the command."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest
import redis

from bot.state.audit import (
    AUDIT_LOGGER,
    FIELD_LIMIT,
    AuditTrail,
    audit_line,
    escape_text,
    log_value,
    redis_audit,
)
from bot.state.base import AuditLog, AuditRecord
from bot.state.memory import MemoryAudit
from bot.state.redis_state import AUDIT_PAGE, RedisAudit
from tests.support.redis_server import free_port
from tests.support.redis_url import SHARED_REDIS_URL

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SHARED_REDIS = SHARED_REDIS_URL


class Ticking:
    """A clock that moves one minute each time it is read."""

    def __init__(self, start: datetime = NOON) -> None:
        self.now = start

    def __call__(self) -> datetime:
        at, self.now = self.now, self.now + timedelta(minutes=1)
        return at


@pytest.fixture(params=["redis", "memory"])
def store(request: pytest.FixtureRequest) -> Iterator[AuditLog]:
    if request.param == "memory":
        yield MemoryAudit()
        return
    connection = redis.Redis.from_url(SHARED_REDIS)
    stream = f"ichor:test-audit:{uuid.uuid4().hex}"
    yield RedisAudit(connection, stream=stream, max_len=1_000)
    connection.delete(stream)
    connection.close()


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == AUDIT_LOGGER]


_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s"]+)')
_ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)")
_NAMED = {"n": "\n", "r": "\r", "t": "\t"}


def parse_line(line: str) -> dict[str, str]:
    """A reader of the log line as a log pipeline would read it: ``key=value`` pairs, each
    value bare or quoted; the whole line must be pairs and nothing else."""
    assert line.startswith("audit ")
    rest = line.removeprefix("audit ")
    pairs = list(_FIELD.finditer(rest))
    assert " ".join(m.group(0) for m in pairs) == rest, line
    out = {}
    for match in pairs:
        value = match.group(2)
        if value.startswith('"'):
            value = _ESCAPE.sub(_unescape, value[1:-1])
        out[match.group(1)] = value
    return out


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return _NAMED.get(code, code)


def test_a_record_is_stamped_stored_and_logged_once(
    store: AuditLog, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    trail = AuditTrail(store, clock=Ticking())
    got = trail.record(
        forge="github",
        repo="octo/widgets",
        actor="maria",
        verb="approve",
        result="pr-opened",
        number=7,
        target="prod",
        object="apps/v1 Deployment prod/web",
        pr_url="https://github.com/octo/widgets/pull/8",
        delivery="d-1",
    )
    assert got == AuditRecord(
        NOON,
        "github",
        "octo/widgets",
        "maria",
        "approve",
        "pr-opened",
        number=7,
        target="prod",
        object="apps/v1 Deployment prod/web",
        pr_url="https://github.com/octo/widgets/pull/8",
        delivery="d-1",
    )
    assert store.recent() == [got]
    assert _lines(caplog) == [
        "audit forge=github repo=octo/widgets pr=7 actor=maria verb=approve result=pr-opened "
        'target=prod object="apps/v1 Deployment prod/web" '
        "pr_url=https://github.com/octo/widgets/pull/8 delivery=d-1"
    ]


def test_newest_first_with_the_optional_fields_left_out(
    store: AuditLog, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    trail = AuditTrail(store, clock=Ticking())
    trail.record(forge="gitlab", repo="g/sub/p", actor="lee", verb="recheck", result="done")
    trail.record(
        forge="gitea", repo="o/r", actor="kim", verb="approve", result="refused: no", number=3
    )
    assert [(r.verb, r.time) for r in store.recent()] == [
        ("approve", NOON + timedelta(minutes=1)),
        ("recheck", NOON),
    ]
    assert [r.repo for r in store.recent(repo="g/sub/p")] == ["g/sub/p"]
    assert _lines(caplog) == [
        "audit forge=gitlab repo=g/sub/p pr=- actor=lee verb=recheck result=done",
        'audit forge=gitea repo=o/r pr=3 actor=kim verb=approve result="refused: no"',
    ]


HOSTILE_ACTOR = (
    'mallory\naudit forge=github repo=octo/widgets pr=7 actor=admin verb=approve result="done'
)
HOSTILE_RESULT = (
    'refused: "quoted" \\ back\\slash\r\n\x1b[31mred\x1b[0m \x00 \x7f \u2028 \u2029 \u0085 '
    "\u202eevil\u202c tab\there \udcff é 漢字"
)


def test_hostile_values_stay_one_line_that_reads_back_exactly(
    store: AuditLog, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    trail = AuditTrail(store, clock=Ticking())
    trail.record(
        forge="github",
        repo="octo/widgets",
        actor=HOSTILE_ACTOR,
        verb="approve",
        result=HOSTILE_RESULT,
        number=7,
        target="-",
    )
    (line,) = _lines(caplog)
    assert line.isprintable()  # no newline, CR, escape, NUL, separators or bidi controls
    assert "\n" not in line and "\r" not in line and "\x1b" not in line
    fields = parse_line(line)
    assert list(fields) == ["forge", "repo", "pr", "actor", "verb", "result", "target"]
    assert fields["actor"] == HOSTILE_ACTOR and fields["result"] == HOSTILE_RESULT
    assert fields["verb"] == "approve" and fields["target"] == "-"
    assert 'target="-"' in line  # a value "-" is not "none"
    (stored,) = store.recent()
    assert stored.actor == HOSTILE_ACTOR and stored.result == HOSTILE_RESULT  # kept as given


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("maria", "maria"),
        ("octo/widgets", "octo/widgets"),
        ("", '""'),
        ("-", '"-"'),
        (None, "-"),
        (7, "7"),
        ("a b", '"a b"'),
        ("x=y", '"x=y"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("line\nbreak", '"line\\nbreak"'),
        ("\x1b[2J", '"\\x1b[2J"'),
        ("\u2028", '"\\u2028"'),
        ("\U000e0041", '"\\U000e0041"'),  # a tag character: invisible
    ],
)
def test_log_values(value: str | int | None, shown: str) -> None:
    assert log_value(value) == shown


def test_escape_text_keeps_printable_text_and_escapes_the_rest() -> None:
    assert escape_text("é 漢字 ok") == "é 漢字 ok"
    assert escape_text("a\\b\tc\x00") == "a\\\\b\\tc\\x00"


def test_long_fields_are_clipped(store: AuditLog) -> None:
    trail = AuditTrail(store, clock=Ticking())
    got = trail.record(
        forge="github", repo="o/r", actor="a", verb="ignore", result="usage: " + "x" * 50_000
    )
    assert len(got.result) == FIELD_LIMIT and got.result.endswith("…")
    assert store.recent()[0].result == got.result


def test_times_are_utc_whatever_the_clock_says(store: AuditLog) -> None:
    naive = AuditTrail(store, clock=lambda: datetime(2026, 12, 1, 12, 0))
    assert naive.record(forge="g", repo="o/r", actor="a", verb="v", result="done").time == NOON
    plus_two = timezone(timedelta(hours=2))
    other = AuditTrail(store, clock=lambda: datetime(2026, 12, 1, 14, 0, tzinfo=plus_two))
    at = other.record(forge="g", repo="o/r", actor="a", verb="v", result="done").time
    assert at == NOON and at.tzinfo is UTC
    assert len(store.recent(since=NOON)) == 2  # aware times compare with an aware --since


class Broken:
    def append(self, record: AuditRecord) -> None:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:1.\nrefused")

    def recent(
        self, *, repo: str | None = None, since: datetime | None = None, limit: int = 100
    ) -> list[AuditRecord]:
        raise AssertionError("not read")


def test_a_store_that_is_down_costs_the_record_not_the_command(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    trail = AuditTrail(Broken(), clock=Ticking())
    got = trail.record(forge="github", repo="o/r", actor="a", verb="recheck", result="done")
    assert got.result == "done"
    messages = _lines(caplog)
    assert messages[0] == "audit forge=github repo=o/r pr=- actor=a verb=recheck result=done"
    assert "audit record not stored (ConnectionError: " in messages[1]
    assert "\n" not in messages[1]


def test_an_unreachable_redis_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT_LOGGER)
    down = redis_audit(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)
    logger = logging.getLogger(f"{AUDIT_LOGGER}.test")
    trail = AuditTrail(down, clock=Ticking(), logger=logger)
    got = trail.record(forge="gitea", repo="o/r", actor="a", verb="approve", result="pr-opened")
    assert got.verb == "approve"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].name == logger.name
    assert "ConnectionError" in warnings[0].getMessage()


def test_audit_line_orders_the_fields() -> None:
    record = AuditRecord(NOON, "github", "o/r", "a", "delete", "error: boom", delivery="d")
    assert audit_line(record) == (
        'audit forge=github repo=o/r pr=- actor=a verb=delete result="error: boom" delivery=d'
    )


@pytest.fixture
def stream() -> Iterator[RedisAudit]:
    connection = redis.Redis.from_url(SHARED_REDIS)
    name = f"ichor:test-audit:{uuid.uuid4().hex}"
    yield RedisAudit(connection, stream=name, max_len=10_000)
    connection.delete(name)
    connection.close()


def test_the_redis_stream_is_read_page_by_page(stream: RedisAudit) -> None:
    # Two old records of one repository behind more than two pages of another's.
    total = 2 * AUDIT_PAGE + 50
    for minute in range(total + 2):
        repo = "octo/old" if minute < 2 else "octo/busy"
        at = NOON + timedelta(minutes=minute)
        stream.append(AuditRecord(at, "github", repo, "a", "v", "done"))
    old = stream.recent(repo="octo/old")
    assert [r.time for r in old] == [NOON + timedelta(minutes=1), NOON]
    assert len(stream.recent(limit=total + 10)) == total + 2
    assert len(stream.recent(repo="octo/busy", limit=AUDIT_PAGE + 1)) == AUDIT_PAGE + 1
    since = NOON + timedelta(minutes=total - 5)
    assert len(stream.recent(since=since, limit=1_000)) == 7
