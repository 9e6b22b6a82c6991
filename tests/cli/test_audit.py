"""``ichor-bot audit`` through the CLI, against a Redis of its own (the stream is the real
``ichor:audit``, so it must not be the shared server's)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis

from bot.cli.audit import NO_REDIS, format_table, parse_since
from bot.state import keys
from bot.state.audit import AuditTrail, redis_audit
from bot.state.base import AuditRecord
from bot.state.records import audit_from_json
from tests.conftest import RunCli
from tests.support.redis_server import RedisServer, free_port

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with RedisServer(tmp_path_factory.mktemp("audit-redis"), persistent=False) as running:
        yield running


@pytest.fixture
def url(server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("ICHOR_REDIS_URL", server.url)
    client = redis.Redis.from_url(server.url)
    client.delete(keys.AUDIT_STREAM)
    yield server.url
    client.delete(keys.AUDIT_STREAM)
    client.close()


def _fixed(at: datetime) -> Callable[[], datetime]:
    return lambda: at


def _write(url: str, *records: dict[str, object]) -> list[AuditRecord]:
    """Each record through the trail a job uses, ``ago`` minutes before now, oldest first."""
    written = []
    for fields in records:
        at = NOW - timedelta(minutes=int(str(fields.pop("ago"))))
        trail = AuditTrail(redis_audit(url), clock=_fixed(at))
        written.append(trail.record(**fields))  # type: ignore[arg-type]
    return written


def _three(url: str) -> list[AuditRecord]:
    return _write(
        url,
        {"ago": 180, "forge": "gitlab", "repo": "g/sub/p", "actor": "lee", "verb": "recheck",
         "result": "done", "number": 4},
        {"ago": 60, "forge": "github", "repo": "octo/widgets", "actor": "maria",
         "verb": "approve", "result": "pr-opened", "number": 7, "target": "prod",
         "object": "apps/v1 Deployment prod/web",
         "pr_url": "https://github.com/octo/widgets/pull/8"},
        {"ago": 5, "forge": "github", "repo": "octo/widgets", "actor": "kim", "verb": "ignore",
         "result": "refused: kim may not run /ignore (needs write)", "number": 7},
    )  # fmt: skip


def test_the_table_lists_the_newest_first(run_cli: RunCli, url: str) -> None:
    _three(url)
    got = run_cli("audit")
    assert got.code == 0, got.err
    header, *rows = got.out.splitlines()
    assert header.split() == [
        "time", "(UTC)", "forge", "repository", "pr", "actor", "verb", "result", "PR", "URL",
    ]  # fmt: skip
    assert len(rows) == 3
    stamp = (NOW - timedelta(minutes=5)).strftime("%Y-%m-%d %H:%M:%S")
    assert rows[0].startswith(f"{stamp}  github  octo/widgets  #7  kim  ")
    assert "refused: kim may not run /ignore (needs write)" in rows[0]
    url_at = header.index("PR URL")
    assert rows[1][url_at:] == "https://github.com/octo/widgets/pull/8"
    assert rows[1][header.index("result") : url_at].rstrip() == "pr-opened"
    assert rows[2].split()[2:7] == ["gitlab", "g/sub/p", "#4", "lee", "recheck"]
    assert rows[2].rstrip().endswith("-")  # no PR URL
    assert all(row[url_at - 2 : url_at] == "  " for row in rows)  # aligned


def test_repo_since_and_limit_filter(run_cli: RunCli, url: str) -> None:
    _three(url)
    repo = run_cli("audit", "--repo", "octo/widgets").out.splitlines()[1:]
    assert [r.split()[5] for r in repo] == ["kim", "maria"]
    assert len(run_cli("audit", "--since", "2h").out.splitlines()) == 3  # header and two
    assert len(run_cli("audit", "--since", "30m").out.splitlines()) == 2
    assert len(run_cli("audit", "--since", "7d").out.splitlines()) == 4
    iso = (NOW - timedelta(minutes=90)).isoformat()
    assert len(run_cli("audit", "--since", iso).out.splitlines()) == 3
    assert len(run_cli("audit", "--limit", "1").out.splitlines()) == 2
    none = run_cli("audit", "--repo", "octo/none", "--since", "2026-12-01")
    assert none.code == 0
    assert none.out == "no audit records for octo/none since 2026-12-01 00:00:00 UTC\n"


def test_json_is_one_object_per_line_with_every_field(run_cli: RunCli, url: str) -> None:
    written = _three(url)
    got = run_cli("audit", "--json")
    assert got.code == 0
    lines = got.out.splitlines()
    assert [audit_from_json(line) for line in lines] == written[::-1]
    first = json.loads(lines[1])
    assert first["target"] == "prod" and first["object"] == "apps/v1 Deployment prod/web"
    assert run_cli("audit", "--json", "--repo", "octo/none").out == ""


def test_control_characters_are_escaped_in_the_table(run_cli: RunCli, url: str) -> None:
    _write(
        url,
        {"ago": 1, "forge": "github", "repo": "octo/widgets", "actor": "eve\n2026-01-01 forged",
         "verb": "approve", "result": "refused: \x1b[2Jcleared\r\u202eevil",
         "pr_url": "https://example.com/\x07"},
    )  # fmt: skip
    got = run_cli("audit")
    assert got.code == 0
    assert len(got.out.splitlines()) == 2
    assert "\x1b" not in got.out and "\r" not in got.out and "\u202e" not in got.out
    assert "eve\\n2026-01-01 forged" in got.out
    assert "refused: \\x1b[2Jcleared\\r\\u202eevil" in got.out
    assert got.out.rstrip().endswith("https://example.com/\\x07")
    assert "\\u001b" in run_cli("audit", "--json").out  # JSON escapes them its own way


def test_without_redis_it_says_where_the_records_are(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ICHOR_REDIS_URL", raising=False)
    got = run_cli("audit")
    assert got.code == 2 and got.out == ""
    assert got.err == f"ichor-bot: error: {NO_REDIS}\n"
    assert "ICHOR_REDIS_URL" in got.err and "/commands" in got.err


def test_an_unreachable_redis_is_one_line_and_exit_2(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    monkeypatch.setenv("ICHOR_REDIS_URL", f"redis://:hunter2@127.0.0.1:{port}/0")
    got = run_cli("audit")
    assert got.code == 2
    said = f"ichor-bot: error: cannot read the audit stream from Redis at 127.0.0.1:{port}/0: "
    assert got.err.startswith(said + "ConnectionError")
    assert got.err.count("\n") == 1 and "hunter2" not in got.err


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--since", "3x"], "argument --since: '3x' is neither an ISO-8601 time"),
        (["--since", "yesterday"], "'yesterday'"),
        (["--since", "2026-13-01"], "'2026-13-01'"),
        (["--since", "999999999w"], "'999999999w'"),
        (["--since", "1x\n"], "'1x\\n'"),  # a newline shown escaped, on the one line
        (["--limit", "0"], "argument --limit: '0' is not a whole number above 0"),
        (["--limit", "many"], "'many'"),
    ],
)
def test_bad_values_are_usage_errors_that_name_them(
    run_cli: RunCli, url: str, args: list[str], named: str
) -> None:
    got = run_cli("audit", *args)
    assert got.code == 2 and named in got.err and got.err.count("\n") == 1


def test_help_names_every_option_and_its_default(
    run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run_cli("audit", "--help")
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "usage: ichor-bot audit [-h] [--repo R] [--since T] [--limit N] [--json]" in text
    for option in ("--repo R", "--since T", "--limit N", "--json"):
        assert option in text
    assert "30m, 2h or 7d" in text and "(default: 50)" in text
    assert "ICHOR_REDIS_URL" in text and "ichor-bot audit --since 2h" in text
    with pytest.raises(SystemExit):
        run_cli("--help")
    assert "audit" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", datetime(2026, 12, 1, 11, 30, tzinfo=UTC)),
        ("2h", datetime(2026, 12, 1, 10, 0, tzinfo=UTC)),
        ("7d", datetime(2026, 11, 24, 12, 0, tzinfo=UTC)),
        ("45s", datetime(2026, 12, 1, 11, 59, 15, tzinfo=UTC)),
        ("1w", datetime(2026, 11, 24, 12, 0, tzinfo=UTC)),
        ("2026-11-30T08:00:00Z", datetime(2026, 11, 30, 8, 0, tzinfo=UTC)),
        ("2026-11-30T10:00:00+02:00", datetime(2026, 11, 30, 8, 0, tzinfo=UTC)),
        ("2026-11-30 08:00", datetime(2026, 11, 30, 8, 0, tzinfo=UTC)),  # naive: UTC
        ("2026-11-30", datetime(2026, 11, 30, tzinfo=UTC)),
        (" 2h ", datetime(2026, 12, 1, 10, 0, tzinfo=UTC)),
    ],
)
def test_parse_since(text: str, expected: datetime) -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    got = parse_since(text, now=now)
    assert got == expected and got.tzinfo is UTC


@pytest.mark.parametrize("text", ["", "m", "-2h", "2 h", "2H", "2y", "next week", "12:00:99"])
def test_parse_since_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="neither an ISO-8601 time"):
        parse_since(text, now=datetime(2026, 12, 1, 12, 0, tzinfo=UTC))


def test_format_table_clips_wide_cells_but_never_the_url() -> None:
    at = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    url = "https://github.com/o/r/pull/" + "9" * 80
    record = AuditRecord(at, "github", "o/" + "r" * 80, "a", "v", "x" * 100, 1, pr_url=url)
    header, row = format_table([record]).splitlines()
    assert ("r" * 37 + "…") in row and ("x" * 59 + "…") in row
    assert row.endswith(url) and len(header) < len(row)
