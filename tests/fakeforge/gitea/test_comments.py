"""The fake Gitea/Forgejo's comment commands side: reactions recorded, edits stamped later, the
comment listing as Gitea answers it (or paged, on request), faults on the permission endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakeforge.gitea import FakeGitea

FULL = "octo/gitops"
SHA = "a" * 40
API = f"/api/v1/repos/{FULL}"


@pytest.fixture(params=["gitea", "forgejo"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeGitea]:
    with FakeGitea(flavor=request.param) as fake:
        fake.add_repo(FULL)
        fake.add_repo("octo/other")
        fake.add_pull(FULL, 7, head_sha=SHA)
        fake.add_pull("octo/other", 1, head_sha=SHA)
        yield fake
        assert fake.response_errors == [], fake.response_errors


@pytest.fixture
def api(fake: FakeGitea) -> Iterator[httpx.Client]:
    headers = {"authorization": f"token {fake.token}"}
    with httpx.Client(base_url=f"{fake.url}/api/v1", headers=headers) as client:
        yield client


def test_a_reaction_is_recorded_once_201_then_200(fake: FakeGitea, api: httpx.Client) -> None:
    comment = fake.add_comment(FULL, 7, "/recheck")
    path = f"/repos/{FULL}/issues/comments/{comment['id']}/reactions"
    first = api.post(path, json={"content": "eyes"})
    again = api.post(path, json={"content": "eyes"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["content"] == "eyes" and first.json()["user"]["login"] == "ichor-bot"
    assert again.json()["created_at"] == first.json()["created_at"]
    assert fake.reactions(FULL, comment["id"]) == [{"content": "eyes", "user": "ichor-bot"}]
    assert api.post(path, json={"content": "+1"}).status_code == 201
    assert [r["content"] for r in fake.reactions(FULL, comment["id"])] == ["eyes", "+1"]
    fake.assert_clean()


def test_a_reaction_gitea_does_not_allow_is_403_and_an_unknown_comment_404(
    fake: FakeGitea, api: httpx.Client
) -> None:
    comment = fake.add_comment(FULL, 7, "hi")
    other = fake.add_comment("octo/other", 1, "elsewhere")
    path = f"/repos/{FULL}/issues/comments/{{}}/reactions"
    refused = api.post(path.format(comment["id"]), json={"content": "party"})
    assert refused.status_code == 403
    assert refused.json()["message"] == "'party' is not an allowed reaction"
    assert api.post(path.format(999), json={"content": "eyes"}).status_code == 404
    # A comment id of another repository is no comment of this one.
    assert api.post(path.format(other["id"]), json={"content": "eyes"}).status_code == 404
    assert fake.reactions(FULL, comment["id"]) == []
    assert fake.reactions("octo/other", other["id"]) == []


def test_an_edit_is_stamped_after_the_creation(fake: FakeGitea, api: httpx.Client) -> None:
    theirs = fake.add_comment(FULL, 7, "/approve")
    assert theirs["updated_at"] == theirs["created_at"]
    edited = fake.edit_comment(theirs["id"], "/approve cancel")
    assert edited["body"] == "/approve cancel"
    assert edited["updated_at"] > edited["created_at"]  # ISO 8601 in UTC sorts as text
    mine = api.post(f"/repos/{FULL}/issues/7/comments", json={"body": "a"}).json()
    patched = api.patch(f"/repos/{FULL}/issues/comments/{mine['id']}", json={"body": "b"}).json()
    assert patched["updated_at"] > patched["created_at"]
    listed = {c["id"]: c for c in api.get(f"/repos/{FULL}/issues/7/comments").json()}
    assert listed[theirs["id"]]["updated_at"] == edited["updated_at"]


def test_comments_come_at_once_as_on_gitea_unless_paged(fake: FakeGitea, api: httpx.Client) -> None:
    for i in range(5):
        fake.add_comment(FULL, 7, f"c{i}")
    path = f"/repos/{FULL}/issues/7/comments"
    whole = api.get(path, params={"limit": 2, "page": 2})  # both ignored, as Gitea does
    assert [c["body"] for c in whole.json()] == [f"c{i}" for i in range(5)]
    assert whole.headers["x-total-count"] == "5" and "link" not in whole.headers
    fake.page_comments(2)
    pages = [api.get(path, params={"limit": 50, "page": n}) for n in (1, 2, 3, 4)]
    assert [[c["body"] for c in p.json()] for p in pages] == [
        ["c0", "c1"],
        ["c2", "c3"],
        ["c4"],
        [],
    ]
    assert pages[0].headers["x-total-count"] == "5" and 'rel="next"' in pages[0].headers["link"]
    fake.assert_clean()  # limit and page are no parameters of this operation: not checked


def test_permission_faults_5xx_then_served(fake: FakeGitea, api: httpx.Client) -> None:
    fake.set_permission(FULL, "alice", "write")
    fault = fake.fail_permission_reads(FULL, 503, times=2)
    path = f"/repos/{FULL}/collaborators/alice/permission"
    assert [api.get(path).status_code for _ in range(3)] == [503, 503, 200]
    assert fault.exhausted


def test_permission_faults_403_with_gitea_message_for_one_user(
    fake: FakeGitea, api: httpx.Client
) -> None:
    fake.set_permission(FULL, "alice", "write")
    fake.set_permission(FULL, "bob", "read")
    fake.fail_permission_reads(FULL, 403, user="alice")
    refused = api.get(f"/repos/{FULL}/collaborators/alice/permission")
    assert refused.status_code == 403 and "Only admins" in refused.json()["message"]
    assert api.get(f"/repos/{FULL}/collaborators/bob/permission").json()["permission"] == "read"
    assert api.get(f"/repos/{FULL}/collaborators/alice/permission").status_code == 403
    fake.clear_faults()
    assert api.get(f"/repos/{FULL}/collaborators/alice/permission").status_code == 200
