"""``empty-target``: a configured target path that holds no entry, said plainly. Pure.

Git stores no directory, so at a revision a path with no entry does not exist: most often a
typo, so the nearest directory at the same depth is named when one is close. Only a directory
on disk can exist and be empty (a target not yet bootstrapped); the snapshot records those.
"""

from __future__ import annotations

import difflib

from bot.gate.codes import IssueCode
from bot.gate.report import Issue
from bot.git.snapshot import Snapshot
from bot.paths import display_path

# How alike a directory must be to be suggested (difflib's ratio): 'clusters/prodd' and
# 'clusters/prod' are, 'clusters/prod' and 'clusters/dev' are not.
_CLOSE = 0.8


def empty_target_issue(snapshot: Snapshot, path: str) -> Issue:
    shown = display_path(path) if path else "."
    if path in snapshot.empty_directories:
        message = f"{shown} is an empty directory; nothing to check until files arrive"
        return Issue.of(IssueCode.EMPTY_TARGET, path, message)
    where = " at this revision" if snapshot.revision is not None else ""
    near = _nearest_directory(snapshot, path) if path else None
    if near is not None:
        hint = f"did you mean '{display_path(near)}'?"
    else:
        hint = "is the target's path right, or is the target not bootstrapped yet?"
    return Issue.of(IssueCode.EMPTY_TARGET, path, f"{shown} does not exist{where}; {hint}")


def _nearest_directory(snapshot: Snapshot, path: str) -> str | None:
    """The directory at ``path``'s depth most like it, when it is close; one pass over the
    entries, done only for a target that holds nothing."""
    depth = path.count("/") + 1
    directories: set[str] = set()
    for entry in snapshot:
        parts = entry.path.split("/", depth)
        if len(parts) > depth:  # the entry lies below a directory of that depth
            directories.add("/".join(parts[:depth]))
    close = difflib.get_close_matches(path, sorted(directories), n=1, cutoff=_CLOSE)
    return close[0] if close else None
