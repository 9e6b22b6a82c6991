"""HTTP plumbing of the Gitea/Forgejo adapter: one request, its errors, listings by page,
reading the objects Gitea answers with and shaping what the adapter sends.

Every failure leaves here as a :class:`bot.errors.ForgeError` whose text names the method, the
API path and the status with Gitea's own ``message``, and never the token: it is cut from every
error text, whatever echoed it. 5xx, 429, timeouts and transport errors are transient; other
4xx are permanent (:class:`bot.errors.ForgeStatusError`, whose ``status`` lets callers treat
403, 404 and 409 specially).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from bot.errors import PermanentForgeError, TransientForgeError
from bot.forges import responses
from bot.forges.base import (
    Conclusion,
    LineFinding,
    Permission,
    finding_marker,
)
from bot.forges.clipping import one_line
from bot.forges.http.redaction import secrets_list, token_forms
from bot.forges.http.seam import Policy, RateObserver, Seam
from bot.forges.rest.send import Dialect
from bot.repos import RepoRef

# Gitea's MAX_RESPONSE_ITEMS defaults to 50 and caps ``limit``; an instance may cap it lower,
# so a short page does not prove the last one (see :meth:`GiteaHTTP.pages`).
FORGES = ("gitea", "forgejo")  # RepoRef.forge values this adapter serves
PAGE_SIZE = 50
MAX_PAGES = 100  # a server that ignores ``page`` must not loop us forever


def _hint(response: httpx.Response) -> str:
    status = response.status_code
    if 300 <= status < 400:
        # Gitea redirects a renamed repository; the caller must use the new name.
        return f" (redirected to {response.headers.get('location', '')})"
    if status == 401:
        return " (the token was refused: check ICHOR_GITEA_TOKEN and its scopes)"
    return ""


POLICY = Policy("Gitea", hint=_hint)


@dataclass(frozen=True, slots=True)
class Reply:
    body: Any  # parsed JSON; None for an empty body (204)
    headers: httpx.Headers


class GiteaHTTP:
    """Requests to ``<url>/api/v1`` with ``Authorization: token <token>``, through the seam."""

    def __init__(
        self,
        url: str,
        token: str,
        client: httpx.Client | None = None,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        observe: RateObserver | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PermanentForgeError("the Gitea URL (ICHOR_GITEA_URL) is not an http(s) URL")
        if parts.username is not None or parts.query or parts.fragment:
            # A password in the URL would end up in every error text that names a URL.
            raise PermanentForgeError(
                "the Gitea URL (ICHOR_GITEA_URL) must be a plain base URL, without credentials"
            )
        if not token.strip():
            raise PermanentForgeError("the Gitea token is empty: set ICHOR_GITEA_TOKEN")
        self.host = parts.netloc.lower()  # host[:port], as git's http.extraHeader is scoped
        self.api = url.rstrip("/") + "/api/v1"
        self.token = token
        # The token as sent here, and as git sends it (the Basic user name, see git_credentials).
        self._secrets = secrets_list(token_forms(token))
        self._headers = {"Authorization": f"token {token}", "Accept": "application/json"}
        self.seam = Seam(POLICY, client, clock=clock, sleep=sleep, observe=observe)

    def close(self) -> None:
        self.seam.close()

    def send(
        self,
        method: str,
        path: str,
        data: Any = None,
        *,
        query: Mapping[str, str | int] | None = None,
    ) -> Reply:
        """One request; ``path`` is below ``/api/v1`` and already percent-encoded."""
        where = f"Gitea {method} {path}"
        response = self.seam.send(
            method,
            self.api + path,
            where=where,
            secrets=self._secrets,
            headers=self._headers,
            json=data,
            params=query,
        )
        if not response.content.strip():
            return Reply(None, response.headers)
        try:
            return Reply(response.json(), response.headers)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            # A proxy's HTML page with a 200, typically while Gitea restarts.
            raise TransientForgeError(f"{where}: unreadable response") from exc

    def get(self, path: str) -> Any:
        return (self.send("GET", path)).body

    def call(self, method: str, path: str, data: Any = None, *, pages: bool = False) -> Any:
        """:class:`bot.forges.rest.send.Send`: one request's answer, or every page's items."""
        return self.pages(path) if pages else self.send(method, path, data).body

    def pages(self, path: str, query: Mapping[str, str] | None = None) -> list[Any]:
        """Every item of a paged listing (``page``/``limit``).

        Stops at ``X-Total-Count`` when the server sends it, else at an empty page: a page
        shorter than asked for proves nothing when MAX_RESPONSE_ITEMS is set below our limit.
        Items are told apart by ``id``, so a server that ignores ``page`` ends the loop too.
        """
        items: list[Any] = []
        seen: set[Any] = set()
        for page in range(1, MAX_PAGES + 1):
            reply = self.send(
                "GET", path, query={**(query or {}), "limit": PAGE_SIZE, "page": page}
            )
            if not isinstance(reply.body, list):
                raise PermanentForgeError(f"Gitea GET {path}: the response is not a list")
            fresh = [x for x in reply.body if not isinstance(x, dict) or x.get("id") not in seen]
            seen.update(x.get("id") for x in fresh if isinstance(x, dict))
            items.extend(fresh)
            total = _int(reply.headers.get("x-total-count"))
            if not fresh or (total is not None and len(items) >= total):
                break
        return items


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# -- reading and writing what Gitea names ---------------------------------------------

STATES = {
    Conclusion.SUCCESS: "success",
    Conclusion.NEUTRAL: "success",
    Conclusion.FAILURE: "failure",
    Conclusion.ACTION_REQUIRED: "failure",
    Conclusion.ERROR: "error",
}
# Gitea answers 409 to a second pull request from one head into one base.
DIALECT = Dialect("Gitea", pull_exists=409)
PENDING_DESCRIPTION = "The acceptance gate is running"
# Gitea shows a status description on one line next to the context; GitHub's 140 is a good cap.
DESCRIPTION_LIMIT = 140
PERMISSIONS = {
    "owner": Permission.ADMIN,
    "admin": Permission.ADMIN,
    "write": Permission.WRITE,
    "read": Permission.READ,
    "none": Permission.NONE,
}
NEEDS_ADMIN = (
    "Gitea answers this endpoint only for a token with admin rights on the repository: the "
    "token's user needs admin rights on {repo} to read another user's permission (give the bot "
    "account admin access to the repository, or use an admin's token in ICHOR_GITEA_TOKEN)"
)


def repo_path(repo: RepoRef, suffix: str) -> str:
    if repo.forge not in FORGES:
        raise PermanentForgeError(f"{repo.full_name} is a {repo.forge} repository, not Gitea")
    owner, _, name = repo.full_name.partition("/")
    if not owner or not name or "/" in name:
        raise PermanentForgeError(f"{repo.full_name!r} is not an owner/name repository")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}{suffix}"


def field(body: Any, key: str, where: str) -> Any:
    return responses.field(body, key, f"Gitea {where}")


def newest_status(listed: Any, context: str) -> tuple[str, str] | None:
    """(state, description) of the newest status of ``context`` in a ``statuses`` listing."""
    ours = [
        s
        for s in (listed if isinstance(listed, list) else [])
        if isinstance(s, dict) and s.get("context") == context and isinstance(s.get("id"), int)
    ]
    if not ours:
        return None
    newest = max(ours, key=lambda s: int(s["id"]))
    return str(newest.get("status")), str(newest.get("description") or "")


def review_payload(label: str, head_sha: str, batch: Sequence[LineFinding]) -> dict[str, Any]:
    """One ``COMMENT`` review holding a line comment per finding, each with its marker."""
    count = f"{len(batch)} new finding" + ("s" if len(batch) != 1 else "")
    return {
        "commit_id": head_sha,
        # Without an event Gitea keeps the review PENDING: invisible to everyone else.
        "event": "COMMENT",
        "body": f"{label}: {count}.",
        "comments": [
            {
                "path": f.path,
                "body": f"{f.body}\n\n{finding_marker(f.fingerprint)}",
                "new_position": f.line,  # a line number of the head version
            }
            for f in batch
        ],
    }


def same_user(user: Any, me: dict[str, Any]) -> bool:
    if not isinstance(user, dict):
        return False
    if user.get("id") is not None and me.get("id") is not None:
        return bool(user["id"] == me["id"])
    return bool(user.get("login")) and user.get("login") == me.get("login")


def status_line(text: str) -> str:
    return one_line(text, DESCRIPTION_LIMIT)
