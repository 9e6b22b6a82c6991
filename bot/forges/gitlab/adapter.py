"""The GitLab adapter: a commit status, the one summary note, diff discussions, merge
requests, and what comment commands need (permissions, the bot's login, award emoji, replies,
notes read back: :mod:`.notes`), over GitLab's REST API v4 with python-gitlab sending
through the request seam (see :mod:`.api`).

Every call runs under the seam's retry policy (:meth:`bot.forges.http.seam.Seam.run`), and the
unit retried is a whole operation (list-then-write included), so a retry after a lost
response re-reads state instead of writing twice. Every failure leaves as a
:class:`bot.errors.ForgeError` naming the method, path and status and never the token.

Commit status policy. GitLab's states are pending, running, success, failed and canceled, and
posting the state a status already has is refused with 400 ("Cannot transition status via
:run from :running"). So:

* ``start_check`` posts ``running`` directly: GitLab enqueues and runs a new external status
  in one request, and ``pending`` would only add a request and a second chance of a refusal.
* ``complete_check`` posts ``success`` (SUCCESS, NEUTRAL) or ``failed`` (FAILURE,
  ACTION_REQUIRED, ERROR). GitLab has no "error": ERROR's description says the check could
  not be completed, and it fails, because a required check that could not run must block
  the merge, never pass silently.
* What this process posted is remembered per (project, sha, name), and a transition to the
  state last posted is never sent again. Another process (or a response lost after GitLab
  applied it) can still have set it: a 400 "Cannot transition ... from :<that state>" means
  the status is where we want it, and counts as done.
"""

from __future__ import annotations

import base64
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TypeVar
from urllib.parse import urlsplit

import gitlab
import gitlab.exceptions

