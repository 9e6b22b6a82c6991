"""What each event asks to be checked: pure, no git, no forge."""

from __future__ import annotations

import dataclasses

from bot.checks.request import (
    CheckRequest,
    Commit,
    MergeBase,
    Rerun,
    asks_for_check,
    request_for,
)
from bot.repos import ForgeKind, RepoRef
from bot.webhooks import ChangeRequestEvent, CheckRerequestEvent, PushEvent

NAME = "acme/gitops"
HEAD, BASE = "a" * 40, "b" * 40
SHA256_ZERO = "0" * 64


def ref(forge: ForgeKind = ForgeKind.GITHUB) -> RepoRef:
    return RepoRef(forge, NAME, "1", f"https://x.test/{NAME}.git", f"https://x.test/{NAME}", "main")


def merge_request_head(number: int) -> str:
    return f"refs/merge-requests/{number}/head"


def request(event: object, forge: str = "github") -> CheckRequest | None:
    return request_for(event, forge=forge, delivery_id="d1", pull_head_ref=merge_request_head)


def push(ref_name: str, before: str, after: str, *, created: bool = False) -> PushEvent:
    return PushEvent(ref(), ref_name, before, after, created, False, "alice", 1)


def test_a_pull_request_fetches_the_head_ref_its_adapter_names() -> None:
    event = ChangeRequestEvent(
        ref(ForgeKind.GITLAB),
        7,
        "opened",
        HEAD,
        "main",
        "f",
        None,
        None,
        NAME,
        False,
        "a",
        1,
        False,
    )
    got = request(event, "gitlab")
    assert got is not None
    assert got.fetch_refs == ("refs/merge-requests/7/head", "refs/heads/main")
    assert got.baseline == MergeBase(None, "main")  # the base branch's tip, once fetched
    assert (got.pull, got.number, got.external_id) == (f"gitlab:{NAME}:7", 7, "d1")
    # GitLab's hook names who triggered it, not the author: unknown rather than wrong.
    assert got.author is None
    github = request(dataclasses.replace(event, repo=ref(ForgeKind.GITHUB)), "github")
    assert github is not None and github.author == "a"  # whose own /approve does not count


def test_only_a_pull_request_names_an_author() -> None:
    got = request(push("refs/heads/main", BASE, HEAD))
    assert got is not None and got.author is None


def test_a_push_to_the_default_branch_compares_with_before() -> None:
    got = request(push("refs/heads/main", BASE, HEAD))
    assert got is not None
    assert (got.baseline, got.fetch_refs, got.pull) == (Commit(BASE), ("refs/heads/main",), None)
    created = request(push("refs/heads/main", BASE, HEAD, created=True))
    assert created is not None and created.baseline == Commit(None)


def test_a_push_to_another_branch_is_checked_as_its_pull_request_would_be() -> None:
    got = request(push("refs/heads/feature", BASE, HEAD))
    assert got is not None
    assert got.baseline == MergeBase(None, "main")
    assert got.fetch_refs == ("refs/heads/feature", "refs/heads/main")


def test_zero_ids_of_either_hash_length_mean_no_commit() -> None:
    for zero in ("0" * 40, SHA256_ZERO):
        deleted = push("refs/heads/main", HEAD, zero)
        assert not asks_for_check(deleted) and request(deleted) is None
        first = request(push("refs/heads/main", zero, "c" * 64))
        assert first is not None and first.baseline == Commit(None)
    assert request(push("refs/tags/v1", BASE, HEAD)) is None


def test_a_rerun_names_its_pull_requests() -> None:
    event = CheckRerequestEvent(ref(), HEAD, 1, 2, (4, 5), 1)
    got = request(event)
    assert got is not None
    assert (got.baseline, got.fetch_refs, got.base_sha) == (Rerun((4, 5)), (), None)


def test_other_events_ask_for_nothing() -> None:
    assert not asks_for_check(object()) and request(object()) is None
