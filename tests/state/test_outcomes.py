"""Job outcomes and the workers' forge report: the same behaviour from Redis and the data dir."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.settings import ForgeSetup
from bot.state.outcomes import (
    OUTCOME_CAP,
    FileOutcomes,
    JobOutcome,
    OutcomeStore,
    RedisOutcomes,
    Result,
    Unposted,
)
from tests.web.conftest import SHARED_REDIS


@pytest.fixture(params=["redis", "files"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OutcomeStore]:
    if request.param == "files":
        yield FileOutcomes(tmp_path / "history")
        return
    redis_store = RedisOutcomes(SHARED_REDIS, f"test-{uuid.uuid4().hex[:12]}")
    try:
        yield redis_store
    finally:
        redis_store.redis.delete(*redis_store.keys, redis_store.forges_key)
        redis_store.close()


def _unposted(n: int, kind: Unposted | str = Unposted.SETTINGS, **kw: object) -> JobOutcome:
    values: dict[str, object] = {
        "at": float(n),
        "job_id": f"github-d{n}",
        "forge": "github",
        "result": Result.NOT_POSTED.value,
        "detail": "the GitHub App id is not set",
        "kind": str(kind),
    }
    return JobOutcome(**{**values, **kw})  # type: ignore[arg-type]


def test_a_job_run_again_replaces_its_outcome(store: OutcomeStore) -> None:
    store.add(_unposted(1, Unposted.UNREACHABLE, final=False))
    assert store.unposted_counts() == {}  # the queue tries it again: not counted yet
    store.add(_unposted(2, "", job_id="github-d1", result="posted", detail="success"))
    assert [(o.job_id, o.result) for o in store.recent()] == [("github-d1", "posted")]
    assert store.outcomes(["github-d1", "gone"])["github-d1"].detail == "success"
    assert store.unposted_counts() == {}


def test_only_jobs_that_ended_for_good_unposted_are_counted(store: OutcomeStore) -> None:
    store.add(_unposted(1))
    store.add(_unposted(2))
    store.add(_unposted(3, Unposted.UNREACHABLE, forge="gitea", job_id="gitea-d3"))
    store.add(_unposted(4, Unposted.UNREACHABLE, final=False))
    store.add(_unposted(5, "", result="silent"))
    assert store.unposted_counts() == {("github", "settings"): 2, ("gitea", "unreachable"): 1}
    assert [o.job_id for o in store.recent(2)] == ["github-d5", "github-d4"]


def test_the_counter_only_shows_known_forges_and_reasons(store: OutcomeStore) -> None:
    store.add(_unposted(1, forge="elsewhere", job_id="x-1"))
    store.add(_unposted(2, forge="local", job_id="local-2"))
    assert store.unposted_counts() == {("local", "settings"): 1}


def test_outcomes_are_capped_oldest_first(store: OutcomeStore) -> None:
    for n in range(OUTCOME_CAP + 5):
        store.add(_unposted(n))
    kept = store.recent(OUTCOME_CAP + 10)
    assert len(kept) == OUTCOME_CAP and kept[-1].job_id == "github-d5"
    assert store.unposted_counts() == {("github", "settings"): OUTCOME_CAP + 5}  # never capped


def test_what_a_worker_last_reported_it_can_post_to(store: OutcomeStore) -> None:
    assert store.setups() is None
    first = [ForgeSetup("github", True, ("ICHOR_GITHUB_APP_ID",), ("ICHOR_GITHUB_PRIVATE_KEY",))]
    store.report_setups(first)
    assert store.setups() == first
    second = [ForgeSetup("github", True, ("ICHOR_GITHUB_APP_ID", "ICHOR_GITHUB_PRIVATE_KEY"))]
    store.report_setups(second)
    assert store.setups() == second


def test_damaged_records_are_skipped(tmp_path: Path) -> None:
    files = FileOutcomes(tmp_path)
    files.add(_unposted(1))
    data = json.loads((tmp_path / "outcomes.json").read_text())
    data["jobs"]["broken"] = {"at": "never"}
    data["unposted"]["github|settings"] = "many"
    (tmp_path / "outcomes.json").write_text(json.dumps(data))
    (tmp_path / "forges.json").write_text("{not json")
    assert [o.job_id for o in files.recent()] == ["github-d1"]
    assert files.unposted_counts() == {}
    assert files.setups() is None
    (tmp_path / "outcomes.json").write_text("[]")
    assert files.recent() == [] and files.unposted_counts() == {}


def test_each_reason_is_said_in_words() -> None:
    assert _unposted(1).said == "the bot's settings for this forge are incomplete"
    assert _unposted(1, Unposted.UNREACHABLE).said == "the forge could not be reached"
    assert dataclasses.replace(_unposted(1), kind="???").said == "the job failed"
