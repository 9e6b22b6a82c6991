"""GitHub's merge queue branches: what a ``gh-readonly-queue/…`` ref says about its merge group.

GitHub builds each merge group on a branch of its own,
``refs/heads/gh-readonly-queue/<base branch>/pr-<number>-<base sha>``: the pull request the
group adds and the commit the group is built on (the base branch's tip, or the head of the
group queued before it). The base branch may itself hold ``/`` (``release/v1``), so the entries
are read from the last segment only, and everything between the prefix and that segment is the
base branch. A group that carries several pull requests names each, ``pr-<n>-<sha>`` joined by
``-``; the first entry's commit is the group's base.

Read from untrusted text, so the reading is strict and bounded: the ref must be a valid git ref
(:func:`bot.repos.names.ref_problem`), so at most 1,024 characters and so at most about 20
entries; numbers are 1 to 10 digits with no leading zero, commits full SHA-1 or SHA-256 ids
(one pattern, matched in linear time); anything else is not a queue branch (None), never a
guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.repos.names import ref_problem

QUEUE_PREFIX = "refs/heads/gh-readonly-queue/"
_ENTRY = r"pr-([1-9][0-9]{0,9})-([0-9a-f]{64}|[0-9a-f]{40})"
_ENTRIES = re.compile(rf"{_ENTRY}(?:-{_ENTRY})*")
_ONE = re.compile(_ENTRY)


@dataclass(frozen=True, slots=True)
class QueueRef:
    """A merge group's branch, read: the branch it merges into, the commit it is built on, and
    the pull requests it queues (in the order named, each once)."""

    ref: str  # the full ref, refs/heads/gh-readonly-queue/...
    base_ref: str  # the base branch's name (no refs/heads/)
    base_sha: str
    pulls: tuple[int, ...]


def parse_queue_ref(ref: str) -> QueueRef | None:
    """The merge group a branch name describes; ``ref`` may be a full ref or a branch name (a
    check suite's ``head_branch``). None for any other branch, or a malformed queue branch."""
    full = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
    if not full.startswith(QUEUE_PREFIX) or ref_problem(full) is not None:
        return None
    base, slash, last = full.removeprefix(QUEUE_PREFIX).rpartition("/")
    if not slash or not base or _ENTRIES.fullmatch(last) is None:
        return None
    entries = _ONE.findall(last)
    pulls = tuple(dict.fromkeys(int(number) for number, _ in entries))
    return QueueRef(full, base, entries[0][1], pulls)
