"""python-gitlab, used synchronously as it is made to be, with every failure turned into a
redacted ForgeError; and the GitLab payloads the adapter (:mod:`.adapter`) reads and writes.
Each operation runs whole under :meth:`GitLabAPI.run`.

python-gitlab's own retries are switched off for every request: it would sleep with
``time.sleep``, unlogged, up to ten times, and it retries a 429 even
when told not to retry transient errors. Retrying is :func:`bot.forges.retry.with_retries`'s
job, once, around a whole operation, with logging and the adapter's injectable sleep. Its
exceptions carry no response headers, so a session hook keeps the last response's method,
path and headers per thread: a 429's ``Retry-After`` or ``RateLimit-Reset`` is read there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import gitlab
import gitlab.exceptions
import requests

from bot.errors import ForgeError, PermanentForgeError, TransientForgeError
from bot.forges import clipping
from bot.forges.base import PullRequestRef
from bot.forges.http_errors import http_error
from bot.forges.redaction import redact, secrets_list, token_forms
from bot.forges.retry import server_wait
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
_TRANSIENT_TRANSPORT = (
    requests.ConnectionError,  # refused, reset, DNS, TLS, proxy
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


@dataclass(frozen=True, slots=True)
class _Seen:
    """The last response of this thread's current operation (never its body)."""

    method: str
    path: str
    status: int
    headers: Mapping[str, str]


class _Client(gitlab.Gitlab):
    def http_request(
        self,
        verb: str,
        path: str,
        query_data: dict[str, Any] | None = None,
        post_data: Any = None,
        raw: bool = False,
        streamed: bool = False,
        files: dict[str, Any] | None = None,
        timeout: float | None = None,
        obey_rate_limit: bool = True,
        retry_transient_errors: bool | None = None,
        max_retries: int = 10,
        extra_headers: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        # Whatever a manager method passes down: one request, no sleeping here (module doc).
        return super().http_request(
            verb,
            path,
            query_data=query_data,
            post_data=post_data,
            raw=raw,
            streamed=streamed,
            files=files,
            timeout=timeout,
            obey_rate_limit=False,
            retry_transient_errors=False,
            max_retries=0,
            extra_headers=extra_headers,
            **kwargs,
        )


class GitLabAPI:
    """One python-gitlab client for one GitLab and token; :meth:`run` is the only way in."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        timeout: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._token = token
        self._secrets = secrets_list(token_forms(token))
        self._clock = clock
        self._local = threading.local()
        self.gl = _Client(
            url,
            private_token=token,
            timeout=timeout,
            user_agent=USER_AGENT,
            retry_transient_errors=False,
            # Next-page links are built from GitLab's external_url, which can name another
            # scheme or host than ours (a proxy, a misconfiguration): keep paging on ours.
            keep_base_url=True,
        )
        self.gl.session.hooks["response"].append(self._remember)

    def close(self) -> None:
        self.gl.session.close()

    def run(self, operation: Callable[[gitlab.Gitlab], T]) -> T:
        """``operation(client)``; any failure leaves as a ForgeError."""
        return self._run(operation)

    def _run(self, operation: Callable[[gitlab.Gitlab], T]) -> T:
        self._local.seen = None
        try:
            return operation(self.gl)
        except gitlab.exceptions.GitlabError as exc:
            raise self._from_gitlab(exc) from self._cause(exc)
        except _TRANSIENT_TRANSPORT as exc:
            where = self._where(exc.request)
            error: ForgeError = TransientForgeError(f"{where}: {type(exc).__name__} {exc}")
            raise self.redact(error) from self._cause(exc)
        except requests.RequestException as exc:  # a bad URL, too many redirects: no retry
            where = self._where(exc.request)
            error = PermanentForgeError(f"{where}: {type(exc).__name__} {exc}")
            raise self.redact(error) from self._cause(exc)

    def redact(self, error: ForgeError) -> ForgeError:
        """``error`` with the token (and its Basic form) cut from its text."""
        return redact(error, self._secrets)

    # -- plumbing -------------------------------------------------------------------------

    def _remember(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        request = response.request
        self._local.seen = _Seen(
            method=str(request.method or "?"),
            path=urlsplit(str(request.url or "")).path,
            status=response.status_code,
            headers=dict(response.headers),
        )

    def _seen(self) -> _Seen | None:
        seen: _Seen | None = getattr(self._local, "seen", None)
        return seen

    def _where(self, request: Any = None) -> str:
        seen = self._seen()
        if request is not None and getattr(request, "url", None):
            return f"GitLab {request.method} {urlsplit(str(request.url)).path}"
        if seen is not None:
            return f"GitLab {seen.method} {seen.path}"
        return "GitLab"

    def _from_gitlab(self, exc: gitlab.exceptions.GitlabError) -> ForgeError:
        seen = self._seen()
        status = exc.response_code
        message = _message(exc.error_message)
        if status is None:
            if isinstance(exc, gitlab.exceptions.GitlabParsingError):
                return self.redact(TransientForgeError(f"{self._where()}: unreadable response"))
            return self.redact(PermanentForgeError(f"{self._where()}: {message}".rstrip(": ")))
        headers = seen.headers if seen is not None and seen.status == status else {}
        hint = " (the token was refused: check ICHOR_GITLAB_TOKEN)" if status == 401 else ""
        wait = server_wait(headers, self._clock())
        error = http_error(
            self._where(), status, message, secrets=self._secrets, retry_after=wait, hint=hint
        )
        return self.redact(error)

    def _cause(self, exc: Exception) -> Exception | None:
        """``exc`` to chain, unless its text holds the token (a traceback would show it)."""
        text = f"{exc} {exc.args!r}"
        return None if any(s in text for s in self._secrets) else exc


def _message(value: Any) -> str:
    """GitLab's ``message``/``error``: a string, or a field → problems mapping."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


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
