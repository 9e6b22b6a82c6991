"""The GitHub adapter: check runs, comments and reactions, line comments, permissions and PRs.

Requests go through :class:`bot.forges.github.http.GitHubHTTP` and the request seam: every
failure leaves it as a :class:`bot.errors.ForgeError` whose text names the method, path and
status and never a credential. Every call runs under the seam's retry policy
(:meth:`bot.forges.http.seam.Seam.run`), and the unit retried is a whole operation
(find-then-write included), so a retry after a lost response re-reads state instead of
writing twice.

Request and response shaping lives in :mod:`bot.forges.github.payloads`, line comments (one
review per push) in :mod:`bot.forges.github.reviews`, finding and listing pull requests in
:mod:`bot.forges.github.pulls`. What GitHub says as Gitea does (the conversation: summary,
replies, the listing, reactions; reading, opening and describing a pull request) is
:mod:`bot.forges.rest`, in GitHub's dialect (:data:`bot.forges.github.payloads.DIALECT`).

Conclusion mapping: GitHub has no "error" conclusion. ``Conclusion.ERROR`` (the check could not
be completed) is sent as ``failure`` with a title saying so: a required check that could not
run must block the merge, never pass silently as ``neutral`` or ``skipped`` would.
"""

from __future__ import annotations

import base64
import datetime
import itertools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

import httpx

from bot.errors import ForgeStatusError, PermanentForgeError, TransientForgeError
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
from bot.forges.buckets import APP_BUCKET, installation_bucket
from bot.forges.github import deliveries as github_deliveries
from bot.forges.github import pulls as github_pulls
from bot.forges.github import reconcile as github_reconcile
from bot.forges.github import reviews as github_reviews
from bot.forges.github import teams as github_teams
from bot.forges.github.app_calls import AppCalls
from bot.forges.github.auth import InstallationTokens, load_private_key
from bot.forges.github.http import POLICY, GitHubHTTP
from bot.forges.github.payloads import (
    ANNOTATIONS_PER_REQUEST,
    CONCLUSIONS,
    DIALECT,
    ROLES,
    annotation,
    app_login,
    by_the_app,
    check_actions,
    clip,
    clip_title,
    field,
    host_of,
    installation_of,
    repo_path,
    started_run,
    typed_bot,
)
from bot.forges.github.redelivery import HookDelivery
from bot.forges.http.seam import RateObserver, Seam
from bot.forges.keyed_locks import KeyedLocks
from bot.forges.responses import described_repository
from bot.forges.rest import conversation
from bot.forges.rest import pulls as rest_pulls
from bot.forges.rest.send import Send
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings

__all__ = ["SUMMARY_MARKER", "GitHubForge"]

T = TypeVar("T")
log = logging.getLogger("ichor.forge.github")


