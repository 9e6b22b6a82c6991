"""What a worker process holds between jobs: settings, forge adapters, the git store, caches.

``ichor-bot worker`` and the in-process queue call :func:`configure` at start-up; a job run by
a plain ``rq worker`` configures from the environment on its first job. Forge adapters keep
their HTTP clients and installation tokens across jobs, so each runs on one event loop per
thread that lives as long as the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from bot.checks.pipeline import TreeSource, local_tree
from bot.content.cache import DirectoryFactsCache, FactsCache, LayeredFactsCache, MemoryFactsCache
from bot.errors import PermanentForgeError
from bot.forges.base import Forge, RepoHandle
from bot.forges.local import LocalForge, repository_path
from bot.queueing.base import PullState
from bot.settings import Settings, load_settings
from bot.web.history import CheckRecorder, history_store

if TYPE_CHECKING:  # imported for real where they are used, on first use
    from bot.gitstore import GitStore
    from bot.queueing.redis_queue import RedisDeliveryQueue

T = TypeVar("T")
OpenTree = Callable[[RepoHandle], AbstractContextManager[TreeSource]]


class AttemptCounter(Protocol):
    def begin_attempt(self, job_id: str) -> int:
        """Count a run of a job; more than 1 when it ran before."""
        ...


@dataclass
class WorkerContext:
    settings: Settings
    pulls: PullState | None
    cache: FactsCache
    history: CheckRecorder | None = None
    attempts: AttemptCounter | None = None
    _stores: dict[str, GitStore] = field(default_factory=dict)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run on this thread's long-lived event loop (adapters' clients are bound to it)."""
        runner: asyncio.Runner | None = getattr(self._local, "runner", None)
        if runner is None:
            runner = self._local.runner = asyncio.Runner()
        return runner.run(coroutine)

    def forge_for(self, forge: str, full_name: str) -> tuple[Forge, OpenTree]:
        """The adapter and tree source for a repository: the local forge when the repository is
        under ``ICHOR_LOCAL_REPOS``, else the forge the delivery came from."""
        settings = self.settings
        if settings.local_repos is not None:
            path = repository_path(settings.local_repos, full_name)
            if path is not None:
                local = self._adapter("local", lambda: LocalForge(settings.data_dir))
                return local, _opener(str(path))
        if forge == "github":
            from bot.forges.github import GitHubForge

            github = self._adapter("github", lambda: GitHubForge.from_settings(settings))
            return github, self._store(settings.github_url).open
        if forge == "gitlab":
            from bot.forges.gitlab import GitLabForge

            gitlab = self._adapter("gitlab", lambda: GitLabForge.from_settings(settings))
            return gitlab, self._store(settings.gitlab_url).open
        if forge == "gitea":
            from bot.forges.gitea import GiteaForge

            gitea = self._adapter("gitea", lambda: GiteaForge.from_settings(settings))
            assert settings.gitea_url is not None  # from_settings refuses a missing URL
            return gitea, self._store(settings.gitea_url).open
        raise PermanentForgeError(f"unknown forge {forge!r}")

    def _adapter(self, key: str, build: Callable[[], Forge]) -> Forge:
        # Per thread: an adapter's HTTP client belongs to the event loop that made it.
        forges: dict[str, Forge] | None = getattr(self._local, "forges", None)
        if forges is None:
            forges = self._local.forges = {}
        if key not in forges:
            forges[key] = build()
        return forges[key]

    def _store(self, base_url: str) -> GitStore:
        from bot.gitstore import GitStore

        with self._lock:
            if base_url not in self._stores:
                self._stores[base_url] = GitStore(
                    self.settings.data_dir / "git", allowed_base_url=base_url
                )
            return self._stores[base_url]


def _opener(path: str) -> OpenTree:
    def open_tree(repo: RepoHandle) -> AbstractContextManager[TreeSource]:
        return local_tree(path)

    return open_tree


_CONTEXT: WorkerContext | None = None
_CONTEXT_LOCK = threading.Lock()


def configure(
    settings: Settings, pulls: PullState | None, attempts: AttemptCounter | None = None
) -> WorkerContext:
    global _CONTEXT
    cache = LayeredFactsCache(MemoryFactsCache(), DirectoryFactsCache(settings.data_dir / "facts"))
    with _CONTEXT_LOCK:
        _CONTEXT = WorkerContext(settings, pulls, cache, _history(settings), attempts)
        return _CONTEXT


def _history(settings: Settings) -> CheckRecorder:
    """Checks kept for the status page where the web process reads them."""
    store = history_store(settings.redis_url, settings.data_dir, settings.queue_name)
    return CheckRecorder(store)


def current() -> WorkerContext:
    """The configured context; a job started by a plain ``rq worker`` configures one from the
    environment, with pull request state on the job's own Redis connection."""
    with _CONTEXT_LOCK:
        context = _CONTEXT
    if context is not None:
        return context
    settings = load_settings()
    pulls: RedisDeliveryQueue | None = None
    with contextlib.suppress(Exception):
        from rq import get_current_job

        from bot.queueing.redis_queue import RedisDeliveryQueue

        if get_current_job() is not None and settings.redis_url:
            pulls = RedisDeliveryQueue(settings.redis_url, settings.queue_name)
    return configure(settings, pulls, pulls)


@contextlib.contextmanager
def configured(settings: Settings, pulls: PullState | None) -> Iterator[WorkerContext]:
    """For tests: a context for the duration of a block."""
    global _CONTEXT
    previous = _CONTEXT
    try:
        yield configure(settings, pulls)
    finally:
        _CONTEXT = previous
