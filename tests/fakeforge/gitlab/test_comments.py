"""The fake GitLab's parts for comment commands: award emoji on notes (recorded, once per user
and name), notes edited after creation, resolving that moves ``updated_at``, the users of access
tokens, and failures of the members endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakeforge.gitlab import FakeGitLab
from tests.fakeforge.gitlab.records import later_than

PROJECT = "group/gitops"
SHA = "a" * 40
BASE = "b" * 40
MR = "/api/v4/projects/1/merge_requests/7"


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    with FakeGitLab() as fake:
        fake.add_project(PROJECT, project_id=1)
        fake.add_merge_request(PROJECT, 7, head_sha=SHA, base_sha=BASE)
        yield fake


@pytest.fixture
def client(fake: FakeGitLab) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.url, headers={"PRIVATE-TOKEN": fake.token}) as client:
        yield client


def test_award_emoji_are_recorded_once_per_name(fake: FakeGitLab, client: httpx.Client) -> None:
    note = fake.add_note(PROJECT, 7, "/help")
    path = f"{MR}/notes/{note['id']}/award_emoji"
    first = client.post(path, json={"name": "eyes"})
    assert first.status_code == 201
    assert first.json()["name"] == "eyes"
    assert first.json()["awardable_id"] == note["id"]
    assert first.json()["user"]["username"] == "ichor-bot"
    again = client.post(path, json={"name": "eyes"})
    assert again.status_code == 404
    assert again.json() == {"message": "404 Award Emoji Name has already been taken"}
    assert client.post(path, json={"name": "thumbsup"}).status_code == 201
    assert [a["name"] for a in fake.awards(PROJECT, 7, note["id"])] == ["eyes", "thumbsup"]
    fake.assert_clean()


def test_awards_are_refused_where_gitlab_refuses_them(
    fake: FakeGitLab, client: httpx.Client
) -> None:
    system = fake.add_note(PROJECT, 7, "added 1 commit", system=True)
    person = fake.add_note(PROJECT, 7, "hello")
    assert client.post(f"{MR}/notes/{system['id']}/award_emoji", json={"name": "eyes"}).json() == {
        "message": "404 Award Emoji Not Found"
    }
    assert client.post(f"{MR}/notes/999/award_emoji", json={"name": "eyes"}).status_code == 404
    unknown = client.post(f"{MR}/notes/{person['id']}/award_emoji", json={"name": "nope"})
    assert unknown.status_code == 404
    missing = client.post(f"{MR}/notes/{person['id']}/award_emoji", json={})
    assert missing.status_code == 400
    assert missing.json() == {"error": "name is missing"}
    assert fake.awards(PROJECT, 7, person["id"]) == []


def test_an_edit_moves_updated_at_past_created_at(fake: FakeGitLab, client: httpx.Client) -> None:
    note = fake.add_note(PROJECT, 7, "/approve")
    assert note["updated_at"] == note["created_at"]
    edited = fake.edit_note(PROJECT, 7, note["id"], "/approve cancel")
    assert edited["body"] == "/approve cancel"
    assert edited["updated_at"] > edited["created_at"]
    listed = client.get(f"{MR}/notes", params={"sort": "asc"}).json()
    assert [(n["body"], n["updated_at"]) for n in listed] == [
        ("/approve cancel", edited["updated_at"])
    ]
    assert "last_edited_at" not in listed[0]  # GitLab's REST note has no such field
    with pytest.raises(KeyError):
        fake.edit_note(PROJECT, 7, 999, "x")


def test_later_than_is_never_the_same_millisecond() -> None:
    assert later_than("2999-01-01T00:00:00.000Z") == "2999-01-01T00:00:00.001Z"
    assert later_than("2000-01-01T00:00:00.999Z") > "2000-01-01T00:00:01.000Z"


def test_resolving_a_thread_moves_updated_at(fake: FakeGitLab) -> None:
    discussion = fake.add_discussion(PROJECT, 7, "why this line?")
    fake.resolve_discussion(PROJECT, 7, discussion["id"])
    note = fake.discussions(PROJECT, 7)[0]["notes"][0]
    assert note["resolved_at"] is not None
    assert note["updated_at"] == note["resolved_at"]


def test_token_users_are_bots(fake: FakeGitLab, client: httpx.Client) -> None:
    name = fake.add_token_user(PROJECT)
    assert name.startswith("project_1_bot_")
    group = fake.add_token_user(PROJECT, group=True)
    assert group.startswith("group_")
    member = client.get(f"/api/v4/projects/1/members/all/{fake.add_user(name)}")
    assert member.json()["access_level"] == 40
    assert client.get("/api/v4/user").json()["bot"] is False
    with FakeGitLab(bot_username="project_1_bot_0123abcd") as bot:
        answer = httpx.get(f"{bot.url}/api/v4/user", headers={"PRIVATE-TOKEN": bot.token})
        assert answer.json()["bot"] is True


@pytest.mark.parametrize("status", [503, 403])
def test_member_lookups_can_be_failed(fake: FakeGitLab, client: httpx.Client, status: int) -> None:
    user = fake.add_member(PROJECT, "carol", 30)
    fault = fake.fail_member_lookups(status, times=2)
    path = f"/api/v4/projects/1/members/all/{user}"
    assert [client.get(path).status_code for _ in range(3)] == [status, status, 200]
    assert fault.hits == 2
    assert client.get("/api/v4/users", params={"username": "carol"}).status_code == 200


def test_a_note_that_would_run_a_quick_action_is_recorded(
    fake: FakeGitLab, client: httpx.Client
) -> None:
    quiet = "`/approve` was not run\n\\/approve\n```\n/approve\n```\n> quoted"
    assert client.post(f"{MR}/notes", json={"body": quiet}).status_code == 201
    fake.assert_clean()
    loud = client.post(f"{MR}/notes", json={"body": "Done.\n/Approve\n/merge now"})
    assert loud.status_code == 201  # GitLab runs them, and answers as usual
    assert fake.validation_errors == [
        f"POST {MR}/notes: the note runs GitLab's /approve quick action as the bot",
        f"POST {MR}/notes: the note runs GitLab's /merge quick action as the bot",
    ]
