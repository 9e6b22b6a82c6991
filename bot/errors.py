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


class ForgeError(IchorError):
    """A forge API or git transport call failed; the text never holds a credential."""


class TransientForgeError(ForgeError):
    """Worth retrying: 5xx, a timeout, a rate limit. ``retry_after`` is seconds, when known."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class PermanentForgeError(ForgeError):
    """Retrying will not help: 4xx other than rate limits, a refused URL, bad credentials."""


class GitStoreError(IchorError):
    """The local mirror could not be created or fetched into."""


class ForgeStatusError(PermanentForgeError):
    """A forge answered an HTTP error status that retrying will not change (a 4xx other than a
    rate limit, or a redirect). ``status`` lets callers treat 401, 404, 409 or 422 as the
    answers they are; ``message`` is the forge's own explanation, redacted and clipped."""

    def __init__(self, text: str, *, status: int, message: str = "") -> None:
        super().__init__(text)
        self.status = status
        self.message = message
