"""The job table and the worker context: built at start-up, handed in, never guessed."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from bot.checks.pipeline import CheckServices, run_check
from bot.checks.request import CheckRequest, MergeBase, pull_request
from bot.checks.trees import TreeSource, local_tree
from bot.errors import IchorError
from bot.forges.base import GitCredentials
from bot.forges.gitlab import GitLabForge
from bot.forges.local import LocalForge
from bot.gate.run import RegistryCache
from bot.git.repository import GitRepository
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings
from bot.state.memory import memory_state
from bot.webhooks import ChangeRequestEvent, CheckRerequestEvent, PushEvent, event_to_dict
from tests.support.gitops import base_files, configmap
from tests.support.gitrepo import WorkRepo
from workers.context import build_context, installed_context
from workers.jobs import JOBS, check_job, handle_delivery, run_delivery

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


class _ThreadRecorder:
    """A real tree source that notes the thread each git call runs on."""

    def __init__(self, tree: TreeSource, threads: set[int]) -> None:
        self._tree = tree
        self._threads = threads

    def fetch(
        self, credentials: GitCredentials | None, refs: Sequence[str], *, want: Sequence[str] = ()
    ) -> None:
        self._threads.add(threading.get_ident())
        self._tree.fetch(credentials, refs, want=want)

    def prefetch_blobs(
        self, credentials: GitCredentials | None, commit: str, paths: Sequence[str]
    ) -> int:
        self._threads.add(threading.get_ident())
        return self._tree.prefetch_blobs(credentials, commit, paths)

    def changed_paths(self, base: str, head: str) -> list[str]:
        self._threads.add(threading.get_ident())
        return self._tree.changed_paths(base, head)

    def fetched_ref(self, ref: str) -> str | None:
        return self._tree.fetched_ref(ref)

    def repository(self) -> GitRepository:
        self._threads.add(threading.get_ident())
        return self._tree.repository()


def test_git_and_the_gate_run_off_the_event_loop(tmp_path: Path) -> None:
    repo = WorkRepo(tmp_path / NAME)
    base = repo.commit(base_files(), "base")
    head = repo.commit({"clusters/prod/v1/configmaps/web/other.yaml": configmap("other")})
    threads: set[int] = set()

    @contextlib.contextmanager
    def open_tree(handle: RepoRef) -> Iterator[TreeSource]:
        threads.add(threading.get_ident())
        with local_tree(str(repo.path)) as tree:
            yield _ThreadRecorder(tree, threads)

    handle = RepoRef(ForgeKind.GITHUB, NAME, clone_url=f"https://github.com/{NAME}.git")
    request: CheckRequest = pull_request(
        handle,
        head,
        MergeBase(base, "main"),
        7,
        forge=ForgeKind.GITHUB,
        external_id="d1",
        pull_head_ref=lambda n: f"refs/pull/{n}/head",
    )
    services = CheckServices(LocalForge(tmp_path / "data"), open_tree, registries=RegistryCache())

    async def check() -> tuple[int, str]:
        result = await run_check(request, services)
        return threading.get_ident(), result.status

    loop_thread, status = asyncio.run(check())
    assert status == "posted"
    assert threads and loop_thread not in threads


_JOB: contextvars.ContextVar[str | None] = contextvars.ContextVar("job", default=None)


def test_each_run_sees_the_context_variables_of_its_caller(tmp_path: Path) -> None:
    # RQ keeps the current job in a context variable: the second job of a worker must see
    # itself there, not the job whose run first created the thread's event loop.
    context = build_context(Settings(data_dir=tmp_path / "data"), memory_state())

    async def current() -> str | None:
        return _JOB.get()

    seen: list[str | None] = []
    for job in ("first", "second"):
        token = _JOB.set(job)
        try:
            seen.append(context.run(current()))
        finally:
            _JOB.reset(token)
    assert seen == ["first", "second"]
