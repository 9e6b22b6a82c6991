"""GiteaForge's comment-command calls against the fake Gitea and Forgejo over real HTTP: the bot's
login, reactions, replies, the comment listing (edits, the bot's own, pages), the pull request's
author and state, and permission lookups that fail without ever reading as a denial."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.errors import ForgeError, PermanentForgeError, TransientForgeError
from bot.forges.base import ForgeComment, Permission
from bot.forges.gitea.adapter import GiteaForge
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge.gitea import FakeGitea
from tests.forges.test_gitea import API, FULL, Driver, clean, repo, started


@pytest.fixture(params=["gitea", "forgejo"])
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitea]:
    with started(tmp_path, request.param) as fake:
        yield fake


# ---------------------------------------------------------------------------- the bot's login


def test_bot_login_is_the_tokens_user_asked_once(fake: FakeGitea) -> None:
    def scenario(forge: GiteaForge) -> list[str]:
        logins = [forge.bot_login(repo(fake)), forge.bot_login(repo(fake))]
        forge.list_comments(repo(fake), 7)  # the same answer tells the bot's comments
        return logins

    assert Driver(fake)(scenario) == ["ichor-bot", "ichor-bot"]
    assert fake.calls_summary() == ["GET /api/v1/user 200", f"GET {API}/issues/7/comments 200"]
    clean(fake)


def test_bot_login_needs_a_login_and_a_gitea_repository(fake: FakeGitea) -> None:
    fake.inject("GET", "/api/v1/user", status=200, body={"id": 3, "login": ""})
    with pytest.raises(PermanentForgeError, match="names no login"):
        Driver(fake)(lambda forge: forge.bot_login(repo(fake)))
    other = RepoRef(forge=ForgeKind.GITLAB, full_name=FULL)
    with pytest.raises(PermanentForgeError, match="gitlab repository, not Gitea"):
        Driver(fake)(lambda forge: forge.bot_login(other))
    assert len(fake.calls) == 1


# ---------------------------------------------------------------------------- reactions


def test_a_reaction_is_one_post_and_again_is_fine(fake: FakeGitea) -> None:
    command = fake.add_comment(FULL, 7, "/recheck", user="alice")

    def scenario(forge: GiteaForge) -> None:
        forge.add_reaction(repo(fake), 7, str(command["id"]), "eyes")
        forge.add_reaction(repo(fake), 7, str(command["id"]), "eyes")  # a job run again

    Driver(fake)(scenario)
    path = f"{API}/issues/comments/{command['id']}/reactions"
    assert fake.calls_summary() == [f"POST {path} 201", f"POST {path} 200"]
    assert [c.json for c in fake.calls] == [{"content": "eyes"}] * 2
    assert fake.reactions(FULL, command["id"]) == [{"content": "eyes", "user": "ichor-bot"}]
    clean(fake)


def test_a_reaction_to_no_comment_id_is_refused_before_any_request(fake: FakeGitea) -> None:
    with pytest.raises(PermanentForgeError, match="Gitea: '12a' is not an issue comment id"):
        Driver(fake)(lambda forge: forge.add_reaction(repo(fake), 7, "12a", "eyes"))
    with pytest.raises(PermanentForgeError, match="404"):
        Driver(fake)(lambda forge: forge.add_reaction(repo(fake), 7, "999", "eyes"))
    assert fake.calls_summary() == [f"POST {API}/issues/comments/999/reactions 404"]


# ---------------------------------------------------------------------------- replies


def test_a_reply_is_a_new_comment_every_time(fake: FakeGitea) -> None:
    def scenario(forge: GiteaForge) -> list[str | None]:
        return [forge.post_comment(repo(fake), 7, "Approved.") for _ in range(2)]

    urls = Driver(fake)(scenario)
    posted = fake.comments(FULL, 7)
    assert urls == [c["html_url"] for c in posted] and urls[0] != urls[1]
    assert [(c["user"]["login"], c["body"]) for c in posted] == [("ichor-bot", "Approved.")] * 2
    assert fake.calls_summary() == [f"POST {API}/issues/7/comments 201"] * 2
    assert [c.json for c in fake.calls] == [{"body": "Approved."}] * 2
    clean(fake)


def test_a_reply_whose_answer_was_lost_is_not_posted_twice(fake: FakeGitea) -> None:
    fake.add_comment(FULL, 7, "/help", user="alice")
    fake.inject("POST", f"{API}/issues/7/comments", delay=1.0)  # lands; the answer is too late
    url = Driver(fake, timeout=0.3)(lambda forge: forge.post_comment(repo(fake), 7, "Help."))
    reply = fake.comments(FULL, 7)[-1]
    assert [c["body"] for c in fake.comments(FULL, 7)] == ["/help", "Help."]
    assert url == reply["html_url"]
    assert fake.calls_summary() == [
        f"POST {API}/issues/7/comments 201",
        "GET /api/v1/user 200",
        f"GET {API}/issues/7/comments 200",
    ]


def test_a_reply_refused_with_a_5xx_is_posted_again(fake: FakeGitea) -> None:
    # The same words replied before are not taken for this reply: the command is newer.
    fake.add_comment(FULL, 7, "Help.", user=fake.bot_login)
    fake.add_comment(FULL, 7, "/help", user="alice")
    fake.inject("POST", f"{API}/issues/7/comments", status=502)
    run = Driver(fake)
    run(lambda forge: forge.post_comment(repo(fake), 7, "Help."))
    assert [c["body"] for c in fake.comments(FULL, 7)] == ["Help.", "/help", "Help."]
    assert fake.calls_summary() == [
        f"POST {API}/issues/7/comments 502",
        "GET /api/v1/user 200",
        f"GET {API}/issues/7/comments 200",
        f"POST {API}/issues/7/comments 201",
    ]
    assert len(run.slept) == 1


# ---------------------------------------------------------------------------- the listing


def test_comments_are_listed_page_by_page_oldest_first(fake: FakeGitea) -> None:
    fake.page_comments(2)  # Gitea itself answers at once: see the next test
    command = fake.add_comment(FULL, 7, "/approve", user="alice")
    reply = fake.add_comment(FULL, 7, "Approved <!-- ichor:approval v1 x -->", user="ichor-bot")
    other = fake.add_comment(FULL, 7, "Deployed.", user="deploy-bot")
    edited = fake.add_comment(FULL, 7, "/approve", user="bob")
    fake.edit_comment(edited["id"], "/approve cancel")
    last = fake.add_comment(FULL, 7, "thanks", user="alice")
    listed = Driver(fake)(lambda forge: forge.list_comments(repo(fake), 7))

    def url(c: dict[str, object]) -> str:
        return f"{fake.url}/{FULL}/pulls/7#issuecomment-{c['id']}"

    assert listed == [
        ForgeComment(str(command["id"]), "alice", "/approve", False, False, url(command)),
        ForgeComment(str(reply["id"]), "ichor-bot", reply["body"], True, False, url(reply)),
        # Gitea marks no account as a bot in a comment: only the bot's own count as a bot's.
        ForgeComment(str(other["id"]), "deploy-bot", "Deployed.", False, False, url(other)),
        ForgeComment(str(edited["id"]), "bob", "/approve cancel", False, True, url(edited)),
        ForgeComment(str(last["id"]), "alice", "thanks", False, False, url(last)),
    ]
    listings = [c for c in fake.calls if c.path == f"{API}/issues/7/comments"]
    assert [c.query for c in listings] == [{"limit": "50", "page": str(n)} for n in (1, 2, 3)]
    clean(fake)


def test_gitea_answers_every_comment_in_one_listing(fake: FakeGitea) -> None:
    for i in range(60):  # more than any page of Gitea's
        fake.add_comment(FULL, 7, f"c{i}", user="alice")
    listed = Driver(fake)(lambda forge: forge.list_comments(repo(fake), 7))
    assert [c.body for c in listed] == [f"c{i}" for i in range(60)]
    # Gitea ignores limit and page here; its X-Total-Count ends the listing at once.
    assert fake.calls_summary() == ["GET /api/v1/user 200", f"GET {API}/issues/7/comments 200"]
    clean(fake)


def test_a_pull_request_names_its_author_and_state(fake: FakeGitea) -> None:
    fake.add_pull(FULL, 8, head_sha="d" * 40, user="bob", state="closed")
    fake.add_pull(FULL, 9, head_sha="e" * 40, user="carol", state="merged")

    def scenario(forge: GiteaForge) -> list[tuple[str | None, str | None]]:
        pulls = [forge.get_pull_request(repo(fake), n) for n in (7, 8, 9)]
        return [(p.author, p.state) for p in pulls]

    assert Driver(fake)(scenario) == [("alice", "open"), ("bob", "closed"), ("carol", "merged")]
    clean(fake)


# ---------------------------------------------------------------------------- permissions


def test_a_permission_lookup_answering_5xx_raises_after_the_retries(fake: FakeGitea) -> None:
    fake.set_permission(FULL, "alice", "write")
    fake.fail_permission_reads(FULL, 503, times=None)
    run = Driver(fake)
    with pytest.raises(TransientForgeError, match=r"/collaborators/alice/permission: 503"):
        run(lambda forge: forge.permission(repo(fake), "alice"))  # never Permission.NONE
    path = f"{API}/collaborators/alice/permission"
    assert fake.calls_summary() == [f"GET {path} 503"] * 5 and len(run.slept) == 4
    fake.clear_faults()
    fake.fail_permission_reads(FULL, 500, times=2)
    assert run(lambda forge: forge.permission(repo(fake), "alice")) is Permission.WRITE


def test_a_permission_lookup_answering_403_says_to_make_the_bot_admin(fake: FakeGitea) -> None:
    fake.set_permission(FULL, "alice", "write")
    fake.fail_permission_reads(FULL, 403, user="alice")
    run = Driver(fake)
    with pytest.raises(PermanentForgeError) as caught:
        run(lambda forge: forge.permission(repo(fake), "alice"))
    text = str(caught.value)
    needs = "Gitea answers this endpoint only for a token with admin rights on the repository"
    assert needs in text
    assert "give the bot account admin access to the repository" in text
    assert "403" in text and fake.token not in text
    assert fake.calls_summary() == [f"GET {API}/collaborators/alice/permission 403"]
    assert run.slept == []


# ---------------------------------------------------------------------------- secrecy


def test_no_token_reaches_the_error_text_of_a_comment_command_call(fake: FakeGitea) -> None:
    echo = {"message": f"token {fake.token} refused"}
    command = fake.add_comment(FULL, 7, "/recheck", user="alice")
    fake.inject("GET", "/api/v1/user", status=500, body=echo, times=5)
    fake.inject("POST", f"{API}/issues/comments/{command['id']}/reactions", status=400, body=echo)
    fake.inject("POST", f"{API}/issues/7/comments", status=422, body=echo)
    fake.inject("GET", f"{API}/issues/8/comments", status=404, body=echo)
    fake.inject("GET", f"{API}/pulls/7", status=502, body=echo, times=None)
    fake.fail_permission_reads(FULL, 403, user="alice")
    fake.inject("GET", f"{API}/collaborators/bob/permission", status=503, body=echo, times=None)
    errors: list[ForgeError] = []

    def scenario(forge: GiteaForge) -> None:
        r = repo(fake)
        calls: list[Callable[[], object]] = [
            lambda: forge.bot_login(r),
            lambda: forge.add_reaction(r, 7, str(command["id"]), "eyes"),
            lambda: forge.post_comment(r, 7, "x"),
            lambda: forge.list_comments(r, 8),
            lambda: forge.get_pull_request(r, 7),
            lambda: forge.permission(r, "alice"),
            lambda: forge.permission(r, "bob"),
        ]
        for call in calls:
            try:
                call()
            except ForgeError as exc:
                errors.append(exc)

    Driver(fake)(scenario)
    assert len(errors) == 7
    for error in errors:
        assert fake.token not in str(error), error
    assert sum("<redacted>" in str(error) for error in errors) == 6  # the 403 is Gitea's own
