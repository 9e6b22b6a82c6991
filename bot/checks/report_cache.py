"""The gate's reports on revisions checked lately, by repository, revision and policy.

A report is a pure function of the revision's tree and the policy: every pull request opened
against one base tip, and every push to one pull request, gates that same base again. A worker
keeps the last few reports and gives the same one back instead of gating the base (or a head
checked again by ``/recheck``) twice. Bounded; safe across threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from bot.gate.policy import GatePolicy
from bot.gate.report import Report
from bot.repos import RepoRef

DEFAULT_SIZE = 16  # a large target's report is a few MB at most


def report_key(repo: RepoRef, rev: str, policy: GatePolicy) -> Hashable:
    """What a report is a function of: one key for a check's and a change's gate of one
    revision under one policy, so either finds the other's."""
    return (repo.forge, repo.full_name, repo.clone_url, rev, policy)


class ReportCache:
    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._reports: OrderedDict[Hashable, Report] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], Report]) -> Report:
        """The report kept for ``key``, else ``build()``'s, kept. A key that cannot be hashed
        (a policy holding an unhashable value) is built every time."""
        try:
            hash(key)
        except TypeError:
            return build()
        with self._lock:
            if (found := self._reports.get(key)) is not None:
                self._reports.move_to_end(key)
                return found
        report = build()
        with self._lock:
            self._reports[key] = report
            while len(self._reports) > self._size:
                self._reports.popitem(last=False)
        return report

    def __len__(self) -> int:
        return len(self._reports)
