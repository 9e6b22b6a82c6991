"""The one exception root. A refused target is a result, never an exception."""

from __future__ import annotations


class IchorError(Exception):
    """Base of every error Ichor Bot raises on purpose; its text is one line for a person."""


class UsageError(IchorError):
    """The command line asks for something that cannot be done (exit 2)."""


class SnapshotError(IchorError):
    """A tree could not be read: not a repository, unknown revision, unreadable entry."""


class NotARepositoryError(SnapshotError):
    pass


class RevisionNotFoundError(SnapshotError):
    pass


class UnreadableEntryError(SnapshotError):
    pass
