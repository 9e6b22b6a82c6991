"""python-gitlab, used synchronously as it is made to be, over the request seam; and the
GitLab payloads the adapter (:mod:`.adapter`) reads and writes.

python-gitlab builds the URLs, pages the listings and reads the objects; its requests session
is a :class:`bot.forges.http.session.SeamSession`, so every request is sent, timed out,
accounted and its failure mapped (with ``Retry-After`` or ``RateLimit-Reset`` read from the
answer) by the same seam as GitHub's and Gitea's, under :data:`POLICY`. A failure leaves the
seam as a ForgeError before python-gitlab sees a status, so its own retries never start;
retrying is the seam's (:meth:`GitLabAPI.retried`), around a whole operation.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import gitlab
import gitlab.exceptions
import httpx

from bot.errors import PermanentForgeError, TransientForgeError
from bot.forges import clipping
from bot.forges.base import PullRequestRef
from bot.forges.http.redaction import redact, secrets_list, token_forms
from bot.forges.http.seam import Policy, RateObserver, Seam
from bot.forges.http.session import SeamSession
from bot.repos import RepoRef

T = TypeVar("T")
log = logging.getLogger("ichor.forge.gitlab")

USER_AGENT = "ichor-bot"
DESCRIPTION_LIMIT = 255  # characters, a commit status description
NOTE_LIMIT = 1_000_000  # characters, a note or discussion body
PER_PAGE = 100  # items per page of a listing: GitLab's most
# A merge request's state as the bot names it; "locked" is GitLab's while a merge runs.
MR_STATES = {"opened": "open", "locked": "open", "closed": "closed", "merged": "merged"}
TRUNCATED = "\n\n… (truncated to GitLab's size limit; the full result is in the job's report)"


def _hint(response: httpx.Response) -> str:
    return (
        " (the token was refused: check ICHOR_GITLAB_TOKEN)" if response.status_code == 401 else ""
    )


POLICY = Policy("GitLab", hint=_hint)


class GitLabAPI:
    """One python-gitlab client for one GitLab and token, sending through its own seam."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        observe: RateObserver | None = None,
    ) -> None:
        self._secrets = secrets_list(token_forms(token))
        self.seam = Seam(POLICY, timeout=timeout, clock=clock, sleep=sleep, observe=observe)
        self._session = SeamSession(self.seam, self._secrets)
        self.gl = gitlab.Gitlab(
            url,
            private_token=token,
            user_agent=USER_AGENT,
            retry_transient_errors=False,
            # Next-page links are built from GitLab's external_url, which can name another
            # scheme or host than ours (a proxy, a misconfiguration): keep paging on ours.
            keep_base_url=True,
            session=self._session,
        )

    def close(self) -> None:
        self._session.close()
        self.seam.close()

    def retried(self, operation: Callable[[gitlab.Gitlab], T]) -> T:
        """:meth:`run`, retried whole by the seam's policy."""
        return self.seam.run(lambda: self.run(operation))

    def run(self, operation: Callable[[gitlab.Gitlab], T]) -> T:
        """``operation(client)`` once; any failure leaves as a ForgeError."""
        try:
            return operation(self.gl)
        except gitlab.exceptions.GitlabParsingError:
            raise self._error(TransientForgeError, "unreadable response") from None
        except gitlab.exceptions.GitlabError as exc:  # not an answer's status: the seam's
            raise self._error(PermanentForgeError, str(exc.error_message)) from None

    def _error(
        self, kind: type[TransientForgeError] | type[PermanentForgeError], said: str
    ) -> TransientForgeError | PermanentForgeError:
        last = self._session.last_request()
        where = "GitLab" if last is None else f"GitLab {last[0]} {urlsplit(last[1]).path}"
        error = kind(f"{where}: {said}")
        redact(error, self._secrets)
        return error


# -- GitLab payloads ----------------------------------------------------------------------


def merge_request(gl: gitlab.Gitlab, project: str, iid: int) -> Any:
    """A lazy merge request (no request): its notes, discussions and versions managers."""
    return gl.projects.get(project, lazy=True).mergerequests.get(iid, lazy=True)


def _author_id(note: dict[str, Any]) -> Any:
    author = note.get("author")
    return author.get("id") if isinstance(author, dict) else None


def by_bot(note: dict[str, Any], me: int) -> bool:
    """Written by the token's user and not by GitLab itself: a person quoting a marker must
    not have their note rewritten."""
    return not note.get("system") and _author_id(note) == me


def user_id(gl: gitlab.Gitlab, username: str) -> int | None:
    """The id of the account named exactly ``username``; None when there is none."""
    if not username:
        return None
    # The username filter ignores case; only the exact account counts.
    found = gl.users.list(username=username, iterator=True)
    account = next((u for u in found if u.attributes.get("username") == username), None)
    return None if account is None else int(account.attributes["id"])


def active_level(member: dict[str, Any]) -> int:
    """A member's access level (``members/all``'s answer); 0 for a blocked or deactivated
    account, or a membership not active yet (invited, awaiting a seat)."""
    if member.get("state", "active") != "active":
        return 0
    if member.get("membership_state", "active") != "active":
        return 0
    return int(member.get("access_level") or 0)


def find_mr(gl: gitlab.Gitlab, project: str, head: str, base: str) -> PullRequestRef | None:
    mrs = gl.projects.get(project, lazy=True).mergerequests
    for mr in mrs.list(iterator=True, state="opened", source_branch=head, target_branch=base):
        item = mr.attributes
        # The project's own branch, as GitHub's owner:branch: a fork's namesake is not it.
        if item.get("source_project_id") != item.get("target_project_id"):
            continue
        if not isinstance(item.get("diff_refs"), dict):  # lists leave out the base sha
            item = mrs.get(item["iid"]).attributes
        return mr_ref(item)
    return None


def mr_ref(item: dict[str, Any]) -> PullRequestRef:
    if item.get("iid") is None:
        raise PermanentForgeError("GitLab: the merge request in the response has no iid")
    refs = item.get("diff_refs")
    refs = refs if isinstance(refs, dict) else {}
    author = item.get("author")
    author = author if isinstance(author, dict) else {}
    description, title = item.get("description"), item.get("title")
    return PullRequestRef(
        number=int(item["iid"]),
        url=str(item.get("web_url") or ""),
        head_sha=item.get("sha") or None,
        base_sha=refs.get("base_sha") or None,
        base_ref=item.get("target_branch") or None,
        author=author.get("username") or None,
        state=MR_STATES.get(str(item.get("state"))),
        head_ref=item.get("source_branch") or None,
        from_fork=item.get("source_project_id") not in (None, item.get("target_project_id")),
        body=description if isinstance(description, str) else None,
        title=title if isinstance(title, str) else None,
    )


def clip(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, ending in a note when something was cut."""
    return clipping.clip(text, limit, note=TRUNCATED)


def clip_line(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    return clipping.one_line(text, limit)


def check_repo(repo: RepoRef) -> None:
    if repo.forge != "gitlab":
        raise PermanentForgeError(f"{repo.full_name} is a {repo.forge} repository, not GitLab")


def project_ref(repo: RepoRef) -> str:
    """The project's id when known, else its path (python-gitlab URL-encodes it)."""
    check_repo(repo)
    if repo.id:
        return str(repo.id)
    if not repo.full_name or repo.full_name.strip("/") != repo.full_name:
        raise PermanentForgeError(f"{repo.full_name!r} is not a GitLab project path")
    return str(repo.full_name)
