"""The job table and the worker context: built at start-up, handed in, never guessed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.errors import IchorError
from bot.forges.gitlab.adapter import GitLabForge
from bot.forges.local import LocalForge
from bot.queueing.base import delivery_job_id, job_id_of
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings
from bot.state.base import GROUP_ENDED, merge_group_key
from bot.state.memory import memory_state
from bot.webhooks import (
    ChangeRequestEvent,
    CheckRerequestEvent,
    MergeGroupAction,
    MergeGroupEvent,
    PushEvent,
    event_to_dict,
)
from tests.support.gitops import base_files, configmap
from tests.support.gitrepo import WorkRepo
from workers.context import build_context, installed_context
from workers.jobs import JOBS, check_job, handle_delivery, merge_group_job, run_delivery

NAME = "acme/gitops"


def test_a_job_in_a_process_without_a_context_fails_saying_so() -> None:
    with pytest.raises(IchorError, match="no worker context"):
        handle_delivery("github", "d1", {"type": "push"})


def test_the_table_names_a_job_for_each_event_that_asks_for_a_check() -> None:
    assert {
        e: JOBS[e] for e in (ChangeRequestEvent, PushEvent, CheckRerequestEvent)
    } == dict.fromkeys((ChangeRequestEvent, PushEvent, CheckRerequestEvent), check_job)


def test_each_adapter_names_its_pull_request_head_ref(tmp_path: Path) -> None:
    gitlab = GitLabForge(url="https://gitlab.test", token="t")
    assert gitlab.pull_head_ref(3) == "refs/merge-requests/3/head"
    assert LocalForge(tmp_path).pull_head_ref(3) == "refs/pull/3/head"


def test_the_context_built_at_start_up_is_the_one_jobs_use(tmp_path: Path) -> None:
    repo = WorkRepo(tmp_path / "repos" / NAME)
    base = repo.commit(base_files(), "base")
    head = repo.commit({"clusters/prod/v1/configmaps/web/other.yaml": configmap("other")})
    settings = Settings(local_repos=tmp_path / "repos", data_dir=tmp_path / "data")
    state = memory_state()
    context = build_context(settings, state)
    state.heads.record_head(f"github:{NAME}:7", "f" * 40, redelivery=False)  # a newer head
    event = _change(head, base)
    # Handed in directly (the in-process queue) and installed (RQ): the same state decides.
    assert run_delivery(context, "github", "d1", event)["check"]["status"] == "superseded"
    with installed_context(context):
        assert handle_delivery("github", "d2", event)["check"]["status"] == "superseded"


def _change(head: str, base: str) -> dict[str, Any]:
    repo = RepoRef(ForgeKind.GITHUB, NAME, "1", f"https://github.com/{NAME}.git", "", "main")
    event = ChangeRequestEvent(
        repo, 7, "opened", head, "main", "feature", base, None, NAME, False, "alice", 1, False
    )
    return event_to_dict(event)


def _group(action: MergeGroupAction, head: str, base: str) -> dict[str, Any]:
    repo = RepoRef(ForgeKind.GITHUB, NAME, "1", f"https://github.com/{NAME}.git", "", "main")
    ref = f"refs/heads/gh-readonly-queue/main/pr-7-{base}"
    return event_to_dict(MergeGroupEvent(repo, action, head, ref, "main", base, (7,), 1))


def test_a_merge_group_is_checked_and_its_end_posts_nothing_more(tmp_path: Path) -> None:
    """The group's check is kept under its job, the one its event and its push share; once the
    group is destroyed (recorded as the delivery is queued), its check posts no verdict."""
    repo = WorkRepo(tmp_path / "repos" / NAME)
    base = repo.commit(base_files(), "base")
    head = repo.commit({"clusters/prod/v1/configmaps/web/other.yaml": configmap("other")})
    settings = Settings(local_repos=tmp_path / "repos", data_dir=tmp_path / "data")
    state = memory_state()
    context = build_context(settings, state)
    assert JOBS[MergeGroupEvent] is merge_group_job
    event = _group("checks_requested", head, base)
    summary = run_delivery(context, "github", "d1", event)
    assert summary["check"]["status"] == "posted"
    job = delivery_job_id("github", "d1", event)
    assert job != job_id_of("github", "d1")
    assert context.outcomes is not None
    assert context.outcomes.outcomes([job])[job].result == "posted"
    ended = _group("destroyed", head, base)
    state.heads.record_head(merge_group_key("github", NAME, head), GROUP_ENDED, redelivery=False)
    assert run_delivery(context, "github", "d2", ended)["silent"] == "group-ended"
    again = run_delivery(context, "github", "d3", _group("rerequested", head, base))
    assert again["check"]["status"] == again["silent"] == "group-ended"
