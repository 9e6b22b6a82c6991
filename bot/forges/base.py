"""What the workers need from a forge, and nothing more.

Every adapter (github, gitlab, gitea, local) implements :class:`ForgeAdapter`. Calls are
synchronous, as the worker's jobs are (design.md 7): a job calls its adapter, git and Redis
directly and waits for each; no event loop runs inside a job.
Adapters raise :class:`bot.errors.TransientForgeError` for what is worth retrying and
:class:`bot.errors.PermanentForgeError` for what is not.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from bot.repos import RepoRef

AnnotationLevel = Literal["notice", "warning", "failure"]

# The name the check (run or commit status) is shown under; branch protection requires it.
CHECK_NAME = "ichor/acceptance"
# Hidden in the one summary comment the bot keeps per change request, so it finds it again.
SUMMARY_MARKER = "<!-- ichor:summary -->"


class Permission(enum.IntEnum):
    """A user's access to a repository, ordered so ``>=`` compares them."""

    NONE = 0
    READ = 1
    TRIAGE = 2
    WRITE = 3
    MAINTAIN = 4
    ADMIN = 5


class Conclusion(enum.StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    NEUTRAL = "neutral"  # e.g. no target touched
    ACTION_REQUIRED = "action_required"
    ERROR = "error"  # the check could not be completed (not a verdict)


@dataclass(frozen=True, slots=True)
class GitCredentials:
    """How git authenticates to ``host``: one ``http.extraHeader`` value (secret)."""

    host: str
    header: str  # e.g. "Authorization: Basic ..."; never logged, never on argv or disk

    def __repr__(self) -> str:
        return f"GitCredentials(host={self.host!r}, header=<redacted>)"


@dataclass(frozen=True, slots=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    level: AnnotationLevel
    title: str
    message: str


@dataclass(frozen=True, slots=True)
class CheckOutput:
    """A finished check: what the forge shows. ``annotations`` may exceed one request's worth;
    the adapter batches them."""

    conclusion: Conclusion
    title: str
    summary: str  # markdown
    text: str  # markdown, the full list
    annotations: tuple[Annotation, ...] = ()
    details_url: str | None = None
    actions: tuple[CheckAction, ...] = ()  # buttons, where the forge has them (GitHub)


ERROR_PREFIX = "Check could not be completed: "


def headline(output: CheckOutput) -> str:
    """The one line a check title or commit status shows. A check that could not run must
    never read like a verdict on the change, so it always says so — once."""
    text = output.title or output.summary
    if output.conclusion is Conclusion.ERROR and "could not be completed" not in text.lower():
        text = ERROR_PREFIX + text
    return text


@dataclass(frozen=True, slots=True)
class CheckHandle:
    """A started check (GitHub check run id; a commit status needs only the sha)."""

    head_sha: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class LineFinding:
    """A finding to show as a line comment on a change request.

    ``fingerprint`` is stable across pushes (issue code, path and object identity), so the same
    finding is never commented twice; adapters carry it in a hidden marker
    (:func:`finding_marker`) and read it back from the comments they list.
    """

    fingerprint: str
    path: str
    line: int  # in the head version of the file, 1-based, on a line the change touches
    body: str  # markdown, without the marker


@dataclass(frozen=True, slots=True)
class LineCommentSync:
    """What syncing line comments did: new comments, fixed ones resolved or marked outdated,
    ones already there, and findings left for the summary because of the per-push limit."""

    posted: int = 0
    resolved: int = 0
    unchanged: int = 0
    over_limit: int = 0


FINDING_MARKER_PREFIX = "<!-- ichor:finding "


def finding_marker(fingerprint: str) -> str:
    return f"{FINDING_MARKER_PREFIX}{fingerprint} -->"


def marker_fingerprint(body: str) -> str | None:
    """The fingerprint in a comment body written by :func:`finding_marker`, if any."""
    start = body.find(FINDING_MARKER_PREFIX)
    if start < 0:
        return None
    rest = body[start + len(FINDING_MARKER_PREFIX) :]
    fingerprint, sep, _ = rest.partition(" -->")
    return fingerprint if sep and fingerprint.isalnum() else None


@dataclass(frozen=True, slots=True)
class PullRequestRef:
    number: int
    url: str
    head_sha: str | None = None
    base_sha: str | None = None
    base_ref: str | None = None
    author: str | None = None  # the login of who opened it, when the forge says
    state: str | None = None  # "open", "closed" or "merged", when the forge says
    head_ref: str | None = None  # the branch it comes from
    from_fork: bool = False  # its head branch lives in another repository
    body: str | None = None  # its description, when the forge's answer holds it
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ForgeComment:
    """A comment on a change request, as listed back from the forge (to rebuild approvals
    from the bot's own replies). ``edited`` is true once its body changed after creation."""

    id: str
    author: str
    body: str
    author_is_bot: bool = False
    edited: bool = False
    url: str | None = None


@dataclass(frozen=True, slots=True)
class CheckAction:
    """A button on a finished check (GitHub check run ``actions``; other forges have none).
    ``identifier`` comes back in ``check_run.requested_action`` (at most 20 characters)."""

    label: str  # at most 20 characters
    description: str  # at most 40 characters
    identifier: str


Reaction = Literal["eyes", "+1", "-1", "confused"]


class ForgeAdapter(Protocol):
    name: str

    def pull_head_ref(self, number: int) -> str:
        """The ref this forge serves pull request ``number``'s head under."""
        ...

    def git_credentials(self, repo: RepoRef) -> GitCredentials | None:
        """Credentials for fetching ``repo`` over HTTPS; None when no auth is needed."""
        ...

    def start_check(
        self, repo: RepoRef, head_sha: str, *, external_id: str, resume: bool = False
    ) -> CheckHandle:
        """Show the check as running on ``head_sha``. With ``resume`` (the job ran before: a
        retry, or its worker died) reuse the check this ``external_id`` started, so a delivery
        never leaves a second check behind; a commit status is the same status again."""
        ...

    def complete_check(self, repo: RepoRef, check: CheckHandle, output: CheckOutput) -> None:
        """Finish a started check with its verdict (or ``Conclusion.ERROR`` and why)."""
        ...

    def upsert_summary_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        """Create the one summary comment on a PR/MR, or edit it in place; returns its URL."""
        ...

    def sync_line_comments(
        self,
        repo: RepoRef,
        number: int,
        *,
        head_sha: str,
        base_sha: str,
        findings: Sequence[LineFinding],
        limit: int,
    ) -> LineCommentSync:
        """Comment each finding not commented before (by fingerprint, across pushes), at most
        ``limit`` new comments; resolve, or mark outdated, the bot's comments whose finding is
        gone. Never delete a comment, and never touch comments written by people."""
        ...

    def permission(self, repo: RepoRef, user: str) -> Permission:
        """``user``'s access to ``repo``. A lookup that fails raises (a ForgeError), never
        answers NONE: a refusal must say the lookup failed, never read like a denial."""
        ...

    def bot_login(self, repo: RepoRef) -> str:
        """The login the bot comments under on ``repo``'s forge (GitHub: ``<app slug>[bot]``
        from ``GET /app``; GitLab and Gitea: ``GET /user`` of the token); fetched once."""
        ...

    def add_reaction(self, repo: RepoRef, number: int, comment_id: str, reaction: Reaction) -> None:
        """React to a comment on change request ``number`` (GitLab: award emoji on the note)."""
        ...

    def post_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        """A new comment on change request ``number`` (never an edit); returns its URL."""
        ...

    def list_comments(self, repo: RepoRef, number: int) -> Sequence[ForgeComment]:
        """Every comment on change request ``number``, oldest first (all pages)."""
        ...

    def get_pull_request(self, repo: RepoRef, number: int) -> PullRequestRef:
        """A pull request's current head and base (for a re-requested check)."""
        ...

    def find_pull_request(self, repo: RepoRef, head: str, base: str) -> PullRequestRef | None:
        """An open PR from branch ``head`` into ``base``; a failed lookup raises, never None."""
        ...

    def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str
    ) -> PullRequestRef: ...

    def list_pull_requests(
        self, repo: RepoRef, base: str, *, limit: int
    ) -> Sequence[PullRequestRef]:
        """The open pull requests into branch ``base``, newest first, at most ``limit`` (what
        onboarding tells a team the check would block)."""
        ...

    def update_pull_request_body(self, repo: RepoRef, number: int, body: str) -> None:
        """Replace pull request ``number``'s description (the onboarding pull request's, when
        its proposal changed)."""
        ...

    def close(self) -> None: ...


class HeadCheck(enum.StrEnum):
    """What a commit shows of the bot's check (:data:`CHECK_NAME`), for the reconciler."""

    FINAL = "final"  # a verdict, or the error that stands in for one
    RUNNING = "running"  # started and not finished (in progress, pending)
    NONE = "none"  # nothing


@dataclass(frozen=True, slots=True)
class OpenPulls:
    """A repository's open pull requests, the most recently active first. ``tag`` is what to
    ask with next time (GitHub's ETag); ``unchanged``: the forge said nothing changed since
    the tag asked with, and listed nothing. ``more``: more were open than listed."""

    pulls: tuple[PullRequestRef, ...] = ()
    tag: str | None = None
    unchanged: bool = False
    more: bool = False


@runtime_checkable
class Reconciling(Protocol):
    """An adapter the reconciler runs on (design.md 7): which repositories the bot's
    credentials reach, their open pull requests, and what a head shows of the check."""

    def repositories(self, *, limit: int) -> Sequence[RepoRef]:
        """The repositories the bot can post results to, at most ``limit`` (GitHub: the App's
        installations'; GitLab: the projects the token's user develops in; Gitea: the
        repositories its user may push to). Archived ones are left out."""
        ...

    def open_pull_requests(self, repo: RepoRef, *, limit: int, tag: str | None = None) -> OpenPulls:
        """At most ``limit`` open pull requests (one request); with ``tag``, a conditional
        request where the forge has them."""
        ...

    def head_check(self, repo: RepoRef, sha: str) -> HeadCheck:
        """What commit ``sha`` shows of the check."""
        ...


@runtime_checkable
class RepositoryLookup(Protocol):
    """An adapter that can describe a repository named only by its full name (the change API
    names no clone URL, default branch or installation)."""

    def repository(self, full_name: str) -> RepoRef:
        """The repository as the forge describes it: clone URL, default branch, and on GitHub
        the App installation acting on it. Not found, or out of the bot's reach: a
        PermanentForgeError."""
        ...


@runtime_checkable
class TeamMembership(Protocol):
    """An adapter that can say whether a login belongs to a team (``org/team`` on GitHub and
    Gitea, a group path on GitLab), for a target's ``approvers`` (design.md 5.1). A team that
    does not exist, or that the bot may not see, has no members: never an error that admits."""

    def team_member(self, repo: RepoRef, team: str, login: str) -> bool: ...
