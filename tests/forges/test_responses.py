"""Reading a pull request as GitHub and Gitea both shape it: who opened it, and its state."""

from __future__ import annotations

from typing import Any

import pytest

from bot.forges.responses import pull_author, pull_state


@pytest.mark.parametrize(
    ("item", "state"),
    [
        ({"state": "open", "merged": False}, "open"),
        ({"state": "closed", "merged": False}, "closed"),
        ({"state": "closed", "merged": True}, "merged"),  # a pull request's own page
        ({"state": "closed", "merged_at": "2025-01-02T03:04:05Z"}, "merged"),  # a listing's item
        ({"state": "closed", "merged_at": None}, "closed"),
        ({}, None),
        ("not an object", None),
    ],
)
def test_a_merged_pull_request_reads_merged_though_the_forge_says_closed(
    item: Any, state: str | None
) -> None:
    assert pull_state(item) == state


def test_the_author_is_the_login_of_user() -> None:
    assert pull_author({"user": {"login": "alice", "id": 3}}) == "alice"
    assert pull_author({"user": {"login": ""}}) is None
    assert pull_author({"user": None}) is None
    assert pull_author([]) is None