from bot.errors import ForgeStatusError, PermanentForgeError
from bot.forges.base import (
    CHECK_NAME,
    SUMMARY_MARKER,
    CheckHandle,
    CheckOutput,
    Conclusion,
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
from bot.forges.gitlab import merge_requests as gitlab_mrs
from bot.forges.gitlab import notes as commands
from bot.forges.gitlab import reconcile as gitlab_reconcile
from bot.forges.gitlab import teams as gitlab_teams
from bot.forges.gitlab.api import (
    NOTE_LIMIT,
    PER_PAGE,
    GitLabAPI,
    by_bot,
    check_repo,
    clip,
    clip_line,
    merge_request,
    mr_ref,
    project_ref,
)
from bot.forges.gitlab.discussions import Done, sync_discussions
from bot.forges.http.seam import RateObserver
from bot.forges.keyed_locks import KeyedLocks
from bot.forges.plans import (
    PostedComment,
    SummaryAction,
    plan_summary,
    summary_body,
)
from bot.forges.responses import described_repository
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings

__all__ = ["SUMMARY_MARKER", "GitLabForge"]

T = TypeVar("T")
log = logging.getLogger("ichor.forge.gitlab")

STATES = {
    Conclusion.SUCCESS: "success",
    Conclusion.NEUTRAL: "success",
    Conclusion.FAILURE: "failed",
    Conclusion.ACTION_REQUIRED: "failed",
    Conclusion.ERROR: "failed",
}
RUNNING_DESCRIPTION = "Checking…"
REMEMBERED_STATUSES = 10_000  # (project, sha, name) → state posted; oldest forgotten first
_REFUSED_TRANSITION = re.compile(r"Cannot transition status via :\w+ from :(\w+)")


class GitLabForge:
    """:class:`bot.forges.base.ForgeAdapter` for gitlab.com or a self-managed GitLab, with a
    personal, project or group access token (``api`` scope)."""

    name = "gitlab"

    def __init__(
        self,
        *,
        url: str,
        token: str,
        sleep: Callable[[float], None] = time.sleep,
        check_name: str = CHECK_NAME,
        timeout: float = 30,
        rates: RateObserver | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PermanentForgeError("the GitLab URL is not an http(s) URL with a host")
        if not token:
            raise PermanentForgeError("no GitLab token: set ICHOR_GITLAB_TOKEN")
        self._host = parts.netloc.rpartition("@")[2].lower()
        self._web = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path.rstrip('/')}"
        self._token = token
        self._api = GitLabAPI(self._web, token, timeout=timeout, sleep=sleep, observe=rates)
        self._check_name = check_name
        self._posted: OrderedDict[tuple[str, str, str], str] = OrderedDict()
        self._locks = KeyedLocks()
        self._user: tuple[int, str] | None = None  # the token's user: id and username

    @classmethod
    def from_settings(cls, settings: Settings, *, rates: RateObserver | None = None) -> GitLabForge:
        token = (settings.gitlab_token or "").strip()
        if not token:
            raise PermanentForgeError("the GitLab token is not set: set ICHOR_GITLAB_TOKEN")
        return cls(url=settings.gitlab_url, token=token, rates=rates)

    def close(self) -> None:
        self._api.close()

    # -- the ForgeAdapter protocol ------------------------------------------------------

    def pull_head_ref(self, number: int) -> str:
        return f"refs/merge-requests/{number}/head"

    def git_credentials(self, repo: RepoRef) -> GitCredentials:
        check_repo(repo)
        # GitLab takes any non-blank user name with a personal, project or group access
        # token, and older releases want exactly "oauth2" with an OAuth token: one name for all.
        basic = base64.b64encode(f"oauth2:{self._token}".encode()).decode("ascii")
        return GitCredentials(host=self._host, header=f"Authorization: Basic {basic}")

    def start_check(
        self, repo: RepoRef, head_sha: str, *, external_id: str, resume: bool = False
    ) -> CheckHandle:
        # A commit status has no external id: the sha and the status name are its identity.
        # A job run again takes up the status an earlier run left (GitLab makes a new status
        # for a state posted after a final one), and posts no state it already has.
        if resume and (state := self._latest_state(repo, head_sha)) is not None:
            self._posted[(project_ref(repo), head_sha, self._check_name)] = state
            return CheckHandle(head_sha=head_sha)
        self._set_status(repo, head_sha, "running", RUNNING_DESCRIPTION, None)
        return CheckHandle(head_sha=head_sha)

    def _latest_state(self, repo: RepoRef, sha: str) -> str | None:
        project, name = project_ref(repo), self._check_name

        def latest(gl: gitlab.Gitlab) -> str | None:
            commit = gl.projects.get(project, lazy=True).commits.get(sha, lazy=True)
            found = commit.statuses.list(name=name, get_all=False)
            ours = [st.attributes for st in found if st.attributes.get("name") == name]
            newest = max(ours, key=lambda st: int(st.get("id") or 0), default=None)
            return None if newest is None else str(newest["status"])

        return self._api.retried(latest)

    def complete_check(self, repo: RepoRef, check: CheckHandle, output: CheckOutput) -> None:
        state = STATES[output.conclusion]
        self._set_status(repo, check.head_sha, state, headline(output), output.details_url)

    def upsert_summary_comment(self, repo: RepoRef, number: int, body: str) -> str:
        body = clip(summary_body(body), NOTE_LIMIT)
        project, iid = project_ref(repo), int(number)
        me = self._me()

        def upsert(gl: gitlab.Gitlab) -> int:
            notes = merge_request(gl, project, iid).notes
            # Oldest first: the summary is among the first notes, so paging usually stops early.
            listed = notes.list(iterator=True, per_page=PER_PAGE, sort="asc", order_by="created_at")
            plan = plan_summary(
                (
                    PostedComment(
                        int(n.attributes["id"]),
                        str(n.attributes.get("body") or ""),
                        by_bot(n.attributes, me),
                    )
                    for n in listed
                ),
                body,
            )
            if plan.existing is None:
                return int(notes.create({"body": body}).attributes["id"])
            note_id = int(plan.existing.id)
            if plan.action is SummaryAction.EDIT:
                notes.update(note_id, {"body": body})
            return note_id

        # Two jobs of this process for one MR must not both find nothing and both post.
        with self._locks.hold(("note", project, str(iid))):
            note_id = self._api.retried(upsert)
        return commands.note_url(self._mr_url(repo, iid), note_id)

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
        # base_sha is not needed: GitLab's latest version names the diff's base and start.
        project, iid = project_ref(repo), int(number)
        me = self._me()
        done = Done()  # kept across attempts

        def sync(gl: gitlab.Gitlab) -> LineCommentSync:
            mr = merge_request(gl, project, iid)
            where = f"{repo.full_name}!{iid}"
            return sync_discussions(mr, where, me, head_sha, findings, limit, done)

        with self._locks.hold(("discussions", project, str(iid))):
            return self._api.retried(sync)

    def permission(self, repo: RepoRef, user: str) -> Permission:
        project = project_ref(repo)
        level = self._api.retried(lambda gl: commands.access_level(gl, project, user))
        return commands.permission_of(level)

    def team_member(self, repo: RepoRef, team: str, login: str) -> bool:
        """:class:`bot.forges.base.TeamMembership`: ``team`` is a group path."""
        check_repo(repo)
        return self._api.retried(lambda gl: gitlab_teams.team_member(gl, team, login))

    def bot_login(self, repo: RepoRef) -> str:
        check_repo(repo)
        return (self._whoami())[1]

    def add_reaction(self, repo: RepoRef, number: int, comment_id: str, reaction: Reaction) -> None:
        project, iid, note_id = project_ref(repo), int(number), commands.parse_note_id(comment_id)

        def attempt() -> None:
            try:
                self._api.run(
                    lambda gl: commands.award(merge_request(gl, project, iid), note_id, reaction)
                )
            except ForgeStatusError as exc:
                # Given before (by a retry whose answer was lost, or another job): done.
                if exc.status not in (400, 404) or commands.ALREADY_AWARDED not in exc.message:
                    raise

        self._retrying(attempt)

    def post_comment(self, repo: RepoRef, number: int, body: str) -> str:
        project, iid = project_ref(repo), int(number)
        body = clip(commands.defuse_quick_actions(body), NOTE_LIMIT)
        me = self._me()
        attempts = 0

        def post(gl: gitlab.Gitlab) -> int:
            nonlocal attempts
            attempts += 1
            return commands.post_note(merge_request(gl, project, iid), body, me, again=attempts > 1)

        note_id = self._api.retried(post)
        return commands.note_url(self._mr_url(repo, iid), note_id)

    def list_comments(self, repo: RepoRef, number: int) -> Sequence[ForgeComment]:
        project, iid = project_ref(repo), int(number)

        def listed(gl: gitlab.Gitlab) -> list[ForgeComment]:
            return commands.list_comments(merge_request(gl, project, iid), self._mr_url(repo, iid))

        return self._api.retried(listed)

    def get_pull_request(self, repo: RepoRef, number: int) -> PullRequestRef:
        project, iid = project_ref(repo), int(number)

        def get(gl: gitlab.Gitlab) -> PullRequestRef:
            return mr_ref(gl.projects.get(project, lazy=True).mergerequests.get(iid).attributes)

        return self._api.retried(get)

    def find_pull_request(self, repo: RepoRef, head: str, base: str) -> PullRequestRef | None:
        project = project_ref(repo)
        return self._api.retried(lambda gl: gitlab_mrs.find(gl, project, head, base))

    def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str
    ) -> PullRequestRef:
        project = project_ref(repo)
        return self._retrying(
            lambda: gitlab_mrs.open_or_existing(
                self._api.run, project, head=head, base=base, title=title, body=body
            )
        )

    def list_pull_requests(
        self, repo: RepoRef, base: str, *, limit: int
    ) -> Sequence[PullRequestRef]:
        project = project_ref(repo)
        return self._api.retried(lambda gl: gitlab_mrs.listed(gl, project, base, limit))

    def update_pull_request_body(self, repo: RepoRef, number: int, body: str) -> None:
        project, iid = project_ref(repo), int(number)
        self._api.retried(lambda gl: gitlab_mrs.set_description(gl, project, iid, body))

    def repository(self, full_name: str) -> RepoRef:
        """:class:`bot.forges.base.RepositoryLookup`."""
        project = project_ref(RepoRef(ForgeKind.GITLAB, full_name))
        found = self._api.retried(lambda gl: gl.projects.get(project).attributes)
        keys = ("path_with_namespace", "http_url_to_repo", "web_url")
        return described_repository(
            found, ForgeKind.GITLAB, full_name, "GitLab GET /projects", keys=keys
        )

    # -- the reconciler (bot.forges.base.Reconciling) -----------------------------------

    def repositories(self, *, limit: int) -> Sequence[RepoRef]:
        return self._api.retried(lambda gl: gitlab_reconcile.projects(gl, limit))

    def open_pull_requests(self, repo: RepoRef, *, limit: int, tag: str | None = None) -> OpenPulls:
        project = project_ref(repo)
        return self._api.retried(
            lambda gl: gitlab_reconcile.open_merge_requests(gl, project, limit)
        )

    def head_check(self, repo: RepoRef, sha: str) -> HeadCheck:
        project, name = project_ref(repo), self._check_name
        return self._api.retried(lambda gl: gitlab_reconcile.head_check(gl, project, sha, name))

    # -- plumbing -------------------------------------------------------------------------

    def _set_status(
        self, repo: RepoRef, sha: str, state: str, description: str, target_url: str | None
    ) -> None:
        project = project_ref(repo)
        key = (project, sha, self._check_name)
        data = {"state": state, "name": self._check_name, "description": clip_line(description)}
        if target_url:
            data["target_url"] = target_url

        def post(gl: gitlab.Gitlab) -> None:
            gl.projects.get(project, lazy=True).commits.get(sha, lazy=True).statuses.create(data)

        def attempt() -> None:
            try:
                self._api.run(post)
            except ForgeStatusError as exc:
                refused = _REFUSED_TRANSITION.search(exc.message) if exc.status == 400 else None
                if refused is None or refused.group(1) != state:
                    raise
                log.info("%s %s: status %s is already %s", repo.full_name, sha, key[2], state)

        with self._locks.hold(("status", *key)):
            if self._posted.get(key) == state:
                log.debug("%s %s: %s already posted as %s", repo.full_name, sha, key[2], state)
                return
            self._retrying(attempt)
            self._posted[key] = state
            self._posted.move_to_end(key)
            while len(self._posted) > REMEMBERED_STATUSES:
                self._posted.popitem(last=False)

    def _me(self) -> int:
        return (self._whoami())[0]

    def _whoami(self) -> tuple[int, str]:
        """The token's own user (``GET /user``): its id and username, fetched once."""
        with self._locks.hold(("user",)):
            if self._user is None:

                def whoami(gl: gitlab.Gitlab) -> tuple[int, str]:
                    gl.auth()
                    assert gl.user is not None  # auth() sets it or raises
                    attributes = gl.user.attributes
                    return int(attributes["id"]), str(attributes["username"])

                self._user = self._api.retried(whoami)
            return self._user

    def _mr_url(self, repo: RepoRef, iid: int) -> str:
        return f"{self._web}/{repo.full_name}/-/merge_requests/{iid}"

    def _retrying(self, call: Callable[[], T]) -> T:
        return self._api.seam.run(call)
