"""The fake GitHub's helpers for comment commands: edits stamped later than creation, users
typed ``Bot``, merged pull requests, and faults on the permission and open-pull-request
lookups (seen over HTTP)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakeforge import FakeGitHub
from tests.fakeforge.github import iso

FULL = "octo/gitops"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        fake.add_repo(FULL, installation_id=42)
        fake.add_pull(FULL, number=7, head_sha="1" * 40, base_sha="b" * 40)
        yield fake
        fake.assert_clean()


@pytest.fixture
def client(fake: FakeGitHub) -> Iterator[httpx.Client]:
    token = fake.issue_token(42)
    with httpx.Client(base_url=fake.url, headers={"authorization": f"token {token}"}) as c:
        yield c


def test_an_edit_moves_updated_at_past_created_at(fake: FakeGitHub, client: httpx.Client) -> None:
    by_hand = fake.add_comment(FULL, 7, "/recheck")
    assert by_hand["updated_at"] == by_hand["created_at"]
    edited = fake.edit_comment(by_hand["id"], "/approve")
    assert edited["body"] == "/approve" and edited["updated_at"] > edited["created_at"]
    mine = client.post(f"/repos/{FULL}/issues/7/comments", json={"body": "a"}).json()
    answer = client.patch(f"/repos/{FULL}/issues/comments/{mine['id']}", json={"body": "b"})
    assert answer.json()["updated_at"] > answer.json()["created_at"]


def test_marked_users_are_typed_bot(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.add_comment(FULL, 7, "x", user="renovate")
    fake.add_comment(FULL, 7, "y", user="dependabot[bot]")
    fake.add_comment(FULL, 7, "z", user="alice")
    fake.mark_bot("renovate")
    listed = client.get(f"/repos/{FULL}/issues/7/comments").json()
    assert [c["user"]["type"] for c in listed] == ["Bot", "Bot", "User"]


def test_a_merged_pull_request_says_so(fake: FakeGitHub, client: httpx.Client) -> None:
    assert client.get(f"/repos/{FULL}/pulls/7").json()["merged_at"] is None
    fake.update_pull(FULL, 7, state="closed", merged_at=iso(1_700_000_000))
    pull = client.get(f"/repos/{FULL}/pulls/7").json()
    assert (pull["state"], pull["merged"], pull["merged_at"]) == (
        "closed",
        True,
        "2023-11-14T22:13:20Z",
    )


def test_permission_faults_hit_the_lookup_of_the_user_named(
    fake: FakeGitHub, client: httpx.Client
) -> None:
    fake.set_permission(FULL, "alice", "write")
    fake.inject_permission_failure(503, user="bob", times=None)
    fake.inject_permission_failure(403, times=1)

    def status(user: str) -> int:
        return client.get(f"/repos/{FULL}/collaborators/{user}/permission").status_code

    assert [status("bob"), status("bob"), status("alice"), status("alice")] == [503, 503, 403, 200]


def test_pull_lookup_faults_hit_the_listing_of_the_repository_named(
    fake: FakeGitHub, client: httpx.Client
) -> None:
    fake.add_repo("octo/other", installation_id=42)
    fake.inject_pull_lookup_failure(503, full_name=FULL, times=2)

    def status(full_name: str) -> int:
        query = {"state": "open", "head": "octo:ichor/x", "base": "main"}
        return client.get(f"/repos/{full_name}/pulls", params=query).status_code

    assert [status("octo/other"), status(FULL), status(FULL), status(FULL)] == [200, 503, 503, 200]
    assert client.get(f"/repos/{FULL}/pulls/7").status_code == 200  # one pull: no listing
