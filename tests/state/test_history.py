"""The status page's history: the same behaviour from Redis and from the data dir."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from bot.forges.base import Annotation, CheckOutput, Conclusion
from bot.repos import ForgeKind, RepoRef
from bot.state import history as history_module
from bot.state.history import (
    CHECK_CAP,
    DELIVERY_CAP,
    CheckEntry,
    CheckRecorder,
    DeliveryEntry,
    FileHistory,
    HistoryStore,
    RedisHistory,
    web_url,
)
from tests.web.conftest import SHARED_REDIS, free_port


@pytest.fixture(params=["redis", "files"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryStore]:
    if request.param == "files":
        yield FileHistory(tmp_path / "history")
        return
    redis_store = RedisHistory(SHARED_REDIS, f"test-{uuid.uuid4().hex[:12]}")
    try:
        yield redis_store
    finally:
        redis_store.redis.delete(*redis_store.keys)
        redis_store.close()


def _delivery(n: int, **kw: object) -> DeliveryEntry:
    values: dict[str, object] = {
        "at": float(n),
        "forge": "github",
        "status": 202,
        "outcome": "queued",
        "delivery_id": f"d{n}",
    }
    return DeliveryEntry(**{**values, **kw})  # type: ignore[arg-type]


def _check(n: int, number: int | None = 1, **kw: object) -> CheckEntry:
    values: dict[str, object] = {
        "at": float(n),
        "forge": "github",
        "repository": "o/r",
        "number": number,
        "head_sha": f"{n:040x}",
        "conclusion": "failure",
        "title": "1 target refused",
        "summary": "| a | b |",
    }
    return CheckEntry(**{**values, **kw})  # type: ignore[arg-type]


def test_deliveries_newest_first_and_capped(store: HistoryStore) -> None:
    store.add_deliveries([_delivery(n) for n in range(DELIVERY_CAP + 5)])
    store.add_deliveries([_delivery(999, status=401, outcome="unauthorized", reason="bad")])
    found = store.deliveries()
    assert len(found) == DELIVERY_CAP
    assert found[0].delivery_id == "d999" and found[0].reason == "bad"
    assert found[1].delivery_id == f"d{DELIVERY_CAP + 4}"
    assert [d.delivery_id for d in store.deliveries(3)][1:] == [
        f"d{DELIVERY_CAP + 4}",
        f"d{DELIVERY_CAP + 3}",
    ]


def test_file_deliveries_are_compacted(tmp_path: Path) -> None:
    files = FileHistory(tmp_path)
    for n in range(3 * DELIVERY_CAP):
        files.add_deliveries([_delivery(n)])
    lines = (tmp_path / "deliveries.jsonl").read_text().splitlines()
    assert len(lines) <= 2 * DELIVERY_CAP
    assert files.deliveries(1)[0].delivery_id == f"d{3 * DELIVERY_CAP - 1}"


def test_one_check_per_pull_request_the_latest(store: HistoryStore) -> None:
    store.add_check(_check(1, title="old"))
    store.add_check(_check(2, number=2))
    store.add_check(_check(3, title="new"))
    store.add_check(_check(4, number=None))  # a push: one per commit
    found = store.checks()
    assert [(c.number, c.title) for c in found] == [
        (None, "1 target refused"),
        (1, "new"),
        (2, "1 target refused"),
    ]
    newest = store.check(found[1].id)
    assert newest is not None and newest.head_sha == f"{3:040x}"
    assert store.check("0" * 24) is None
    assert store.check("../../etc/passwd") is None


def test_checks_are_capped(store: HistoryStore) -> None:
    for n in range(CHECK_CAP + 3):
        store.add_check(_check(n, number=n))
    found = store.checks(limit=CHECK_CAP + 10)
    assert len(found) == CHECK_CAP
    assert found[0].number == CHECK_CAP + 2
    assert store.check(_check(0, number=0).id) is None


def test_damaged_records_are_skipped(tmp_path: Path) -> None:
    files = FileHistory(tmp_path)
    files.add_deliveries([_delivery(1)])
    with (tmp_path / "deliveries.jsonl").open("a") as fh:
        fh.write('{"not": "a delivery"}\nnot json\n')
    files.add_check(_check(1))
    (tmp_path / "checks" / ("f" * 24 + ".json")).write_text('{"at": "x"}')
    assert [d.delivery_id for d in files.deliveries()] == ["d1"]
    assert [c.title for c in files.checks()] == ["1 target refused"]


def test_redis_records_from_elsewhere_are_skipped() -> None:
    store = RedisHistory(SHARED_REDIS, f"test-{uuid.uuid4().hex[:12]}")
    try:
        store.redis.lpush(store.keys[0], b"\xff not json", b"[1, 2]")
        assert store.deliveries() == []
    finally:
        store.redis.delete(*store.keys)


def test_recorder_keeps_what_the_forge_received(tmp_path: Path) -> None:
    files = FileHistory(tmp_path)
    annotations = tuple(
        Annotation(f"a/{n}.txt", n + 1, n + 1, "failure", "foreign-file", "m" * 5000)
        for n in range(history_module.ISSUE_LIMIT + 5)
    )
    output = CheckOutput(Conclusion.FAILURE, "1 target refused", "s" * 70_000, "", annotations)
    repo = RepoRef(ForgeKind.GITHUB, "o/r", clone_url="https://github.example/o/r.git")
    CheckRecorder(files, clock=lambda: 42.0).record("github", repo, 5, "d1", "ab" * 20, output)
    (entry,) = files.checks()
    assert (entry.at, entry.number, entry.delivery_id) == (42.0, 5, "d1")
    assert entry.web_url == "https://github.example/o/r"
    assert len(entry.issues) == history_module.ISSUE_LIMIT
    assert entry.issue_count == len(annotations)
    assert len(entry.summary) == history_module.SUMMARY_LIMIT
    assert len(entry.issues[0].message) == 4000


def test_recorder_never_raises_when_the_store_is_down(caplog: pytest.LogCaptureFixture) -> None:
    down = RedisHistory(f"redis://127.0.0.1:{free_port()}/0", "down", timeout=0.5)
    output = CheckOutput(Conclusion.SUCCESS, "accepted", "", "")
    repo = RepoRef(ForgeKind.GITEA, "o/r", clone_url="https://gitea.example/o/r.git")
    CheckRecorder(down).record("gitea", repo, None, "d", "ab" * 20, output)
    assert "could not keep the check" in caplog.text
    with pytest.raises(redis.exceptions.ConnectionError):
        down.deliveries()


def test_web_url_only_for_http_and_never_for_local() -> None:
    assert web_url(
        RepoRef(ForgeKind.GITLAB, "g/p", clone_url="https://gl.example/g/p.git"), "gitlab"
    ) == ("https://gl.example/g/p")
    assert (
        web_url(RepoRef(ForgeKind.GITHUB, "o/r", clone_url="https://github.com/o/r.git"), "local")
        is None
    )
    assert web_url(RepoRef(ForgeKind.GITHUB, "o/r", clone_url="file:///tmp/o/r"), "github") is None
