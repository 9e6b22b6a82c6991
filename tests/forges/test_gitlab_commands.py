"""GitLabForge's calls for comment commands, against the fake GitLab over real HTTP: the bot's
login, award emoji, replies, notes read back (paging, edits, bots), the MR's author and state,
and permission lookups that fail loudly; then the pure readers of GitLab's payloads."""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from bot.errors import ForgeError, ForgeStatusError, PermanentForgeError, TransientForgeError
from bot.forges.base import Permission, Reaction
from bot.forges.gitlab import notes as commands
from bot.forges.gitlab.adapter import GitLabForge
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge.gitlab import FakeGitLab

T = TypeVar("T")
PROJECT = "group/gitops"
SHA = "a" * 40
BASE = "b" * 40
API = "/api/v4/projects/1"
MR = f"{API}/merge_requests/7"
NOTES = f"{MR}/notes"
REPO = RepoRef(forge=ForgeKind.GITLAB, full_name=PROJECT, clone_url="unused", id="1")


class Sleeps(list[float]):
    def __call__(self, delay: float) -> None:
        self.append(delay)


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    with FakeGitLab() as fake:
        fake.add_project(PROJECT, project_id=1)
        fake.add_merge_request(PROJECT, 7, head_sha=SHA, base_sha=BASE)
        yield fake
        assert fake.validation_errors == [], fake.validation_errors


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def forge(fake: FakeGitLab, sleeps: Sleeps) -> GitLabForge:
    return GitLabForge(url=fake.url, token=fake.token, sleep=sleeps, timeout=5)


def run(forge: GitLabForge, body: Callable[[], T]) -> T:
    def main() -> T:
        try:
            return body()
        finally:
            forge.close()

    return main()


def note_url(fake: FakeGitLab, note_id: Any) -> str:
    return f"{fake.url}/{PROJECT}/-/merge_requests/7#note_{note_id}"


# -- the bot's login ------------------------------------------------------------------------


def test_the_bot_login_is_the_tokens_username_fetched_once(
    fake: FakeGitLab, forge: GitLabForge
) -> None:
    def body() -> list[str]:
        first = forge.bot_login(REPO)
        forge.upsert_summary_comment(REPO, 7, "summary")  # needs the user id: no refetch
        return [first, forge.bot_login(REPO)]

    assert run(forge, body) == ["ichor-bot", "ichor-bot"]
    assert fake.calls_summary()[0] == "GET /api/v4/user 200"
    assert [c.path for c in fake.calls].count("/api/v4/user") == 1


# -- reactions ------------------------------------------------------------------------------


@pytest.mark.parametrize(("reaction", "name"), [("eyes", "eyes"), ("+1", "thumbsup")])
def test_a_reaction_is_an_award_emoji_on_the_note(
    fake: FakeGitLab, forge: GitLabForge, reaction: Reaction, name: str
) -> None:
    note = fake.add_note(PROJECT, 7, "/recheck", author="carol")
    run(forge, lambda: forge.add_reaction(REPO, 7, str(note["id"]), reaction))
    assert fake.calls_summary() == [f"POST {NOTES}/{note['id']}/award_emoji 201"]
    assert fake.calls[0].json == {"name": name}
    assert [(a["name"], a["user"]["username"]) for a in fake.awards(PROJECT, 7, note["id"])] == [
        (name, "ichor-bot")
    ]


