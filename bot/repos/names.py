"""Repository names and git ref names from a delivery, checked against each forge's own rules.

A repository name ends up in API paths (``/repos/{owner}/{repo}/...``) sent with a token, and
a ref name in git commands: ``..``, ``%2F``, a stray ``/`` or a control character must never
get that far. Each check returns what is wrong with the value, or ``None``; the rules accept
every name the forge lets exist today and the legacy names it still serves, nothing that could
step out of a path segment.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# GitHub: owners are letters, digits and hyphens (managed users add ``_shortcode``), not
# starting with a hyphen; repositories are letters, digits, ``.``, ``_`` and ``-``.
_GITHUB_OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
_GITHUB_REPO = re.compile(r"[A-Za-z0-9._-]{1,100}")
# GitLab: every group, subgroup and project path is letters, digits, ``_``, ``.`` and ``-``,
# not starting with ``-`` nor ending in ``.git`` or ``.atom``; groups nest at most 20 deep.
_GITLAB_SEGMENT = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}")
_GITLAB_MAX_SEGMENTS = 21
# Gitea and Forgejo: owners and repositories are letters, digits, ``_``, ``.`` and ``-``
# (owners start with a letter, digit or ``_``); ``.``, ``..`` and ``-`` are reserved, and a
# repository may not end in ``.git`` or ``.wiki`` (those are its own URLs).
_GITEA_OWNER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}")
_GITEA_REPO = re.compile(r"[A-Za-z0-9_.-]{1,100}")

_DOTS = frozenset({".", ".."})


def github_repository(value: str) -> str | None:
    owner, name = _split_two(value)
    if owner is None or name is None:
        return "not owner/name"
    if not _GITHUB_OWNER.fullmatch(owner):
        return "owner is not a GitHub account name"
    if name in _DOTS or not _GITHUB_REPO.fullmatch(name):
        return "name is not a GitHub repository name"
    return None


def gitlab_repository(value: str) -> str | None:
    segments = value.split("/")
    if len(segments) < 2:
        return "not namespace/project"
    if len(segments) > _GITLAB_MAX_SEGMENTS:
        return f"nested deeper than GitLab allows ({_GITLAB_MAX_SEGMENTS - 1} groups)"
    for segment in segments:
        if (
            segment in _DOTS
            or not _GITLAB_SEGMENT.fullmatch(segment)
            or segment.endswith((".git", ".atom"))
        ):
            return "a group or project path GitLab would refuse"
    return None


def gitea_repository(value: str) -> str | None:
    owner, name = _split_two(value)
    if owner is None or name is None:
        return "not owner/name"
    if owner in _DOTS or not _GITEA_OWNER.fullmatch(owner):
        return "owner is not a Gitea user or organization name"
    if (
        name in {".", "..", "-"}
        or not _GITEA_REPO.fullmatch(name)
        or name.endswith((".git", ".wiki"))
    ):
        return "name is not a Gitea repository name"
    return None


def _split_two(value: str) -> tuple[str | None, str | None]:
    owner, slash, name = value.partition("/")
    if not slash or "/" in name:
        return None, None
    return owner, name


RepositoryCheck = Callable[[str], str | None]


_HTTP_URL = re.compile(r"https?://[^\x00-\x20\x7f]+")


def is_http_url(value: str) -> bool:
    return _HTTP_URL.fullmatch(value) is not None


def clone_url_problem(clone_url: str, full_name: str) -> str | None:
    """Whether an http(s) clone URL names the repository ``full_name`` (as its last segments).

    A delivery whose clone URL points at another repository than the one it names would have
    that repository fetched and the verdict posted on the named one.
    """
    path = clone_url.partition("://")[2].partition("/")[2]
    path = path.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    path = path.removesuffix(".git")
    if path.casefold() == full_name.casefold() or path.casefold().endswith(
        "/" + full_name.casefold()
    ):
        return None
    return "names another repository than the delivery"


# git check-ref-format: no control character, space, ``~^:?*[\``, ``..`` or ``@{``; no
# component that starts with ``.`` or ends with ``.lock``; no empty component, no trailing
# ``.`` or ``/``, not ``@`` alone. A leading ``-`` is refused too (it would read as an option).
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|(^|/)\.|\.lock(/|$)|[/.]$|^/")
_MAX_REF = 1024


def ref_problem(value: str) -> str | None:
    if not value or value == "@" or value.startswith("-") or _BAD_REF.search(value):
        return "not a valid git ref name"
    if len(value) > _MAX_REF:
        return f"longer than {_MAX_REF} characters"
    return None
