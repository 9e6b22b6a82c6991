"""The GitHub adapter's request and response shaping: GitHub's limits, what a response means
(including which failures are worth retrying), and the payloads the adapter sends.

Pure functions, no I/O: :mod:`bot.forges.github` and :mod:`bot.forges.github_reviews` use them.
"""

from __future__ import annotations

import http
from collections.abc import Mapping
from typing import Any

from bot.errors import ForgeError, PermanentForgeError, TransientForgeError
from bot.forges import responses
from bot.forges.base import Annotation, Conclusion, Permission, PullRequestRef
from bot.forges.redaction import scrub, secrets_list, token_forms

SUMMARY_MARKER = "<!-- ichor:summary -->"
ANNOTATIONS_PER_REQUEST = 50  # the check-runs API's limit per request
TITLE_LIMIT = 255  # characters: output title, annotation title
# Summary, text, annotation message, comment and PR bodies: 65535 characters ("64 KB" for a
# message). Counted here in UTF-8 bytes, which are never fewer than characters, so it holds
# whichever GitHub means.
TEXT_LIMIT = 65535
TRUNCATED = "\n\n… (truncated to GitHub's size limit; the full result is in the job's report)"
SECONDARY_LIMIT_WAIT = 60.0  # GitHub: without a Retry-After, wait at least a minute

# GitHub's names, except ERROR: see bot.forges.github's docstring.
CONCLUSIONS = {c: c.value for c in Conclusion} | {Conclusion.ERROR: "failure"}
# role_name names maintain and triage, which the legacy "permission" field folds into write and
# read; a custom role's name is unknown here, so its base "permission" decides.
ROLES = {p.name.lower(): p for p in Permission}


class StatusError(PermanentForgeError):
    """A 4xx GitHub answered; ``status`` lets callers treat 401, 404 and 422 specially."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def http_error(
    where: str, status: int, headers: Mapping[str, str], message: str, *, now: float
) -> PermanentForgeError | TransientForgeError:
    """The ForgeError for an HTTP error status: 5xx and rate limits are transient."""
    reason = phrase(status) or ""
    detail = " ".join(message.split())[:300]
    text = f"{where}: {status} {reason}".rstrip() + (
        f": {detail}" if detail and detail != reason else ""
    )
    wait = server_wait(headers, now)
    if status >= 500 or status == 429 or (status == 403 and wait is not None):
        return TransientForgeError(text, retry_after=wait)
    if status == 403 and "secondary rate limit" in detail.lower():
        return TransientForgeError(text, retry_after=SECONDARY_LIMIT_WAIT)
    return StatusError(text, status=status)


def phrase(status: int) -> str | None:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return None


def server_wait(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds the server asks us to wait: Retry-After, else an exhausted rate limit's reset."""
    try:
        if "retry-after" in headers:
            return max(0.0, float(headers["retry-after"]))
        if headers.get("x-ratelimit-remaining") == "0":
            return max(0.0, float(headers.get("x-ratelimit-reset", "")) - now)
    except ValueError:  # an HTTP-date Retry-After (GitHub sends seconds) or junk: back off
        pass
    return None


def redact(error: ForgeError, secret: str) -> ForgeError:
    """``error`` with ``secret`` cut from its text, should GitHub or httpx ever echo it."""
    text = str(error)
    scrubbed = scrub(text, secrets_list(token_forms(secret)))
    if scrubbed != text:
        error.args = (scrubbed,)
    return error


def field(body: Any, key: str, where: str) -> Any:
    return responses.field(body, key, f"GitHub {where}")


def html_url(item: Any) -> str | None:
    """A comment's (or any object's) web address, when the response has one."""
    url = item.get("html_url") if isinstance(item, dict) else None
    return str(url) if url else None


def pull_ref(item: Any, path: str) -> PullRequestRef:
    return responses.pull_ref(item, f"GitHub {path}")


def by_a_person(comment: Mapping[str, Any]) -> bool:
    """Whether a person (or an organization) wrote the comment.

    Only the bot's own comments are ever edited; a person quoting a marker must not have their
    comment rewritten. Any other author counts as the bot: the app's own login is not known
    without another request.
    """
    user = comment.get("user")
    return isinstance(user, dict) and user.get("type") in ("User", "Organization")


def is_summary(comment: Any) -> bool:
    """The bot's summary comment: it holds the marker and no person wrote it."""
    if not isinstance(comment, dict) or SUMMARY_MARKER not in str(comment.get("body") or ""):
        return False
    return not by_a_person(comment)


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` within ``limit`` UTF-8 bytes, ending in a note when something was cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    keep = limit - len(TRUNCATED.encode("utf-8"))
    return data[:keep].decode("utf-8", "ignore") + TRUNCATED


def clip_title(title: str) -> str:
    return title if len(title) <= TITLE_LIMIT else title[: TITLE_LIMIT - 1] + "…"


def annotation(a: Annotation) -> dict[str, Any]:
    # GitHub refuses the whole request over one bad line range, so ranges are made valid.
    start = max(1, a.start_line)
    note: dict[str, Any] = {
        "path": a.path,
        "start_line": start,
        "end_line": max(start, a.end_line),
        "annotation_level": a.level,
        "message": clip(a.message or a.title or a.level),
    }
    if a.title:
        note["title"] = clip_title(a.title)
    return note


def started_run(listing: Any, external_id: str, where: str) -> str | None:
    """The id of the newest check run in a ``check-runs`` listing made for ``external_id`` (the
    delivery): a job run again after a crash or a failure reuses it instead of adding one."""
    runs = field(listing, "check_runs", where)
    if not isinstance(runs, list):
        raise PermanentForgeError(f"{where}: check_runs is not a list")
    ids = [
        int(run["id"])
        for run in runs
        if isinstance(run, Mapping)
        and run.get("external_id") == external_id
        and isinstance(run.get("id"), int)
    ]
    return str(max(ids)) if ids else None