class GitHubForge:
    """:class:`bot.forges.base.ForgeAdapter` for a GitHub App on github.com or GitHub Enterprise."""

    name = "github"

    def __init__(
        self,
        *,
        app_id: str,
        private_key_pem: str,
        api_url: str,
        web_url: str,
        client: httpx.Client | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        check_name: str = CHECK_NAME,
        requester: str = "ichor-bot",
        rates: RateObserver | None = None,
    ) -> None:
        host_of(api_url, "the GitHub API URL")
        self._web_host = host_of(web_url, "the GitHub web URL")
        self._seam = Seam(POLICY, client, clock=clock, sleep=sleep, observe=rates)
        self._http = GitHubHTTP(self._seam, api_url=api_url, requester=requester)
        self._clock = clock
        self._check_name = check_name
        self._tokens = InstallationTokens(
            app_id=app_id, private_key_pem=private_key_pem, request=self._token, clock=clock
        )
        self._locks = KeyedLocks()
        self._bot_login: str | None = None  # one app, one login: asked for once
        self._app_calls = AppCalls(self._http, self._tokens, self._seam)

    @classmethod
    def from_settings(cls, settings: Settings, *, rates: RateObserver | None = None) -> GitHubForge:
        app_id, key = (settings.github_app_id or "").strip(), settings.github_private_key or ""
        if not app_id:
            raise PermanentForgeError("the GitHub App id is not set: set ICHOR_GITHUB_APP_ID")
        if not key.strip():
            raise PermanentForgeError(
                "the GitHub App private key is not set: set ICHOR_GITHUB_PRIVATE_KEY "
                "(PEM text or the path of a PEM file)"
            )
        return cls(
            app_id=app_id,
            private_key_pem=load_private_key(key),
            api_url=settings.github_api_url,
            web_url=settings.github_url,
            rates=rates,
        )

    def close(self) -> None:
        self._seam.close()

    # -- the ForgeAdapter protocol ------------------------------------------------------

    def pull_head_ref(self, number: int) -> str:
        return f"refs/pull/{number}/head"

    def git_credentials(self, repo: RepoRef) -> GitCredentials:
        installation = installation_of(repo)
        token = self._retrying(lambda: self._tokens.get(installation))
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode("ascii")
        return GitCredentials(host=self._web_host, header=f"Authorization: Basic {basic}")

    def start_check(
        self, repo: RepoRef, head_sha: str, *, external_id: str, resume: bool = False
    ) -> CheckHandle:
        if resume:  # an earlier run of this job may have created the check run already
            query = urlencode({"check_name": self._check_name, "filter": "all", "per_page": 100})
            listed = repo_path(repo, f"/commits/{quote(head_sha, safe='')}/check-runs")
            found = self._call(repo, lambda send: send("GET", f"{listed}?{query}"))
            run_id = started_run(found, external_id, f"GET {listed}")
            if run_id is not None:
                return CheckHandle(head_sha=head_sha, id=run_id)
        path = repo_path(repo, "/check-runs")
        data = {"name": self._check_name, "head_sha": head_sha, "status": "in_progress"}
        data |= {"external_id": external_id, "started_at": self._timestamp()}
        body = self._call(repo, lambda send: send("POST", path, data))
        return CheckHandle(head_sha=head_sha, id=str(field(body, "id", f"POST {path}")))

    def complete_check(self, repo: RepoRef, check: CheckHandle, output: CheckOutput) -> None:
        if check.id is None:
            raise PermanentForgeError(f"{repo.full_name}: a GitHub check needs a check run id")
        path = repo_path(repo, f"/check-runs/{quote(check.id, safe='')}")
        title = headline(output)
        shown = {
            "title": clip_title(title),
            "summary": clip(output.summary or title),
            "text": clip(output.text),
        }
        notes = [annotation(a) for a in output.annotations]
        batches = [
            notes[i : i + ANNOTATIONS_PER_REQUEST]
            for i in range(0, len(notes), ANNOTATIONS_PER_REQUEST)
        ] or [[]]
        first: dict[str, Any] = {
            "status": "completed",
            "conclusion": CONCLUSIONS[output.conclusion],
            "completed_at": self._timestamp(),
            "output": {**shown, "annotations": batches[0]},
        }
        if output.details_url:
            first["details_url"] = output.details_url
        if output.actions:
            first["actions"] = check_actions(output.actions)
        # The verdict goes first: it is what branch protection reads. The annotations after it
        # repeat what ``text`` already lists in full, so losing some is logged, not raised;
        # raising would invite the caller to replace a correct verdict with an error.
        self._patch(repo, path, first)
        for sent, batch in enumerate(batches[1:], start=1):
            # Each update replaces title, summary and text, so they are repeated with the
            # annotations, which are appended.
            try:
                self._patch(repo, path, {"output": {**shown, "annotations": batch}})
            except (PermanentForgeError, TransientForgeError) as exc:
                missing = len(notes) - sent * ANNOTATIONS_PER_REQUEST
                log.warning("check run completed; %d annotations not added: %s", missing, exc)
                return

    def upsert_summary_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        base = repo_path(repo, "")
        # Two jobs of this process for one PR must not both find nothing and both post.
        with self._locks.hold((repo.full_name, number, "summary")):
            return self._call(
                repo,
                lambda send: conversation.upsert_summary(
                    send, base, number, body, dialect=DIALECT, ours=by_the_app
                ),
            )

    def post_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        base, attempts = repo_path(repo, ""), itertools.count()
        return self._call(
            repo,
            lambda send: conversation.post(
                send, base, number, body, dialect=DIALECT, ours=by_the_app, again=next(attempts) > 0
            ),
        )

    def list_comments(self, repo: RepoRef, number: int) -> Sequence[ForgeComment]:
        base = repo_path(repo, "")
        return self._call(
            repo,
            lambda send: conversation.listing(send, base, number, dialect=DIALECT, bot=typed_bot),
        )

    def add_reaction(self, repo: RepoRef, number: int, comment_id: str, reaction: Reaction) -> None:
        base = repo_path(repo, "")
        self._call(repo, lambda send: conversation.react(send, base, comment_id, reaction, DIALECT))

    def bot_login(self, repo: RepoRef) -> str:
        with self._locks.hold("bot_login"):  # concurrent jobs share the one request
            if self._bot_login is None:
                app = self._retrying(lambda: self._as_app("GET", "/app"))
                self._bot_login = app_login(app)
        return self._bot_login

    def sync_line_comments(
        self,
        repo: RepoRef,
        number: int,
        *,
        head_sha: str,
        base_sha: str,  # unused: GitHub places a comment by its head line and side alone
        findings: Sequence[LineFinding],
        limit: int,
    ) -> LineCommentSync:
        base = repo_path(repo, "")

        def sync(send: Send) -> LineCommentSync:
            return github_reviews.sync(
                send,
                base,
                number,
                head_sha=head_sha,
                findings=findings,
                limit=limit,
                label=self._check_name,
            )

        # The whole sync is the unit retried: a retry lists again and never posts twice.
        with self._locks.hold((repo.full_name, number, "lines")):
            return self._call(repo, sync)

    def permission(self, repo: RepoRef, user: str) -> Permission:
        path = repo_path(repo, f"/collaborators/{quote(user, safe='')}/permission")
        try:
            body = self._call(repo, lambda send: send("GET", path))
        except ForgeStatusError as exc:
            if exc.status == 404:  # not a collaborator, or no such user
                return Permission.NONE
            raise
        if not isinstance(body, dict):
            raise PermanentForgeError(f"GitHub GET {path}: the response is not an object")
        role = ROLES.get(str(body.get("role_name")))
        return role if role is not None else ROLES.get(str(body.get("permission")), Permission.NONE)

    def team_member(self, repo: RepoRef, team: str, login: str) -> bool:
        """:class:`bot.forges.base.TeamMembership`, with the repository's installation."""
        return self._call(repo, lambda send: github_teams.team_member(send, team, login))

    def get_pull_request(self, repo: RepoRef, number: int) -> PullRequestRef:
        base = repo_path(repo, "")
        return self._call(repo, lambda send: rest_pulls.get(send, base, number, DIALECT))

    def find_pull_request(self, repo: RepoRef, head: str, base: str) -> PullRequestRef | None:
        return self._call(repo, lambda send: github_pulls.find(send, repo, head, base))

    def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str
    ) -> PullRequestRef:
        path = repo_path(repo, "")
        return self._call(
            repo,
            lambda send: rest_pulls.open_(
                send,
                path,
                head=head,
                base=base,
                title=title,
                body=body,
                dialect=DIALECT,
                find=lambda: github_pulls.find(send, repo, head, base),
            ),
        )

    def list_pull_requests(
        self, repo: RepoRef, base: str, *, limit: int
    ) -> Sequence[PullRequestRef]:
        listing = github_pulls.listed
        return self._call(repo, lambda send: listing(send, repo, base, limit))

    def update_pull_request_body(self, repo: RepoRef, number: int, body: str) -> None:
        base = repo_path(repo, "")
        self._call(repo, lambda send: rest_pulls.update_body(send, base, number, body, DIALECT))

    def repository(self, full_name: str) -> RepoRef:
        """:class:`bot.forges.base.RepositoryLookup`: the installation (asked as the app),
        then the repository (as that installation)."""
        path = repo_path(RepoRef(ForgeKind.GITHUB, full_name), "")
        installed = self._retrying(lambda: self._as_app("GET", f"{path}/installation"))
        repo = RepoRef(
            ForgeKind.GITHUB, full_name, installation_id=int(field(installed, "id", path))
        )
        found = self._call(repo, lambda send: send("GET", path))
        where = f"GitHub GET {path}"
        return described_repository(
            found, repo.forge, full_name, where, installation_id=repo.installation_id
        )

    # -- the reconciler (bot.forges.base.Reconciling) and redeliveries (design.md 7) -----

    def repositories(self, *, limit: int) -> Sequence[RepoRef]:
        return github_reconcile.repositories(self._app_calls, limit)

    def open_pull_requests(self, repo: RepoRef, *, limit: int, tag: str | None = None) -> OpenPulls:
        return github_reconcile.open_pulls(self._app_calls, repo, limit, tag)

    def head_check(self, repo: RepoRef, sha: str) -> HeadCheck:
        return github_reconcile.head_check(self._app_calls, repo, sha, self._check_name)

    def recent_deliveries(self, *, since: float, max_pages: int) -> Sequence[HookDelivery]:
        return github_deliveries.recent(self._app_calls, since=since, max_pages=max_pages)

    def redeliver(self, delivery_id: int) -> None:
        github_deliveries.redeliver(self._app_calls, delivery_id)

    # -- plumbing -------------------------------------------------------------------------

    def _patch(self, repo: RepoRef, path: str, data: Mapping[str, Any]) -> None:
        self._call(repo, lambda send: send("PATCH", path, data))

    def _call(self, repo: RepoRef, operation: Callable[[Send], T]) -> T:
        """``operation(send)``, ``send`` being one request with the installation's token,
        retried whole; a refused token is replaced once."""
        installation = installation_of(repo)

        def with_token(token: str) -> T:
            def send(method: str, path: str, data: Any = None, *, pages: bool = False) -> Any:
                bucket = installation_bucket(installation)
                return self._http.send(method, path, token, data, pages=pages, bucket=bucket)

            return operation(send)

        def attempt() -> T:
            token = self._tokens.get(installation)
            try:
                return with_token(token)
            except ForgeStatusError as exc:
                if exc.status != 401:
                    raise
                # Revoked, or the installation's tokens were reset: one fresh token, one try.
                self._tokens.invalidate(installation, token)
                return with_token(self._tokens.get(installation))

        return self._retrying(attempt)

    def _retrying(self, call: Callable[[], T]) -> T:
        return self._seam.run(call)

    def _token(self, path: str, app_jwt: str) -> Any:
        return self._as_app("POST", path, {}, app_jwt=app_jwt)

    def _as_app(
        self, method: str, path: str, data: Any = None, *, app_jwt: str | None = None
    ) -> Any:
        """A request the app makes as itself, with its JWT (a fresh one unless given)."""
        bearer = app_jwt or self._tokens.signed_jwt()
        try:
            return self._http.send(method, path, bearer, data, bucket=APP_BUCKET)
        except ForgeStatusError as exc:
            if exc.status != 401:
                raise
            raise PermanentForgeError(
                f"{exc} (the app's JWT was refused: check ICHOR_GITHUB_APP_ID, "
                "ICHOR_GITHUB_PRIVATE_KEY and this machine's clock)"
            ) from exc

    def _timestamp(self) -> str:
        moment = datetime.datetime.fromtimestamp(self._clock(), datetime.UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
