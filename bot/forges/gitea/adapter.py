"""The Gitea (and Forgejo) adapter: commit statuses, the one summary comment, review line
comments, comment commands, permissions and pull requests over the REST API, with one access
token.

The token needs the scopes ``write:repository`` (statuses, pulls, reviews), ``write:issue``
(comments, reactions) and ``read:user`` (``GET /user``: the bot's own comments are told apart by
author). Reading another user's permission needs a token whose user is an admin of the
repository: Gitea answers 403 otherwise, which is an error, never a denial.

Checks are commit statuses with the context ``ichor/acceptance``. Gitea's states: ``pending``
while running; SUCCESS and NEUTRAL are ``success``, FAILURE and ACTION_REQUIRED ``failure``,
ERROR ``error`` (the check could not be completed, which blocks a required check like a
failure, yet reads differently). Line comments are :mod:`bot.forges.gitea.reviews`.

Comment commands: the bot's login is the token's (``GET /user``, asked once per adapter).
Gitea marks no account as a bot in a comment, so the only comments taken for a bot's are the
bot's own; a comment is edited when its ``updated_at`` differs from its ``created_at``. The
conversation and pull requests are said as GitHub says them (:mod:`bot.forges.rest`, in
Gitea's dialect).

Every call runs under the seam's retry policy (:meth:`bot.forges.http.seam.Seam.run`), and the
unit retried is a whole operation (list, then write), so a retry after a lost response
re-reads instead of writing twice.
"""

from __future__ import annotations

import base64
import itertools
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from bot.errors import ForgeStatusError, PermanentForgeError
from bot.forges.base import (
    CHECK_NAME,
    SUMMARY_MARKER,
    CheckHandle,
    CheckOutput,
    ForgeComment,
    GitCredentials,
    HeadCheck,
    LineCommentSync,
    LineFinding,
    OpenPulls,
    Permission,
    PullRequestRef,
    Reaction,
    headline,
)
from bot.forges.gitea import pulls as gitea_pulls
from bot.forges.gitea import reconcile as gitea_reconcile
from bot.forges.gitea import teams as gitea_teams
from bot.forges.gitea.http import (
    DIALECT,
    NEEDS_ADMIN,
    PENDING_DESCRIPTION,
    PERMISSIONS,
    STATES,
    GiteaHTTP,
    newest_status,
    repo_path,
    same_user,
    status_line,
)
from bot.forges.gitea.reviews import LineComments
from bot.forges.http.seam import RateObserver
from bot.forges.keyed_locks import KeyedLocks
from bot.forges.responses import described_repository
from bot.forges.rest import conversation
from bot.forges.rest import pulls as rest_pulls
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings

T = TypeVar("T")
log = logging.getLogger("ichor.forge.gitea")

__all__ = ["SUMMARY_MARKER", "GiteaForge"]


