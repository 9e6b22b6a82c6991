"""The GitHub adapter's request and response shaping: GitHub's limits, what a response means,
and the payloads the adapter sends.

Pure functions, no I/O: :mod:`.adapter` and :mod:`.reviews` use them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit

from bot.errors import PermanentForgeError
from bot.forges import clipping, responses
from bot.forges.base import Annotation, CheckAction, Conclusion, Permission
from bot.forges.rest.send import Dialect
from bot.repos import RepoRef

ANNOTATIONS_PER_REQUEST = 50  # the check-runs API's limit per request
TITLE_LIMIT = 255  # characters: output title, annotation title
# Summary, text, annotation message, comment and PR bodies: 65535 characters ("64 KB" for a
# message). Counted here in UTF-8 bytes, which are never fewer than characters, so it holds
# whichever GitHub means.
TEXT_LIMIT = 65535
TRUNCATED = "\n\n… (truncated to GitHub's size limit; the full result is in the job's report)"
# A check run's buttons: at most three, label 20, description 40, identifier 20 characters.
ACTIONS_PER_RUN = 3
ACTION_LABEL_LIMIT, ACTION_DESCRIPTION_LIMIT, ACTION_IDENTIFIER_LIMIT = 20, 40, 20

# GitHub's names, except ERROR: see bot.forges.github.adapter's docstring.
CONCLUSIONS = {c: c.value for c in Conclusion} | {Conclusion.ERROR: "failure"}
# role_name names maintain and triage, which the legacy "permission" field folds into write and
# read; a custom role's name is unknown here, so its base "permission" decides.
ROLES = {p.name.lower(): p for p in Permission}


def field(body: Any, key: str, where: str) -> Any:
    return responses.field(body, key, f"GitHub {where}")


def app_login(app: Any) -> str:
    """The login an app comments under, from ``GET /app``: its slug and ``[bot]``."""
    return f"{field(app, 'slug', 'GET /app')}[bot]"


def by_a_person(comment: Mapping[str, Any]) -> bool:
    """Whether a person (or an organization) wrote the comment.

    Only the bot's own comments are ever edited; a person quoting a marker must not have their
    comment rewritten. Any other author counts as the bot: the app's own login is not known
    without another request.
    """
    user = comment.get("user")
    return isinstance(user, dict) and user.get("type") in ("User", "Organization")


def by_the_app(comment: Mapping[str, Any]) -> bool:
    """A comment the bot may edit or find again: see :func:`by_a_person`."""
    return not by_a_person(comment)


def typed_bot(comment: Mapping[str, Any]) -> bool:
    """A comment listed as a bot's: GitHub types its author ``Bot`` (apps and their kin)."""
    return responses.user_of(comment).get("type") == "Bot"


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` within ``limit`` UTF-8 bytes, ending in a note when something was cut."""
    return clipping.clip(text, limit, note=TRUNCATED, utf8=True)


def clip_title(title: str) -> str:
    return clipping.clip(title, TITLE_LIMIT)


# GitHub answers 422 to a second pull request from one head into one base.
DIALECT = Dialect("GitHub", pull_exists=422, clip_body=clip, clip_title=clip_title)


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


def check_actions(actions: Sequence[CheckAction]) -> list[dict[str, str]]:
    """A check run's ``actions``, within GitHub's limits (it refuses the whole update over one
    long label). The identifier is cut without an ellipsis: it is a key that comes back in
    ``requested_action``, not text anyone reads."""
    return [
        {
            "label": clipping.clip(a.label, ACTION_LABEL_LIMIT),
            "description": clipping.clip(a.description, ACTION_DESCRIPTION_LIMIT),
            "identifier": a.identifier[:ACTION_IDENTIFIER_LIMIT],
        }
        for a in actions[:ACTIONS_PER_RUN]
    ]


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


def host_of(url: str, what: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PermanentForgeError(f"{what} is not an http(s) URL with a host")
    return parts.netloc.rpartition("@")[2].lower()


def installation_of(repo: RepoRef) -> int:
    if repo.forge != "github":
        raise PermanentForgeError(f"{repo.full_name} is a {repo.forge} repository, not GitHub")
    if repo.installation_id is None:
        raise PermanentForgeError(f"{repo.full_name}: no GitHub App installation id")
    return repo.installation_id


def repo_path(repo: RepoRef, suffix: str) -> str:
    owner, _, name = repo.full_name.partition("/")
    if not owner or not name or "/" in name:
        raise PermanentForgeError(f"{repo.full_name!r} is not an owner/name repository")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}{suffix}"
