"""The status page's commands, server-side (Starlette's TestClient): the overview's newest 20,
``/commands`` with up to 200 and a repository filter, every value shown as text, links only
to http(s), and the audit log the app reads (shared in-process memory, or the Redis stream)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from starlette.applications import Starlette
from starlette.exceptions import StarletteDeprecationWarning

from bot.cli import processes
from bot.queueing.base import Outcome, QueuedDelivery
from bot.settings import Settings
from bot.state import keys
from bot.state.base import AuditLog, AuditRecord, StateStore
from bot.state.memory import MemoryAudit
from bot.state.redis_state import RedisAudit
from bot.web.app import create_app
from bot.web.command_rows import (
    OVERVIEW_COMMANDS,
    PAGE_COMMANDS,
    command_rows,
    pull_link,
    safe_link,
)
from tests.web.conftest import OwnRedis

with warnings.catch_warnings():  # starlette's nudge towards httpx2, which is not installed
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
GITHUB = {"github": "https://github.com", "gitlab": "https://gitlab.example/"}


class IdleQueue:
    """A queue that is never given anything: the pages only read its counts."""

    def submit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        return [Outcome.QUEUED for _ in deliveries]

    async def asubmit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]:
        return self.submit_many(deliveries)

    def job_state(self, job_id: str) -> str | None:
        return None

    def job_result(self, job_id: str) -> Any:
        return None

    def depth(self) -> int:
        return 0

    def states(self) -> dict[str, int]:
        return {}

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        return None


def _settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"redis_url": None, "data_dir": tmp_path / "data"}
    return Settings(**{**values, **overrides})


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, MemoryAudit]]:
    audit = MemoryAudit()
    app = create_app(
        _settings(tmp_path),
        IdleQueue(),
        queue_kind="in-process",
        redis_configured=False,
        audit=audit,
    )
    with TestClient(app) as test_client:
        yield test_client, audit


def record(minute: int, **fields: Any) -> AuditRecord:
    values: dict[str, Any] = {
        "forge": "github",
        "repo": "octo/widgets",
        "actor": "maria",
        "verb": "approve",
        "result": "pr-opened",
        "number": 7,
    }
    values.update(fields)
    return AuditRecord(time=NOON + timedelta(minutes=minute), **values)


def section(html: str, name: str = "commands") -> str:
    return html.split(f'<section id="{name}">', 1)[1].split("</section>", 1)[0]


def rows(html: str) -> list[str]:
    """The text of each body row of the commands table, tags removed."""
    found = re.findall(r"<tr[^>]*>(.*?)</tr>", section(html), re.S)[1:]
    return [" ".join(re.sub(r"<[^>]+>", " ", r).split()) for r in found]


def links(html: str) -> list[str]:
    return re.findall(r'href="([^"]*)"', section(html))


def test_the_overview_lists_the_newest_twenty(client: tuple[TestClient, MemoryAudit]) -> None:
    test_client, audit = client
    for minute in range(OVERVIEW_COMMANDS + 5):
        audit.append(record(minute, actor=f"user{minute}"))
    audit.append(
        record(
            30,
            actor="lee",
            verb="ignore",
            result="pr-existing",
            target="prod",
            object="clusters/prod/*.tmp",
            pr_url="https://github.com/octo/widgets/pull/9",
        )
    )
    page = test_client.get("/")
    assert page.status_code == 200
    listed = rows(page.text)
    assert len(listed) == OVERVIEW_COMMANDS
    assert listed[0] == (
        "2026-12-01 12:30:00 github octo/widgets #7 lee ignore clusters/prod/*.tmp in prod "
        "pr-existing https://github.com/octo/widgets/pull/9"
    )
    assert listed[1].startswith("2026-12-01 12:24:00 github octo/widgets #7 user24 approve")
    assert listed[-1].split()[5] == "user6"  # the six oldest are on /commands only
    hrefs = links(page.text)
    assert "https://github.com/octo/widgets/pull/7" in hrefs  # the PR the command was on
    assert "https://github.com/octo/widgets/pull/9" in hrefs  # the PR it found
    assert "/commands?repo=octo/widgets" in hrefs and "/commands" in hrefs
    assert "Recent commands" in page.text


def test_nothing_yet_says_so(client: tuple[TestClient, MemoryAudit]) -> None:
    test_client, _ = client
    page = test_client.get("/")
    assert "No comment commands handled yet." in section(page.text)
    assert "No comment commands handled yet." in test_client.get("/commands").text


def test_the_commands_page_keeps_two_hundred_and_filters_by_repository(
    client: tuple[TestClient, MemoryAudit],
) -> None:
    test_client, audit = client
    for minute in range(PAGE_COMMANDS + 30):
        repo = "octo/widgets" if minute % 2 else "group/sub/project"
        audit.append(record(minute, forge="gitlab" if minute % 2 == 0 else "github", repo=repo))
    page = test_client.get("/commands")
    assert page.status_code == 200
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert len(rows(page.text)) == PAGE_COMMANDS
    only = test_client.get("/commands", params={"repo": "group/sub/project"})
    listed = rows(only.text)
    assert len(listed) == (PAGE_COMMANDS + 30) // 2
    assert {r.split()[3] for r in listed} == {"group/sub/project"}
    assert "Commands in group/sub/project" in only.text
    assert 'value="group/sub/project"' in only.text
    assert "https://gitlab.com/group/sub/project/-/merge_requests/7" in links(only.text)
    none = test_client.get("/commands?repo=nobody/here")
    assert "No commands for this repository." in none.text


HOSTILE = "<script>alert(1)</script>"


def test_hostile_values_are_text_and_only_http_links_are_links(
    client: tuple[TestClient, MemoryAudit],
) -> None:
    test_client, audit = client
    bad_urls = [
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "//evil.example/x",
        "https://ok.example/ onmouseover=alert(1)",
        "https://ok.example/\x00",
        "JaVaScRiPt:alert(1)",
    ]
    for minute, url in enumerate(bad_urls):
        audit.append(
            record(
                minute,
                repo=f"octo/{HOSTILE}",
                actor=f'{HOSTILE}"><img src=x onerror=alert(1)>',
                verb="approve\u202eevil",
                result=f"refused: {HOSTILE}\nline two \x1b[31m",
                object="<b>bold</b>",
                target="' onfocus='x",
                pr_url=url,
            )
        )
    audit.append(record(10, pr_url='https://ok.example/a"onclick="x'))
    for path in ("/", "/commands", f"/commands?repo=octo/{HOSTILE}"):
        page = test_client.get(path)
        html = page.text
        assert "<script" not in html and "<img" not in html and "<b>" not in html
        assert not re.search(r"<[^>]+\son\w+=", html)  # no event handler attribute anywhere
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "\u202e" not in html and "\x1b" not in html and "approve\\u202eevil" in html
        hrefs = links(html) if 'id="commands"' in html else []
        assert all(h.startswith(("https://", "/commands")) for h in hrefs), hrefs
        assert not any("javascript" in h.lower() or h.startswith("data:") for h in hrefs)
    html = test_client.get("/commands").text
    assert "https://ok.example/a%22onclick=%22x" in links(html)  # quoted, inside the attribute
    assert "javascript:alert(1)" in html  # shown as text, not as a link
    assert f"/commands?repo=octo/{HOSTILE}" not in html  # the filter link is URL-encoded
    echoed = test_client.get("/commands", params={"repo": f'"><script>x</script>{HOSTILE}'})
    assert "<script" not in echoed.text and 'value="&#34;&gt;&lt;script&gt;' in echoed.text


class Failing:
    def append(self, record: AuditRecord) -> None:
        raise AssertionError("the page never writes")

    def recent(
        self, *, repo: str | None = None, since: datetime | None = None, limit: int = 100
    ) -> list[AuditRecord]:
        raise redis.exceptions.ConnectionError("down")


def test_a_store_that_is_down_is_a_note_not_an_error(tmp_path: Path) -> None:
    app = create_app(
        _settings(tmp_path),
        IdleQueue(),
        queue_kind="in-process",
        redis_configured=False,
        audit=Failing(),
    )
    with TestClient(app) as test_client:
        for path in ("/", "/commands"):
            page = test_client.get(path)
            assert page.status_code == 200
            assert "audit records unavailable: ConnectionError" in page.text


def test_on_redis_the_page_reads_the_stream_the_workers_write(
    tmp_path: Path, own_redis: OwnRedis
) -> None:
    connection = redis.Redis.from_url(own_redis.url)
    RedisAudit(connection).append(record(1, actor="from-a-worker"))
    app = create_app(
        _settings(tmp_path, redis_url=own_redis.url),
        IdleQueue(),
        queue_kind="redis",
        redis_configured=True,
    )
    assert isinstance(app.state.audit, RedisAudit)
    with TestClient(app) as test_client:
        assert "from-a-worker" in rows(test_client.get("/").text)[0]
        assert "from-a-worker" in rows(test_client.get("/commands?repo=octo/widgets").text)[0]
    assert connection.xlen(keys.AUDIT_STREAM) == 1
    connection.close()


def test_serve_shares_the_in_process_state_with_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workers.context

    given: list[StateStore] = []
    build = workers.context.build_context

    def spy(settings: Settings, state: StateStore, *args: Any) -> workers.context.WorkerContext:
        given.append(state)
        return build(settings, state, *args)

    monkeypatch.setattr(workers.context, "build_context", spy)
    app, queue = processes.build_app(_settings(tmp_path))
    try:
        assert isinstance(app, Starlette)
        (state,) = given
        audit: AuditLog = app.state.audit
        assert audit is state.audit  # what the jobs record is what the page reads
        state.audit.append(record(0, actor="from-a-job"))
        with TestClient(app) as test_client:
            assert "from-a-job" in rows(test_client.get("/").text)[0]
    finally:
        queue.close()


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("https://github.com/o/r/pull/1", "https://github.com/o/r/pull/1"),
        ("http://127.0.0.1:3000/o/r/pulls/2", "http://127.0.0.1:3000/o/r/pulls/2"),
        ("HTTPS://example.com/a b", None),
        ("https://example.com/é", "https://example.com/%C3%A9"),
        ("https:///no-host", None),
        ("ftp://example.com/x", None),
        ("mailto:a@example.com", None),
        ("/relative", None),
        ("https://example.com/\u202e", None),
        ("https://[::1", None),  # urlsplit refuses it
        ("", None),
        (None, None),
    ],
)
def test_safe_link(url: str | None, link: str | None) -> None:
    assert safe_link(url) == link


def test_pull_links_only_for_forges_and_names_they_allow() -> None:
    assert pull_link(GITHUB, "github", "o/r", 3) == "https://github.com/o/r/pull/3"
    assert (
        pull_link(GITHUB, "gitlab", "g/s/p", 3) == "https://gitlab.example/g/s/p/-/merge_requests/3"
    )
    assert pull_link(GITHUB, "gitea", "o/r", 3) is None  # no ICHOR_GITEA_URL
    assert pull_link(GITHUB, "local", "o/r", 3) is None
    assert pull_link(GITHUB, "github", "o/r", None) is None
    assert pull_link(GITHUB, "github", "o/../r", 3) is None
    assert pull_link(GITHUB, "github", "o/r?x=1", 3) is None
    assert pull_link({"github": "javascript:x"}, "github", "o/r", 3) is None
    (row,) = command_rows([record(0, result="refused: no")], GITHUB)
    assert (row.kind, row.when) == ("refused", "2026-12-01 12:00:00")
    assert command_rows([record(0, result="odd")], GITHUB)[0].kind == "other"
