"""Reading forge answers: GitHub and Gitea shape a pull request and an issue comment alike in
the fields the bot reads, so one reader of each serves both. A missing field is a
PermanentForgeError naming the call."""

from __future__ import annotations

import dataclasses
from typing import Any

from bot.errors import PermanentForgeError
from bot.forges.base import ForgeComment, PullRequestRef
from bot.repos import ForgeKind, RepoRef
from bot.repos.names import clone_url_problem, is_http_url, ref_problem


def field(body: Any, key: str, where: str) -> Any:
    """``body[key]``; ``where`` names the forge and the call, e.g. ``"GitHub GET /repos/..."``."""
    if not isinstance(body, dict) or body.get(key) is None:
        raise PermanentForgeError(f"{where}: the response has no {key}")
    return body[key]


def side(item: Any, key: str) -> dict[str, Any]:
    """A pull request's ``head`` or ``base`` object (empty when absent)."""
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, dict) else {}


def user_of(item: Any) -> dict[str, Any]:
    """Who wrote a comment or opened a pull request (empty when absent: a deleted account)."""
    return side(item, "user")


def pull_ref(item: Any, where: str) -> PullRequestRef:
    number = int(field(item, "number", where))
    head, base = side(item, "head"), side(item, "base")
    body, title = item.get("body"), item.get("title")
    return PullRequestRef(
        number=number,
        url=str(item.get("html_url") or ""),
        head_sha=head.get("sha") or None,
        base_sha=base.get("sha") or None,
        base_ref=base.get("ref") or None,
        body=body if isinstance(body, str) else None,
        title=title if isinstance(title, str) else None,
    )


def pull_author(item: Any) -> str | None:
    """The login of who opened a pull request (``user.login`` on GitHub and Gitea)."""
    user = item.get("user") if isinstance(item, dict) else None
    login = user.get("login") if isinstance(user, dict) else None
    return str(login) if login else None


def pull_state(item: Any) -> str | None:
    """ "open", "closed" or "merged": GitHub and Gitea say ``closed`` of a merged pull request
    too, and tell it by ``merged`` (a pull's own page) or ``merged_at`` (a listing's item)."""
    if not isinstance(item, dict):
        return None
    if item.get("merged") is True or item.get("merged_at"):
        return "merged"
    state = item.get("state")
    return str(state) if state else None


def pull_request(item: Any, where: str) -> PullRequestRef:
    """:func:`pull_ref` with who opened the pull request and its state: ``"merged"`` once
    merged (both forges say ``"closed"`` then; GitHub sets ``merged_at``, Gitea ``merged``),
    else ``"open"`` or ``"closed"`` as the forge says."""
    head, base = side(item, "head"), side(item, "base")
    head_repo, base_repo = side(head, "repo"), side(base, "repo")
    return dataclasses.replace(
        pull_ref(item, where),
        author=pull_author(item),
        state=pull_state(item),
        head_ref=head.get("ref") or None,
        # A deleted fork leaves head.repo null; its branch is then not found in the base
        # repository, so a change into it fails there, never lands elsewhere.
        from_fork=bool(head_repo) and head_repo.get("full_name") != base_repo.get("full_name"),
    )


def comment(item: Any, where: str, *, author_is_bot: bool) -> ForgeComment:
    """An issue comment as listed (GitHub and Gitea); ``author_is_bot`` as the caller's forge
    tells it. Edited means its ``updated_at`` differs from its ``created_at``: both forges set
    them equal when a comment is created and move ``updated_at`` on an edit of its body."""
    comment_id = field(item, "id", where)
    created, updated = item.get("created_at"), item.get("updated_at")
    url = item.get("html_url")
    return ForgeComment(
        id=str(comment_id),
        author=str(user_of(item).get("login") or ""),
        body=str(item.get("body") or ""),
        author_is_bot=author_is_bot,
        # Without both stamps nothing says it was not edited: a marker in it is not trusted.
        edited=not created or not updated or created != updated,
        url=str(url) if url else None,
    )


def described_repository(
    item: Any,
    forge: ForgeKind,
    full_name: str,
    where: str,
    *,
    installation_id: int | None = None,
    keys: tuple[str, str, str] = ("full_name", "clone_url", "html_url"),
) -> RepoRef:
    """A repository as the forge describes it (GitHub and Gitea by default; GitLab names its
    keys ``path_with_namespace``, ``http_url_to_repo``, ``web_url``), for a request that named
    it only. The answer must be that repository, its clone URL an http(s) one of it and its
    default branch a valid ref: what is fetched and pushed to comes from here."""
    name_key, clone_key, web_key = keys
    named = str(field(item, name_key, where))
    clone_url = str(field(item, clone_key, where))
    branch = str(field(item, "default_branch", where))
    if named.casefold() != full_name.casefold():
        raise PermanentForgeError(f"{where}: the answer names {named!r}, not {full_name!r}")
    if not is_http_url(clone_url) or clone_url_problem(clone_url, named) is not None:
        raise PermanentForgeError(f"{where}: the clone URL is not an http(s) URL of {named}")
    if ref_problem(branch) is not None:
        raise PermanentForgeError(f"{where}: the default branch is not a valid branch name")
    repo_id = item.get("id")
    return RepoRef(
        forge=forge,
        full_name=named,
        id=str(repo_id) if repo_id is not None else None,
        clone_url=clone_url,
        web_url=str(item.get(web_key) or clone_url.removesuffix(".git")),
        default_branch=branch,
        installation_id=installation_id,
    )
