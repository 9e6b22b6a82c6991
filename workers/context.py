"""What a worker process holds between jobs: settings, forge adapters, state, git store, caches.

Built once when the process starts (``ichor-bot worker``, or ``ichor-bot serve`` for the
in-process queue) by :func:`build_context`, and handed to the jobs: the in-process queue is
given a job function bound to it; RQ names its job functions by module path, so
``ichor-bot worker`` installs the context for this process (:func:`install`) before it takes a
job, and a job in a process without one fails saying so. Adapters keep their HTTP clients and
installation tokens across jobs, one set per thread (the in-process queue runs jobs on threads).
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from bot.checks.pipeline import CheckHistory
from bot.checks.report_cache import ReportCache
from bot.checks.trees import TreeSource, local_tree
from bot.errors import IchorError, PermanentForgeError
from bot.forges.base import ForgeAdapter
from bot.forges.http.seam import RateLimit, RateObserver
from bot.forges.local import LocalForge, repository_path
from bot.gate.content.cache import FactsCache, LayeredFactsCache, MemoryFactsCache
from bot.gate.run import RegistryCache
from bot.queueing.base import Outcome, QueuedDelivery
from bot.repos import RepoRef
from bot.settings import Settings
from bot.state.base import StateStore
from bot.state.facts_disk import DirectoryFactsCache
from bot.state.history import CheckRecorder, HistoryStore, history_store
from bot.state.outcomes import OutcomeStore, outcome_store
from bot.state.rates import RateRecorder, RateStore, rate_store
from bot.state.sweeps import SweepStore

if TYPE_CHECKING:  # imported for real where they are used, on first use
    from bot.git.store import GitStore, Mirror

T = TypeVar("T")
OpenMirror = Callable[[RepoRef], AbstractContextManager["Mirror"]]


class SweepQueue(Protocol):
    """What the sweep needs of the queue: to queue the checks it finds missing, and to know
    which deliveries the bot took already (their dedupe markers)."""

    def submit_many(self, deliveries: list[QueuedDelivery]) -> list[Outcome]: ...

    def seen(self, job_ids: Sequence[str]) -> set[str]: ...


class AttemptCounter(Protocol):
    def begin_attempt(self, job_id: str) -> int:
        """Count a run of a job; more than 1 when it ran before."""
        ...


@dataclass(frozen=True, slots=True)
class Adapter:
    """A repository's forge adapter, where its commits are read from, and whether the summary
    comment is posted (on GitHub the check run carries the result; elsewhere the comment is
    the result)."""

    forge: ForgeAdapter
    summary_comment: bool
    # A forge's bare mirror: what checks read and change pull requests are built in and pushed
    # from. None for the local forge, whose repository on disk is read in place and never
    # pushed to.
    open_mirror: OpenMirror | None = None
    local_path: str | None = None

    def open_tree(self, repo: RepoRef) -> AbstractContextManager[TreeSource]:
        """Where a check reads the repository's commits: the mirror, or the local repository."""
        if self.open_mirror is not None:
            return self.open_mirror(repo)
        if self.local_path is None:
            raise IchorError(f"{repo.full_name}: the adapter has no tree to read")
        return local_tree(self.local_path)