def test_a_reaction_given_before_or_lost_on_the_way_back_is_done(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    note = fake.add_note(PROJECT, 7, "/recheck")
    award = rf"{NOTES}/{note['id']}/award_emoji"
    fake.inject("POST", award, status=502, after=True)  # it lands; its answer does not

    def body() -> None:
        forge.add_reaction(REPO, 7, str(note["id"]), "eyes")
        forge.add_reaction(REPO, 7, str(note["id"]), "eyes")  # a job run again

    run(forge, body)
    assert fake.calls_summary() == [f"POST {award} 502", f"POST {award} 404", f"POST {award} 404"]
    assert len(sleeps) == 1
    assert [a["name"] for a in fake.awards(PROJECT, 7, note["id"])] == ["eyes"]


def test_a_reaction_on_a_missing_or_malformed_note_fails(
    fake: FakeGitLab, forge: GitLabForge
) -> None:
    with pytest.raises(ForgeStatusError) as missing:
        run(forge, lambda: forge.add_reaction(REPO, 7, "999", "eyes"))
    assert missing.value.status == 404
    fresh = GitLabForge(url=fake.url, token=fake.token, timeout=5)
    with pytest.raises(PermanentForgeError, match="not a note id"):
        run(fresh, lambda: fresh.add_reaction(REPO, 7, "note_1", "eyes"))
    assert len(fake.calls) == 1


# -- replies --------------------------------------------------------------------------------


def test_a_reply_is_a_new_note_and_returns_its_url(fake: FakeGitLab, forge: GitLabForge) -> None:
    fake.add_note(PROJECT, 7, "/help")

    def body() -> list[str]:
        return [forge.post_comment(REPO, 7, "Commands: …") for _ in range(2)]

    urls = run(forge, body)
    notes = [n for n in fake.notes(PROJECT, 7) if n["author"]["username"] == "ichor-bot"]
    assert [n["body"] for n in notes] == ["Commands: …"] * 2  # never an edit
    assert urls == [note_url(fake, n["id"]) for n in notes]
    assert fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"POST {NOTES} 201",
        f"POST {NOTES} 201",
    ]
    assert fake.calls[1].json == {"body": "Commands: …"}


