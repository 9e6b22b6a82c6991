"""Pull requests: reading one, opening one (or finding the one already open) and rewriting a
description (the onboarding pull request's, as its proposal changes). Finding and listing
differ by forge and stay in each adapter."""

from __future__ import annotations

from collections.abc import Callable

from bot.forges import responses
from bot.forges.base import PullRequestRef
from bot.forges.pulls import open_or_find
from bot.forges.rest.send import Dialect, Send


def pull_ref(item: object, path: str, dialect: Dialect) -> PullRequestRef:
    return responses.pull_request(item, f"{dialect.forge} {path}")


def get(send: Send, repo_path: str, number: int, dialect: Dialect) -> PullRequestRef:
    path = f"{repo_path}/pulls/{int(number)}"
    return pull_ref(send("GET", path), path, dialect)


def open_(
    send: Send,
    repo_path: str,
    *,
    head: str,
    base: str,
    title: str,
    body: str,
    dialect: Dialect,
    find: Callable[[], PullRequestRef | None],
) -> PullRequestRef:
    path = f"{repo_path}/pulls"
    data = {
        "title": dialect.clip_title(title),
        "head": head,
        "base": base,
        "body": dialect.clip_body(body),
    }

    def open_once() -> PullRequestRef:
        return pull_ref(send("POST", path, data), path, dialect)

    return open_or_find(open_once, find, exists=dialect.pull_exists)


def update_body(send: Send, repo_path: str, number: int, body: str, dialect: Dialect) -> None:
    send("PATCH", f"{repo_path}/pulls/{int(number)}", {"body": dialect.clip_body(body)})
