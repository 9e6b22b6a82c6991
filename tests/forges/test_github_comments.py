"""GitHubForge's comment-command calls against the fake GitHub over real HTTP: the bot's login,
replies, the comment listing, reactions, a pull request's author and state, check-run buttons
and the permission lookup, with the exact requests each makes and no credential in any error.

Every request is validated against GitHub's OpenAPI description by the fake.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from bot.errors import ForgeError, ForgeStatusError, PermanentForgeError, TransientForgeError
from bot.forges.base import CheckAction, CheckOutput, Conclusion, ForgeComment, Permission
from bot.forges.github.adapter import GitHubForge
from bot.forges.http.redaction import token_forms
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge import FakeGitHub
from tests.fakeforge.github import iso, new_private_key
from tests.support.together import together

T = TypeVar("T")
FULL = "octo/gitops"
REPO = RepoRef(
    forge=ForgeKind.GITHUB,
    full_name=FULL,
    clone_url="https://github.invalid/octo/gitops.git",
    installation_id=42,
)
HEAD, BASE = "1" * 40, "b" * 40
SECRET = "ghs_" + "S3cr3tT0ken" * 4  # every installation token the fake issues
TOKEN = "POST /app/installations/42/access_tokens 201"
COMMENTS = f"/repos/{FULL}/issues/7/comments"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token_factory=lambda: SECRET) as fake:  # the API alone: no git server
        fake.add_repo(FULL, installation_id=42)
        fake.add_pull(FULL, number=7, head_sha=HEAD, base_sha=BASE, user="octocat")
        yield fake
        assert fake.validation_errors == [], fake.validation_errors
        assert fake.response_errors == [], fake.response_errors


def run(
    fake: FakeGitHub,
    make: Callable[[GitHubForge], T],
    *,
    private_key_pem: str | None = None,
) -> T:
    """``make(forge)`` with a fresh forge (and so a fresh token), closed after."""

    def nap(seconds: float) -> None:
        pass

    def go() -> T:
        forge = GitHubForge(
            app_id=fake.app_id,
            private_key_pem=private_key_pem or fake.private_key_pem,
            api_url=fake.url,
            web_url=fake.web_url,
            sleep=nap,
        )
        try:
            return make(forge)
        finally:
            forge.close()

    return go()


def calls(fake: FakeGitHub, make: Callable[[GitHubForge], T]) -> list[str]:
    fake.reset_calls()
    run(fake, make)
    return fake.calls_summary()


def assert_no_credential(fake: FakeGitHub, error: BaseException) -> None:
    """No form of any token or JWT the fake saw is in ``error``'s text."""
    text = str(error)
    if isinstance(error, ForgeStatusError):
        text += error.message
    sent = {c.token for c in fake.calls if c.token} | set(fake.tokens) | {SECRET}
    for credential in sent:
        for form in token_forms(credential):
            assert form not in text, (form, text)


# ---------------------------------------------------------------------------- the bot's login


def test_bot_login_is_the_app_slug_asked_for_once_with_the_app_jwt() -> None:
    with FakeGitHub(app_slug="gate-keeper") as fake:

        def twice(forge: GitHubForge) -> list[str]:
            both = together(lambda: forge.bot_login(REPO), lambda: forge.bot_login(REPO))
            return [*both, forge.bot_login(REPO)]

        assert run(fake, twice) == ["gate-keeper[bot]"] * 3
        assert fake.calls_summary() == ["GET /app 200"]  # no installation token needed
        (call,) = fake.calls
        assert call.auth_scheme == "Bearer" and call.token and call.token.startswith("eyJ")
        assert fake.auth_failures == []


def test_a_refused_app_jwt_says_what_to_check_and_never_shows_the_jwt(
    fake: FakeGitHub,
) -> None:
    with pytest.raises(PermanentForgeError, match="ICHOR_GITHUB_PRIVATE_KEY") as refused:
        run(fake, lambda f: f.bot_login(REPO), private_key_pem=new_private_key())
    assert "GitHub GET /app: 401" in str(refused.value)
    assert fake.calls_summary() == ["GET /app 401"]  # a refused JWT is not retried
    assert_no_credential(fake, refused.value)


# ---------------------------------------------------------------------------- replies


def test_post_comment_posts_a_new_comment_every_time_and_returns_its_url(
    fake: FakeGitHub,
) -> None:
    def reply_twice(forge: GitHubForge) -> list[str | None]:
        return [forge.post_comment(REPO, 7, "Done.") for _ in range(2)]

    fake.reset_calls()
    urls = run(fake, reply_twice)
    assert fake.calls_summary() == [TOKEN, f"POST {COMMENTS} 201", f"POST {COMMENTS} 201"]
    assert [c.json for c in fake.calls[1:]] == [{"body": "Done."}] * 2
    posted = fake.comments(FULL, 7)
    assert [c["html_url"] for c in posted] == urls
    assert len(set(urls)) == 2  # a reply never edits an earlier one
    assert {c["user"]["login"] for c in posted} == {fake.bot_login}