class GiteaForge:
    """:class:`bot.forges.base.ForgeAdapter` for Gitea or Forgejo with an access token."""

    name = "gitea"

    def __init__(
        self,
        *,
        url: str,
        token: str,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        check_name: str = CHECK_NAME,
        rates: RateObserver | None = None,
    ) -> None:
        self._http = GiteaHTTP(url, token, client, sleep=sleep, observe=rates)
        self._check_name = check_name
        self._me: dict[str, Any] | None = None
        self._me_lock = threading.Lock()
        self._locks = KeyedLocks()
        self._lines = LineComments(self._http, check_name)
        # (repository, sha) -> (state, description) an earlier run of a resumed job posted.
        self._posted_before: dict[tuple[str, str], tuple[str, str]] = {}

    @classmethod
    def from_settings(cls, settings: Settings, *, rates: RateObserver | None = None) -> GiteaForge:
        url, token = (settings.gitea_url or "").strip(), (settings.gitea_token or "").strip()
        if not url:
            raise PermanentForgeError("the Gitea URL is not set: set ICHOR_GITEA_URL")
        if not token:
            raise PermanentForgeError("the Gitea token is not set: set ICHOR_GITEA_TOKEN")
        return cls(url=url, token=token, rates=rates)

    def close(self) -> None:
        self._http.close()

    # -- the ForgeAdapter protocol ------------------------------------------------------

    def pull_head_ref(self, number: int) -> str:
        return f"refs/pull/{number}/head"

    def git_credentials(self, repo: RepoRef) -> GitCredentials:
        repo_path(repo, "")
        # Gitea's and Forgejo's Basic method take the username as the token when the password
        # is empty or "x-oauth-basic", before (and regardless of) password logins, so this
        # works with ENABLE_BASIC_AUTHENTICATION off and never counts as a failed login.
        raw = f"{self._http.token}:x-oauth-basic".encode()
        basic = base64.b64encode(raw).decode("ascii")
        return GitCredentials(host=self._http.host, header=f"Authorization: Basic {basic}")

    def start_check(
        self, repo: RepoRef, head_sha: str, *, external_id: str, resume: bool = False
    ) -> CheckHandle:
        # A commit status has no external id: the context and the sha name it. A job run
        # again leaves what an earlier run posted until its own verdict, and does not post
        # that verdict again when it is the same.
        if resume and (before := self._our_latest(repo, head_sha)) is not None:
            self._posted_before[(repo.full_name, head_sha)] = before
            return CheckHandle(head_sha=head_sha)
        self._status(repo, head_sha, "pending", PENDING_DESCRIPTION, None)
        return CheckHandle(head_sha=head_sha)

    def complete_check(self, repo: RepoRef, check: CheckHandle, output: CheckOutput) -> None:
        state, description = STATES[output.conclusion], headline(output)
        before = self._posted_before.pop((repo.full_name, check.head_sha), None)
        if before == (state, status_line(description)):
            return
        self._status(repo, check.head_sha, state, description, output.details_url)

    def upsert_summary_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        base = repo_path(repo, "")
        # Two jobs of this process for one PR must not both find nothing and both post.
        with self._locks.hold((repo.full_name, int(number))):
            return self._retrying(
                lambda: conversation.upsert_summary(
                    self._http.call, base, number, body, dialect=DIALECT, ours=self._ours()
                )
            )

    def sync_line_comments(
        self,
        repo: RepoRef,
        number: int,
        *,
        head_sha: str,
        base_sha: str,  # unused: Gitea places a comment by its line in the head version
        findings: Sequence[LineFinding],
        limit: int,
    ) -> LineCommentSync:
        attempt = self._lines.sync(
            repo, number, head_sha=head_sha, findings=findings, limit=limit, me=self._whoami
        )
        with self._locks.hold((repo.full_name, int(number))):
            return self._retrying(attempt)

    def permission(self, repo: RepoRef, user: str) -> Permission:
        path = repo_path(repo, f"/collaborators/{quote(user, safe='')}/permission")
        try:
            body = self._retrying(lambda: self._http.get(path))
        except ForgeStatusError as exc:
            if exc.status == 404:  # no such user
                return Permission.NONE
            if exc.status != 403:
                raise
            # Gitea answers only admins (and users asking about themselves) here.
            hint = NEEDS_ADMIN.format(repo=repo.full_name)
            log.error("cannot read %s's permission on %s: %s", user, repo.full_name, hint)
            raise PermanentForgeError(f"{exc} ({hint})") from exc
        if not isinstance(body, dict):
            raise PermanentForgeError(f"Gitea GET {path}: the response is not an object")
        return PERMISSIONS.get(str(body.get("permission")), Permission.NONE)

    def team_member(self, repo: RepoRef, team: str, login: str) -> bool:
        """:class:`bot.forges.base.TeamMembership`: ``team`` is ``org/team``."""
        repo_path(repo, "")  # a Gitea repository, or refused
        return self._retrying(lambda: gitea_teams.team_member(self._http, team, login))

    def bot_login(self, repo: RepoRef) -> str:
        repo_path(repo, "")  # a repository of another forge is refused before any request
        login = (self._retrying(self._whoami)).get("login")
        if not login:
            raise PermanentForgeError("Gitea GET /user: the response names no login")
        return str(login)

    def add_reaction(self, repo: RepoRef, number: int, comment_id: str, reaction: Reaction) -> None:
        base = repo_path(repo, "")
        self._retrying(
            lambda: conversation.react(self._http.call, base, comment_id, reaction, DIALECT)
        )

    def post_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        base, attempts = repo_path(repo, ""), itertools.count()

        def post() -> str | None:
            # Only a retry reads the listing, and so needs to know whose comments are ours.
            again = next(attempts) > 0
            ours = self._ours() if again else (lambda comment: False)
            return conversation.post(
                self._http.call, base, number, body, dialect=DIALECT, ours=ours, again=again
            )

        return self._retrying(post)

    def list_comments(self, repo: RepoRef, number: int) -> Sequence[ForgeComment]:
        base = repo_path(repo, "")
        return self._retrying(
            lambda: conversation.listing(
                self._http.call, base, number, dialect=DIALECT, bot=self._ours()
            )
        )

    def get_pull_request(self, repo: RepoRef, number: int) -> PullRequestRef:
        base = repo_path(repo, "")
        return self._retrying(lambda: rest_pulls.get(self._http.call, base, number, DIALECT))

    def find_pull_request(self, repo: RepoRef, head: str, base: str) -> PullRequestRef | None:
        return self._retrying(lambda: gitea_pulls.find(self._http, repo, head, base))

    def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str
    ) -> PullRequestRef:
        path = repo_path(repo, "")
        return self._retrying(
            lambda: rest_pulls.open_(
                self._http.call,
                path,
                head=head,
                base=base,
                title=title,
                body=body,
                dialect=DIALECT,
                find=lambda: gitea_pulls.find(self._http, repo, head, base),
            )
        )

    def list_pull_requests(
        self, repo: RepoRef, base: str, *, limit: int
    ) -> Sequence[PullRequestRef]:
        return self._retrying(lambda: gitea_pulls.listed(self._http, repo, base, limit))

    def update_pull_request_body(self, repo: RepoRef, number: int, body: str) -> None:
        base = repo_path(repo, "")
        self._retrying(lambda: rest_pulls.update_body(self._http.call, base, number, body, DIALECT))

    def repository(self, full_name: str) -> RepoRef:
        """:class:`bot.forges.base.RepositoryLookup`."""
        path = repo_path(RepoRef(ForgeKind.GITEA, full_name), "")
        found = self._retrying(lambda: self._http.get(path))
        return described_repository(found, ForgeKind.GITEA, full_name, f"Gitea GET {path}")

    # -- plumbing -------------------------------------------------------------------------

    def _status(
        self, repo: RepoRef, sha: str, state: str, description: str, url: str | None
    ) -> None:
        path = repo_path(repo, f"/statuses/{quote(sha, safe='')}")
        data = {
            "state": state,
            "context": self._check_name,
            "description": status_line(description),
        }
        if url:
            data["target_url"] = url
        self._retrying(lambda: self._http.send("POST", path, data))

    # -- the reconciler (bot.forges.base.Reconciling) -----------------------------------

    def repositories(self, *, limit: int) -> Sequence[RepoRef]:
        return self._retrying(lambda: gitea_reconcile.repositories(self._http, limit))

    def open_pull_requests(self, repo: RepoRef, *, limit: int, tag: str | None = None) -> OpenPulls:
        return self._retrying(lambda: gitea_reconcile.open_pulls(self._http, repo, limit))

    def head_check(self, repo: RepoRef, sha: str) -> HeadCheck:
        context = self._check_name
        return self._retrying(lambda: gitea_reconcile.head_check(self._http, repo, sha, context))

    def _our_latest(self, repo: RepoRef, sha: str) -> tuple[str, str] | None:
        """The newest status of our context on ``sha``: (state, description)."""
        path = repo_path(repo, f"/statuses/{quote(sha, safe='')}")
        listed = self._retrying(lambda: self._http.get(path))
        return newest_status(listed, self._check_name)

    def _whoami(self) -> dict[str, Any]:
        """The token's user (``GET /user``), asked once per adapter: concurrent jobs wait for
        the one answer."""
        with self._me_lock:
            if self._me is None:
                try:
                    me = self._http.get("/user")
                except ForgeStatusError as exc:
                    if exc.status != 403:
                        raise
                    # Comments are told apart by author: without it, every summary would be new.
                    text = f"{exc} (the token needs the read:user scope)"
                    raise PermanentForgeError(text) from exc
                if not isinstance(me, dict) or (me.get("id") is None and not me.get("login")):
                    raise PermanentForgeError("Gitea GET /user: the response names no user")
                self._me = me
            return self._me

    def _ours(self) -> Callable[[Mapping[str, Any]], bool]:
        """Whether the token's user wrote a comment: Gitea marks no account as a bot. Asked
        before any listing, so a token that cannot say who it is fails before a post."""
        me = self._whoami()
        return lambda comment: same_user(comment.get("user"), me)

    def _retrying(self, call: Callable[[], T]) -> T:
        return self._http.seam.run(call)