@dataclass
class WorkerContext:
    settings: Settings
    state: StateStore
    cache: FactsCache
    registries: RegistryCache
    history: CheckHistory
    attempts: AttemptCounter | None = None  # None: jobs never run twice (the in-process queue)
    # How each job ended, for the status page and /metrics; None: not kept.
    outcomes: OutcomeStore | None = None
    # The gate's reports on revisions checked lately (a base serves every pull request on it).
    reports: ReportCache = field(default_factory=ReportCache)
    # The rate limits the forges report, kept for the status page and the work that can wait;
    # None: not kept (nothing steps aside).
    rates: RateStore | None = None
    # The sweep (design.md 7): where it queues checks and what it keeps; None: no sweep here.
    queue: SweepQueue | None = None
    sweeps: SweepStore | None = None
    deliveries: HistoryStore | None = None  # the status page's deliveries, reconciled ones too
    clock: Callable[[], float] = field(default=time.time)
    _recorders: dict[str, RateRecorder] = field(default_factory=dict)
    _stores: dict[str, GitStore] = field(default_factory=dict)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def with_history(self, history: CheckHistory) -> WorkerContext:
        """This context for one job whose posted checks ``history`` sees first; adapters and
        stores stay shared."""
        view = copy.copy(self)
        view.history = history
        return view

    def adapter_for(self, forge: str, full_name: str) -> Adapter:
        """The adapter and tree source for a repository: the local forge when the repository is
        under ``ICHOR_LOCAL_REPOS``, else the forge the delivery came from."""
        settings = self.settings
        if settings.local_repos is not None:
            path = repository_path(settings.local_repos, full_name)
            if path is not None:
                local = self._adapter("local", lambda: LocalForge(settings.data_dir))
                return Adapter(local, True, local_path=str(path))
        if forge == "github":
            from bot.forges.github.adapter import GitHubForge

            github = self._adapter(
                "github", lambda: GitHubForge.from_settings(settings, rates=self._rates("github"))
            )
            store = self._store(settings.github_url)
            return Adapter(github, settings.github_summary_comment, store.open)
        if forge == "gitlab":
            from bot.forges.gitlab.adapter import GitLabForge

            gitlab = self._adapter(
                "gitlab", lambda: GitLabForge.from_settings(settings, rates=self._rates("gitlab"))
            )
            store = self._store(settings.gitlab_url)
            return Adapter(gitlab, True, store.open)
        if forge == "gitea":
            from bot.forges.gitea.adapter import GiteaForge

            gitea = self._adapter(
                "gitea", lambda: GiteaForge.from_settings(settings, rates=self._rates("gitea"))
            )
            assert settings.gitea_url is not None  # from_settings refuses a missing URL
            store = self._store(settings.gitea_url)
            return Adapter(gitea, True, store.open)
        raise PermanentForgeError(f"unknown forge {forge!r}")

    def can_wait(self, forge: str, bucket: str) -> bool:
        """Whether work that can wait (line comments, the reconciler, redeliveries) may spend
        ``bucket``'s rate limit now: yes unless the forge last said it runs low
        (``ICHOR_RATE_RESERVE``), or nothing is known."""
        if self.rates is None:
            return True
        try:
            budget = self.rates.budget(forge, bucket)
        except Exception:  # unknown: go ahead, the seam still honours an exhausted limit
            return True
        return budget is None or not budget.low(self.settings.rate_reserve, self.clock())

    def _rates(self, forge: str) -> RateObserver | None:
        if self.rates is None:
            return None
        with self._lock:
            recorder = self._recorders.get(forge)
            if recorder is None:
                recorder = self._recorders[forge] = RateRecorder(self.rates, forge)

        def observe(bucket: str, rate: RateLimit) -> None:
            recorder.saw(bucket, rate.remaining, rate.limit, rate.reset)

        return observe

    def _adapter(self, key: str, build: Callable[[], ForgeAdapter]) -> ForgeAdapter:
        # Per thread: an adapter's HTTP client is not shared between threads.
        forges: dict[str, ForgeAdapter] | None = getattr(self._local, "forges", None)
        if forges is None:
            forges = self._local.forges = {}
        if key not in forges:
            forges[key] = build()
        return forges[key]

    def _store(self, base_url: str) -> GitStore:
        from bot.git.store import GitStore

        with self._lock:
            if base_url not in self._stores:
                self._stores[base_url] = GitStore(
                    self.settings.data_dir / "git", allowed_base_url=base_url
                )
            return self._stores[base_url]


def build_context(
    settings: Settings,
    state: StateStore,
    attempts: AttemptCounter | None = None,
    *,
    queue: SweepQueue | None = None,
    sweeps: SweepStore | None = None,
) -> WorkerContext:
    """Everything a job needs, built at start-up: what cannot be built fails here, not in a
    job. ``queue`` and ``sweeps``: what the sweep needs, given by a worker on Redis."""
    cache = LayeredFactsCache(MemoryFactsCache(), DirectoryFactsCache(settings.data_dir / "facts"))
    # Checks and job outcomes kept for the status page where the web process reads them.
    where = (settings.redis_url, settings.data_dir, settings.queue_name)
    deliveries = history_store(*where)
    history = CheckRecorder(deliveries)
    return WorkerContext(
        settings,
        state,
        cache,
        RegistryCache(),
        history,
        attempts,
        outcome_store(*where),
        rates=rate_store(*where),
        queue=queue,
        sweeps=sweeps,
        deliveries=deliveries,
    )


_INSTALLED: WorkerContext | None = None


def install(context: WorkerContext | None) -> None:
    """Make ``context`` the one the RQ job functions of this process use (None: none)."""
    global _INSTALLED
    _INSTALLED = context


def installed() -> WorkerContext:
    if _INSTALLED is None:
        raise IchorError(
            "this process has no worker context: run jobs with `ichor-bot worker` (a plain "
            "`rq worker` does not build one)"
        )
    return _INSTALLED


@contextlib.contextmanager
def installed_context(context: WorkerContext) -> Iterator[WorkerContext]:
    """``context`` installed for the duration of a block (a worker's run, or a test's)."""
    previous = _INSTALLED
    install(context)
    try:
        yield context
    finally:
        install(previous)