def test_a_failed_reply_raises_without_the_token_in_its_text(fake: FakeGitHub) -> None:
    echo = {"message": f"token {SECRET} refused (Authorization: Bearer {SECRET})"}
    fake.inject("POST", COMMENTS, status=500, body=echo, times=None)
    with pytest.raises(TransientForgeError) as failed:
        run(fake, lambda f: f.post_comment(REPO, 7, "Done."))
    assert "<redacted>" in str(failed.value)
    assert_no_credential(fake, failed.value)


# ---------------------------------------------------------------------------- the listing


def test_list_comments_reads_every_page_oldest_first(fake: FakeGitHub) -> None:
    seeded = [fake.add_comment(FULL, 7, f"comment {n}")["id"] for n in range(205)]
    fake.reset_calls()
    listed = run(fake, lambda f: f.list_comments(REPO, 7))
    assert [c.id for c in listed] == [str(i) for i in seeded]
    assert [c.body for c in listed[:2]] == ["comment 0", "comment 1"]
    assert fake.calls_summary() == [TOKEN] + [f"GET {COMMENTS} 200"] * 3
    assert [c.query for c in fake.calls[1:]] == [
        {"per_page": "100"},
        {"per_page": "100", "page": "2"},
        {"per_page": "100", "page": "3"},
    ]


def test_list_comments_tells_edited_comments_and_bots(fake: FakeGitHub) -> None:
    plain = fake.add_comment(FULL, 7, "/approve", user="alice")
    edited = fake.add_comment(FULL, 7, "/recheck", user="bob")
    fake.edit_comment(edited["id"], "/approve")
    app = fake.add_comment(FULL, 7, "Bump yaml", user="dependabot[bot]")
    fake.mark_bot("renovate")
    typed = fake.add_comment(FULL, 7, "/approve", user="renovate")
    mine = fake.add_comment(FULL, 7, "<!-- ichor:approval v1 e30 -->", user=fake.bot_login)

    listed = run(fake, lambda f: f.list_comments(REPO, 7))

    def expected(c: dict[str, Any], body: str, *, bot: bool, edited: bool) -> ForgeComment:
        return ForgeComment(str(c["id"]), c["user"]["login"], body, bot, edited, c["html_url"])

    assert listed == [
        expected(plain, "/approve", bot=False, edited=False),
        expected(edited, "/approve", bot=False, edited=True),
        expected(app, "Bump yaml", bot=True, edited=False),
        expected(typed, "/approve", bot=True, edited=False),
        expected(mine, "<!-- ichor:approval v1 e30 -->", bot=True, edited=False),
    ]
    assert listed[-1].author == "ichor-bot[bot]"


def test_an_edit_over_the_api_shows_as_edited(fake: FakeGitHub) -> None:
    def upsert_twice(forge: GitHubForge) -> list[ForgeComment]:
        forge.upsert_summary_comment(REPO, 7, "first")
        first = forge.list_comments(REPO, 7)
        forge.upsert_summary_comment(REPO, 7, "second")
        return [*first, *forge.list_comments(REPO, 7)]

    before, after = run(fake, upsert_twice)
    assert (before.id, before.edited) == (after.id, False)
    assert after.edited and after.body.endswith("second")


# ---------------------------------------------------------------------------- reactions


def test_add_reaction_puts_eyes_on_the_comment_once(fake: FakeGitHub) -> None:
    command = fake.add_comment(FULL, 7, "/recheck")
    path = f"/repos/{FULL}/issues/comments/{command['id']}/reactions"

    def react_twice(forge: GitHubForge) -> None:
        forge.add_reaction(REPO, 7, str(command["id"]), "eyes")
        forge.add_reaction(REPO, 7, str(command["id"]), "eyes")  # a retried job

    fake.reset_calls()
    run(fake, react_twice)
    assert fake.calls_summary() == [TOKEN, f"POST {path} 201", f"POST {path} 200"]
    assert [c.json for c in fake.calls[1:]] == [{"content": "eyes"}] * 2
    (reaction,) = fake.reactions()
    assert (reaction["comment_id"], reaction["content"]) == (command["id"], "eyes")
    assert reaction["user"] == fake.bot_login


def test_a_reaction_on_something_that_is_no_comment_id_asks_nothing(fake: FakeGitHub) -> None:
    fake.reset_calls()
    with pytest.raises(PermanentForgeError, match="not an issue comment id"):
        run(fake, lambda f: f.add_reaction(REPO, 7, "../../pulls/7", "eyes"))
    assert fake.calls_summary() == [TOKEN]


# ---------------------------------------------------------------------------- pull requests


