"""The request a GitHub-shaped adapter hands the shared modules, and what tells its forge's
dialect apart."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


class Send(Protocol):
    """One request with the adapter's credentials (every page of a listing, with ``pages``);
    the parsed JSON answer, None for an empty one."""

    def __call__(self, method: str, path: str, data: Any = None, *, pages: bool = False) -> Any: ...


def _as_is(text: str) -> str:
    return text


@dataclass(frozen=True, slots=True)
class Dialect:
    """Where GitHub and Gitea differ in what these modules send."""

    forge: str  # as error texts name it: "GitHub", "Gitea"
    pull_exists: int  # the status of "an open pull request from this head into this base exists"
    clip_body: Callable[[str], str] = _as_is  # a comment's or pull request's body, within limits
    clip_title: Callable[[str], str] = _as_is