def test_a_reply_whose_answer_was_lost_is_not_posted_twice(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    fake.add_note(PROJECT, 7, "/help")
    fake.inject("POST", NOTES, status=502, after=True)
    url = run(forge, lambda: forge.post_comment(REPO, 7, "Commands: …"))
    ours = [n for n in fake.notes(PROJECT, 7) if n["author"]["username"] == "ichor-bot"]
    assert [n["body"] for n in ours] == ["Commands: …"]
    assert url == note_url(fake, ours[0]["id"])
    assert fake.calls_summary()[1:] == [f"POST {NOTES} 502", f"GET {NOTES} 200"]
    assert fake.calls[2].query == {"sort": "desc", "order_by": "created_at", "per_page": "20"}


def test_a_retry_still_answers_a_repeated_command(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    # The same reply as before, to a newer command: the retry finds the command newest.
    fake.add_note(PROJECT, 7, "/help")
    run(forge, lambda: forge.post_comment(REPO, 7, "Commands: …"))
    fake.add_note(PROJECT, 7, "/help")
    fake.inject("POST", NOTES, status=502)  # refused before it lands
    again = GitLabForge(url=fake.url, token=fake.token, sleep=sleeps, timeout=5)
    run(again, lambda: again.post_comment(REPO, 7, "Commands: …"))
    bodies = [n["body"] for n in fake.notes(PROJECT, 7)]
    assert bodies == ["/help", "Commands: …", "/help", "Commands: …"]


def test_a_reply_runs_no_gitlab_quick_action(fake: FakeGitLab, forge: GitLabForge) -> None:
    body = "Try:\n/approve\n  /recheck\n```\n/approve cancel\n```\n/merge"
    run(forge, lambda: forge.post_comment(REPO, 7, body))
    sent = fake.notes(PROJECT, 7)[-1]["body"]
    assert sent == "Try:\n\\/approve\n  /recheck\n```\n/approve cancel\n```\n\\/merge"


# -- notes read back ------------------------------------------------------------------------


def test_comments_are_every_page_oldest_first_without_system_notes(
    fake: FakeGitLab, forge: GitLabForge
) -> None:
    for i in range(130):
        fake.add_note(PROJECT, 7, f"note {i}", author="carol")
    fake.add_note(PROJECT, 7, "changed the description", system=True)
    comments = run(forge, lambda: forge.list_comments(REPO, 7))
    assert [c.body for c in comments] == [f"note {i}" for i in range(130)]
    assert fake.calls_summary() == [f"GET {NOTES} 200", f"GET {NOTES} 200"]
    assert fake.calls[0].query == {"per_page": "100", "sort": "asc", "order_by": "created_at"}
    assert fake.calls[1].query["page"] == "2"
    first = fake.notes(PROJECT, 7)[0]
    assert comments[0].id == str(first["id"])
    assert comments[0].author == "carol"
    assert comments[0].url == note_url(fake, first["id"])
    assert not any(c.edited or c.author_is_bot for c in comments)


def test_edits_and_bots_are_told_apart(fake: FakeGitLab, forge: GitLabForge) -> None:
    token_user = fake.add_token_user(PROJECT)
    person = fake.add_note(PROJECT, 7, "/approve", author="carol")
    fake.add_note(PROJECT, 7, "deployed", author=token_user)
    thread = fake.add_discussion(PROJECT, 7, "why?", author="dave")
    fake.resolve_discussion(PROJECT, 7, thread["id"])  # moves updated_at: no edit
    fake.edit_note(PROJECT, 7, person["id"], "/approve cancel")

    def body() -> Any:
        forge.post_comment(REPO, 7, "Approved")
        return forge.list_comments(REPO, 7)

    comments = run(forge, body)
    assert [(c.author, c.body, c.edited, c.author_is_bot) for c in comments] == [
        ("carol", "/approve cancel", True, False),
        (token_user, "deployed", False, True),
        ("dave", "why?", False, False),
        ("ichor-bot", "Approved", False, False),  # the bot itself is told by its login
    ]


# -- the merge request ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gitlab_state", "state"),
    [("opened", "open"), ("locked", "open"), ("closed", "closed"), ("merged", "merged")],
)
def test_a_merge_request_names_its_author_and_state(
    fake: FakeGitLab, forge: GitLabForge, gitlab_state: str, state: str
) -> None:
    fake.add_merge_request(PROJECT, 8, SHA, BASE, author="erin", state=gitlab_state)
    ref = run(forge, lambda: forge.get_pull_request(REPO, 8))
    assert (ref.number, ref.author, ref.state, ref.head_sha, ref.base_sha) == (
        8,
        "erin",
        state,
        SHA,
        BASE,
    )
    assert fake.calls_summary() == [f"GET {API}/merge_requests/8 200"]


# -- permissions that cannot be read --------------------------------------------------------


def test_a_member_lookup_failing_with_5xx_raises_after_the_retries(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    user = fake.add_member(PROJECT, "carol", 40)
    fake.fail_member_lookups(503)
    with pytest.raises(TransientForgeError, match=f"GitLab GET {API}/members/all/{user}: 503"):
        run(forge, lambda: forge.permission(REPO, "carol"))
    assert len(sleeps) == 4
    assert fake.calls_summary().count(f"GET {API}/members/all/{user} 503") == 5


def test_a_member_lookup_refused_with_403_raises_at_once(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    fake.add_member(PROJECT, "carol", 40)
    fake.fail_member_lookups(403)
    with pytest.raises(ForgeStatusError) as caught:
        run(forge, lambda: forge.permission(REPO, "carol"))
    assert caught.value.status == 403
    assert sleeps == []


def test_a_project_the_token_cannot_see_is_no_answer(fake: FakeGitLab, forge: GitLabForge) -> None:
    fake.add_member(PROJECT, "carol", 40)
    hidden = RepoRef(forge=ForgeKind.GITLAB, full_name="other/project", clone_url="unused")
    with pytest.raises(ForgeStatusError, match="Project Not Found") as caught:
        run(forge, lambda: forge.permission(hidden, "carol"))
    assert caught.value.status == 404


def test_no_username_asks_nothing(fake: FakeGitLab, forge: GitLabForge) -> None:
    assert run(forge, lambda: forge.permission(REPO, "")) is Permission.NONE
    assert fake.calls == []


# -- secrecy --------------------------------------------------------------------------------

CALLS: dict[str, Callable[[GitLabForge], Any]] = {
    "bot_login": lambda f: f.bot_login(REPO),
    "add_reaction": lambda f: f.add_reaction(REPO, 7, "1", "eyes"),
    "post_comment": lambda f: f.post_comment(REPO, 7, "hello"),
    "list_comments": lambda f: f.list_comments(REPO, 7),
    "get_pull_request": lambda f: f.get_pull_request(REPO, 7),
    "permission": lambda f: f.permission(REPO, "carol"),
}


@pytest.mark.parametrize("status", [403, 502])
@pytest.mark.parametrize("method", sorted(CALLS))
def test_the_token_is_never_in_an_error(
    fake: FakeGitLab,
    forge: GitLabForge,
    caplog: pytest.LogCaptureFixture,
    method: str,
    status: int,
) -> None:
    fake.add_member(PROJECT, "carol", 40)
    basic = base64.b64encode(f"oauth2:{fake.token}".encode()).decode()
    fake.inject(path=".*", status=status, body={"message": f"{fake.token} ({basic})"}, times=None)
    with caplog.at_level(logging.DEBUG, logger="ichor"), pytest.raises(ForgeError) as caught:
        run(forge, lambda: CALLS[method](forge))
    error = caught.value
    assert "<redacted>" in str(error)
    for text in (str(error), repr(error), caplog.text, repr(error.__cause__)):
        assert fake.token not in text and basic not in text


# -- GitLab's payloads ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("note", "edited"),
    [
        ({"created_at": "2024-01-01T10:00:00.000Z", "updated_at": "2024-01-01T10:00:00.000Z"}, 0),
        ({"created_at": "2024-01-01T10:00:00.000Z", "updated_at": "2024-01-01T10:05:00.000Z"}, 1),
        # Resolving the thread saved the note (updated_at a few ms from resolved_at): no edit.
        (
            {
                "created_at": "2024-01-01T10:00:00.000Z",
                "updated_at": "2024-01-01T11:00:00.004Z",
                "resolved_at": "2024-01-01T11:00:00.003Z",
            },
            0,
        ),
        (
            {
                "created_at": "2024-01-01T10:00:00.000Z",
                "updated_at": "2024-01-01T12:00:00.000Z",
                "resolved_at": "2024-01-01T11:00:00.000Z",
            },
            1,
        ),
        # Webhook shapes carry last_edited_at: it alone decides.
        (
            {
                "created_at": "2017-12-10 17:05:14 UTC",
                "updated_at": "2017-12-10 18:00:00 UTC",
                "last_edited_at": None,
            },
            0,
        ),
        ({"updated_at": "2017-12-10 18:00:00 UTC", "last_edited_at": "2017-12-10 18:00:00 UTC"}, 1),
        ({"created_at": "yesterday", "updated_at": "today"}, 1),
        ({}, 0),
    ],
)
def test_edited(note: dict[str, Any], edited: int) -> None:
    assert commands.edited(note) is bool(edited)


@pytest.mark.parametrize(
    ("author", "bot"),
    [
        ({"username": "carol"}, False),
        ({"username": "carol", "bot": True}, True),
        ({"username": "project_12_bot_0123456789abcdef0123456789abcdef"}, True),
        ({"username": "group_3_bot_0123456789abcdef"}, True),
        ({"username": "project_12_bot"}, True),
        ({"username": "project_12_bot2"}, True),
        ({"username": "service_account_group_3_abcdef"}, True),
        ({"username": "project_12_botany"}, False),
        ({"username": "my_project_12_bot"}, False),
        ({}, False),
    ],
)
def test_is_bot(author: dict[str, Any], bot: bool) -> None:
    assert commands.is_bot(author) is bot


def test_quick_actions_are_defused_outside_fences_only() -> None:
    body = "/help\n~~~\n/close\n~~~\n> /merge\ntext /merge\n```py\n/x\n```\n/ichor help"
    assert commands.defuse_quick_actions(body) == (
        "\\/help\n~~~\n/close\n~~~\n> /merge\ntext /merge\n```py\n/x\n```\n\\/ichor help"
    )