def test_get_pull_request_says_who_opened_it_and_its_state(fake: FakeGitHub) -> None:
    def get() -> tuple[str | None, str | None]:
        fake.reset_calls()
        ref = run(fake, lambda f: f.get_pull_request(REPO, 7))
        assert fake.calls_summary() == [TOKEN, f"GET /repos/{FULL}/pulls/7 200"]
        assert (ref.number, ref.head_sha, ref.base_sha) == (7, HEAD, BASE)
        return ref.author, ref.state

    assert get() == ("octocat", "open")
    fake.update_pull(FULL, 7, state="closed")
    assert get() == ("octocat", "closed")
    fake.update_pull(FULL, 7, merged_at=iso(1_700_000_000))
    assert get() == ("octocat", "merged")


# ---------------------------------------------------------------------------- check buttons


def output(*actions: CheckAction) -> CheckOutput:
    return CheckOutput(Conclusion.ACTION_REQUIRED, "Approval needed", "s", "t", actions=actions)


def finish(fake: FakeGitHub, out: CheckOutput) -> dict[str, Any]:
    """The PATCH that completed a new check run with ``out``; the run as the fake kept it."""

    def go(forge: GitHubForge) -> None:
        check = forge.start_check(REPO, HEAD, external_id="d1")
        forge.complete_check(REPO, check, out)

    fake.reset_calls()
    run(fake, go)
    (patch,) = [c for c in fake.calls if c.method == "PATCH"]
    (kept,) = fake.check_runs(FULL)[-1:]
    assert isinstance(patch.json, dict)
    return {"sent": patch.json, "kept": kept}


def test_check_actions_are_sent_within_githubs_limits(fake: FakeGitHub) -> None:
    buttons = (
        CheckAction("Recheck", "Check the current head again", "recheck"),
        CheckAction(
            "Approve these objects now", "Approve the new objects of strict targets", "approve"
        ),
        CheckAction(
            "Ignore these files", "Add them to the target's ignore file", "ignore-files-x" * 2
        ),
        CheckAction("Fourth", "GitHub takes three", "fourth"),
    )
    run_ = finish(fake, output(*buttons))
    expected = [
        {
            "label": "Recheck",
            "description": "Check the current head again",
            "identifier": "recheck",
        },
        {
            "label": "Approve these objec…",
            "description": "Approve the new objects of strict targe…",
            "identifier": "approve",
        },
        {
            "label": "Ignore these files",
            "description": "Add them to the target's ignore file",
            "identifier": "ignore-files-xignore",
        },
    ]
    assert run_["sent"]["actions"] == expected
    assert run_["kept"]["actions"] == expected
    assert run_["kept"]["conclusion"] == "action_required"


def test_no_actions_key_without_buttons(fake: FakeGitHub) -> None:
    run_ = finish(fake, output())
    assert "actions" not in run_["sent"]
    assert run_["kept"]["actions"] == []


# ---------------------------------------------------------------------------- permission


def permission(fake: FakeGitHub, user: str = "alice") -> Permission:
    return run(fake, lambda f: f.permission(REPO, user))


def test_permission_reads_the_role_and_404_is_none(fake: FakeGitHub) -> None:
    fake.set_permission(FULL, "alice", "maintain")
    fake.reset_calls()
    assert permission(fake) is Permission.MAINTAIN
    assert fake.calls_summary() == [TOKEN, f"GET /repos/{FULL}/collaborators/alice/permission 200"]
    fake.inject_permission_failure(404, user="mallory")
    assert permission(fake, "mallory") is Permission.NONE  # not a collaborator


def test_a_permission_lookup_failing_after_every_retry_raises(fake: FakeGitHub) -> None:
    fake.set_permission(FULL, "alice", "admin")
    echo = {"message": f"upstream said Bearer {SECRET}"}
    fake.inject_permission_failure(503, body=echo, times=None)
    fake.reset_calls()
    with pytest.raises(TransientForgeError, match="503") as failed:
        permission(fake)
    lookups = [c for c in fake.calls_summary() if "/permission" in c]
    assert lookups == [f"GET /repos/{FULL}/collaborators/alice/permission 503"] * 5
    assert_no_credential(fake, failed.value)


def test_a_refused_permission_lookup_raises_and_is_not_retried(fake: FakeGitHub) -> None:
    fake.set_permission(FULL, "alice", "admin")
    fake.inject_permission_failure(403, body={"message": f"no: {SECRET}"}, times=None)
    fake.reset_calls()
    with pytest.raises(ForgeStatusError) as refused:
        permission(fake)
    assert refused.value.status == 403
    assert fake.calls_summary() == [TOKEN, f"GET /repos/{FULL}/collaborators/alice/permission 403"]
    assert_no_credential(fake, refused.value)


def test_a_failed_permission_lookup_is_never_a_denial(fake: FakeGitHub) -> None:
    fake.inject_permission_failure(500, times=1)
    fake.set_permission(FULL, "alice", "write")
    assert permission(fake) is Permission.WRITE  # one 500, then the retry answers
    for status in (500, 502, 403, 422):
        fake.inject_permission_failure(status, times=None)
        with pytest.raises(ForgeError):
            permission(fake)
        fake.clear_faults()
