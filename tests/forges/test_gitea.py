"""GiteaForge against the fake Gitea and Forgejo over real HTTP: the exact requests, retries,
the one summary comment, line comments across pushes, permissions, pulls, git, secrecy."""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from bot.errors import PermanentForgeError, TransientForgeError
from bot.forges.base import (
    CheckHandle,
    CheckOutput,
    Conclusion,
    ForgeAdapter,
    LineCommentSync,
    LineFinding,
    Permission,
    PullRequestRef,
    finding_marker,
    marker_fingerprint,
)
from bot.forges.gitea.adapter import SUMMARY_MARKER, GiteaForge
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings
from tests.fakeforge.gitea import FakeGitea, Flavor
from tests.support.together import together

T = TypeVar("T")
FULL = "octo/gitops"
SHA = "a" * 40
SHA2 = "c" * 40
BASE = "b" * 40
API = f"/api/v1/repos/{FULL}"
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


@contextlib.contextmanager
def started(tmp_path: Path, flavor: Flavor) -> Iterator[FakeGitea]:
    with FakeGitea(tmp_path / "forge-git", flavor=flavor) as fake:
        fake.add_repo(FULL)
        fake.add_pull(FULL, 7, head_sha=SHA, base_sha=BASE)
        yield fake
        assert fake.response_errors == [], fake.response_errors


@pytest.fixture(params=["gitea", "forgejo"])
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitea]:
    with started(tmp_path, request.param) as fake:
        yield fake


@pytest.fixture
def gitea(tmp_path: Path) -> Iterator[FakeGitea]:
    with started(tmp_path, "gitea") as fake:
        yield fake


def repo(fake: FakeGitea) -> RepoRef:
    return RepoRef(forge=ForgeKind.GITEA, full_name=FULL, clone_url=fake.clone_url(FULL))


class Driver:
    """Runs adapter calls; sleeps are recorded, not slept."""

    def __init__(
        self, fake: FakeGitea, token: str | None = None, *, timeout: float | None = None
    ) -> None:
        self.fake = fake
        self.token = token or fake.token
        self.timeout = timeout  # None: the adapter's own client and timeouts
        self.slept: list[float] = []

    def __call__(self, body: Callable[[GiteaForge], T]) -> T:
        def sleep(seconds: float) -> None:
            self.slept.append(seconds)

        def main() -> T:
            client = None if self.timeout is None else httpx.Client(timeout=self.timeout)
            forge = GiteaForge(url=self.fake.url, token=self.token, client=client, sleep=sleep)
            try:
                return body(forge)
            finally:
                forge.close()
                if client is not None:
                    client.close()

        return main()


def clean(fake: FakeGitea) -> None:
    assert fake.validation_errors == [], fake.validation_errors
    assert fake.auth_failures == [], fake.auth_failures
    assert fake.unimplemented == [], fake.unimplemented


def test_the_adapter_is_a_forge() -> None:
    forge: ForgeAdapter = GiteaForge(url="https://git.example.test", token="t0ken")
    assert forge.name == "gitea"


# ---------------------------------------------------------------------------- statuses


def test_status_pending_then_each_verdict(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    verdicts = {
        "1" * 40: (Conclusion.SUCCESS, "success"),
        "2" * 40: (Conclusion.NEUTRAL, "success"),
        "3" * 40: (Conclusion.FAILURE, "failure"),
        "4" * 40: (Conclusion.ACTION_REQUIRED, "failure"),
        "5" * 40: (Conclusion.ERROR, "error"),
    }

    def scenario(forge: GiteaForge) -> None:
        for sha, (conclusion, _) in verdicts.items():
            check = forge.start_check(r, sha, external_id="job-1")
            assert check == CheckHandle(head_sha=sha)
            details = "https://ichor.example.test/jobs/1" if sha[0] == "1" else None
            output = CheckOutput(conclusion, "2 targets  accepted", "s", "t", details_url=details)
            forge.complete_check(r, check, output)

    run(scenario)
    expected = []
    for sha in verdicts:
        expected += [f"POST {API}/statuses/{sha} 201"] * 2
    assert fake.calls_summary() == expected
    assert all(c.auth_scheme == "token" for c in fake.calls)
    for sha, (_, state) in verdicts.items():
        pending, final = fake.statuses(FULL, sha)
        assert (pending["status"], pending["context"]) == ("pending", "ichor/acceptance")
        assert pending["target_url"] == ""
        assert (final["status"], final["context"]) == (state, "ichor/acceptance")
    final = {sha: fake.statuses(FULL, sha)[1] for sha in verdicts}
    assert final["1" * 40]["target_url"] == "https://ichor.example.test/jobs/1"
    assert final["1" * 40]["description"] == "2 targets accepted"  # one line
    assert final["5" * 40]["description"] == "Check could not be completed: 2 targets accepted"
    assert fake.calls[1].json == {
        "state": "success",
        "context": "ichor/acceptance",
        "description": "2 targets accepted",
        "target_url": "https://ichor.example.test/jobs/1",
    }
    clean(fake)


def test_a_job_run_again_does_not_post_its_status_twice(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    verdict = CheckOutput(Conclusion.SUCCESS, "1 target accepted", "s", "t")

    def first_run_then_retry(forge: GiteaForge) -> None:
        check = forge.start_check(r, SHA, external_id="job-1")
        forge.complete_check(r, check, verdict)  # ... and the worker died before it ended
        again = forge.start_check(r, SHA, external_id="job-1", resume=True)
        forge.complete_check(r, again, verdict)
        other = forge.start_check(r, SHA2, external_id="job-2", resume=True)  # nothing yet
        forge.complete_check(r, other, verdict)

    run(first_run_then_retry)
    assert [s["status"] for s in fake.statuses(FULL, SHA)] == ["pending", "success"]
    assert [s["status"] for s in fake.statuses(FULL, SHA2)] == ["pending", "success"]
    assert fake.calls_summary().count(f"GET {API}/statuses/{SHA} 200") == 1
    clean(fake)


def test_a_long_title_is_cut_to_one_short_line(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    output = CheckOutput(Conclusion.FAILURE, "x" * 500, "s", "t")
    run(lambda forge: forge.complete_check(r, CheckHandle(head_sha=SHA), output))
    description = fake.statuses(FULL, SHA)[0]["description"]
    assert len(description) == 140 and description.endswith("…")


def test_502_then_429_with_retry_after_are_retried(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    fake.inject("POST", f"{API}/statuses/.*", status=502)
    fake.inject("POST", f"{API}/statuses/.*", status=429, headers={"Retry-After": "2"})
    run(lambda forge: forge.start_check(r, SHA, external_id="j"))
    assert fake.calls_summary() == [
        f"POST {API}/statuses/{SHA} 502",
        f"POST {API}/statuses/{SHA} 429",
        f"POST {API}/statuses/{SHA} 201",
    ]
    assert 0.25 <= run.slept[0] <= 0.5  # backoff with jitter: 0.5 s, half of it random
    assert run.slept[1] == 2.0  # the server's Retry-After, exactly
    assert [s["status"] for s in fake.statuses(FULL, SHA)] == ["pending"]
    clean(fake)


def test_a_timeout_is_transient_and_retried(fake: FakeGitea) -> None:
    fake.inject("GET", f"{API}/pulls/7", delay=1.0)  # served, but after the client gave up
    run = Driver(fake, timeout=0.2)
    assert run(lambda forge: forge.get_pull_request(repo(fake), 7)).number == 7
    assert len(run.slept) == 1
    assert fake.calls_summary() == [f"GET {API}/pulls/7 200"] * 2


def test_persistent_5xx_ends_transient(fake: FakeGitea) -> None:
    fake.inject("GET", f"{API}/pulls/7", status=503, times=None)
    run = Driver(fake)
    with pytest.raises(TransientForgeError, match=r"GET /repos/octo/gitops/pulls/7: 503"):
        run(lambda forge: forge.get_pull_request(repo(fake), 7))
    assert len(fake.calls) == 5 and len(run.slept) == 4


def test_a_4xx_names_method_path_status_and_message(fake: FakeGitea) -> None:
    run = Driver(fake)
    with pytest.raises(PermanentForgeError) as caught:
        run(lambda forge: forge.get_pull_request(repo(fake), 99))
    assert str(caught.value) == (
        "Gitea GET /repos/octo/gitops/pulls/99: 404 Not Found: pull request does not exist"
    )
    assert run.slept == []


def test_retry_after_as_an_http_date(fake: FakeGitea) -> None:
    fake.inject(
        "GET",
        f"{API}/pulls/7",
        status=503,
        headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"},
    )
    run = Driver(fake)
    assert run(lambda forge: forge.get_pull_request(repo(fake), 7)).number == 7
    assert run.slept == [0.0]  # a date in the past: at once


def test_a_token_without_read_user_is_told_so(fake: FakeGitea) -> None:
    message = {"message": "token does not have at least one of required scope(s): [read:user]"}
    fake.inject("GET", "/api/v1/user", status=403, body=message)
    with pytest.raises(PermanentForgeError, match=r"needs the read:user scope"):
        Driver(fake)(lambda forge: forge.upsert_summary_comment(repo(fake), 7, "x"))
    assert fake.comments(FULL, 7) == []


def test_a_repository_of_another_forge_is_refused(fake: FakeGitea) -> None:
    other = RepoRef(forge=ForgeKind.GITHUB, full_name=FULL, clone_url="https://github.test/x.git")
    with pytest.raises(PermanentForgeError, match="github repository, not Gitea"):
        Driver(fake)(lambda forge: forge.git_credentials(other))
    assert fake.calls == []


# ---------------------------------------------------------------------------- secrecy


def test_the_token_never_reaches_an_error_text(fake: FakeGitea) -> None:
    echo = {"message": f"token {fake.token} is not allowed here"}
    fake.inject("GET", f"{API}/pulls/7", status=400, body=echo)
    fake.inject("GET", f"{API}/pulls/8", status=500, body=echo, times=None)
    run = Driver(fake)
    with pytest.raises(PermanentForgeError) as permanent:
        run(lambda forge: forge.get_pull_request(repo(fake), 7))
    with pytest.raises(TransientForgeError) as transient:
        run(lambda forge: forge.get_pull_request(repo(fake), 8))
    for error in (permanent.value, transient.value):
        assert fake.token not in str(error) and "<redacted>" in str(error)


def test_the_basic_forms_of_the_token_never_reach_an_error_text(fake: FakeGitea) -> None:
    # git sends the token as the Basic user name; a proxy echoing any of its forms is cut.
    forms = [
        base64.b64encode(f"{fake.token}:x-oauth-basic".encode()).decode(),
        base64.b64encode(f"{fake.token}:".encode()).decode(),
        base64.b64encode(f"{fake.token}:".encode()).decode().rstrip("="),
        base64.b64encode(f"x-access-token:{fake.token}".encode()).decode(),
    ]
    echo = {"message": "bad credentials: " + " / ".join(f"Basic {form}" for form in forms)}
    fake.inject("GET", f"{API}/pulls/7", status=400, body=echo)
    with pytest.raises(PermanentForgeError) as caught:
        Driver(fake)(lambda forge: forge.get_pull_request(repo(fake), 7))
    text = str(caught.value)
    assert all(form not in text for form in forms) and fake.token not in text
    assert text.count("<redacted>") == len(forms)


def test_a_refused_token_is_permanent_and_not_shown(fake: FakeGitea) -> None:
    wrong = "f" * 40
    with pytest.raises(PermanentForgeError) as caught:
        Driver(fake, token=wrong)(lambda forge: forge.get_pull_request(repo(fake), 7))
    assert "401" in str(caught.value) and "ICHOR_GITEA_TOKEN" in str(caught.value)
    assert wrong not in str(caught.value)
    assert fake.auth_failures == [f"GET {API}/pulls/7: unknown token"]


def test_from_settings_names_what_is_missing() -> None:
    with pytest.raises(PermanentForgeError, match="ICHOR_GITEA_URL"):
        GiteaForge.from_settings(Settings(gitea_token="t"))
    with pytest.raises(PermanentForgeError, match="ICHOR_GITEA_TOKEN"):
        GiteaForge.from_settings(Settings(gitea_url="https://git.example.test"))
    forge = GiteaForge.from_settings(
        Settings(gitea_url="https://git.example.test/", gitea_token="t")
    )
    assert forge._http.api == "https://git.example.test/api/v1"
    with pytest.raises(PermanentForgeError, match="without credentials"):
        GiteaForge(url="https://u:secret@git.example.test", token="t")


# ---------------------------------------------------------------------------- summary comment


def test_summary_comment_is_created_once_then_edited(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    fake.add_comment(FULL, 7, f"quoting {SUMMARY_MARKER} by hand", user="alice")

    def scenario(forge: GiteaForge) -> list[str | None]:
        urls = [forge.upsert_summary_comment(r, 7, f"result {i}") for i in range(3)]
        urls.append(forge.upsert_summary_comment(r, 7, "result 2"))  # unchanged
        return urls

    urls = run(scenario)
    comments_path = f"{API}/issues/7/comments"
    mine = fake.comments(FULL, 7)[1]
    edit = f"{API}/issues/comments/{mine['id']}"
    assert fake.calls_summary() == [
        "GET /api/v1/user 200",
        f"GET {comments_path} 200",
        f"POST {comments_path} 201",
        f"GET {comments_path} 200",
        f"PATCH {edit} 200",
        f"GET {comments_path} 200",
        f"PATCH {edit} 200",
        f"GET {comments_path} 200",
    ]
    assert len(fake.comments(FULL, 7)) == 2
    assert mine["body"] == f"{SUMMARY_MARKER}\nresult 2"
    assert fake.comments(FULL, 7)[0]["body"] == f"quoting {SUMMARY_MARKER} by hand"
    assert urls == [mine["html_url"]] * 4
    clean(fake)


def test_concurrent_upserts_post_one_comment(fake: FakeGitea) -> None:
    r = repo(fake)

    def scenario(forge: GiteaForge) -> None:
        together(*(lambda i=i: forge.upsert_summary_comment(r, 7, f"b{i}") for i in range(4)))

    Driver(fake)(scenario)
    assert len(fake.comments(FULL, 7)) == 1
    assert sum(c.method == "POST" for c in fake.calls) == 1


# ---------------------------------------------------------------------------- line comments


def finding(name: str, line: int) -> LineFinding:
    return LineFinding(
        fingerprint=f"fp{name}", path=f"clusters/{name}.yaml", line=line, body=f"**{name}**"
    )


def test_line_comments_across_three_pushes(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    gitea = fake.flavor == "gitea"
    one, two, three, four = finding("1", 3), finding("2", 5), finding("3", 8), finding("4", 9)
    # A person's review comment that quotes a marker is never ours to resolve.
    human = fake.add_review(FULL, 7, [("x.yaml", 1, f"see {finding_marker('fp2')}")])

    def scenario(forge: GiteaForge) -> list[LineCommentSync]:
        results = []
        kw: dict[str, Any] = {"head_sha": SHA, "base_sha": BASE}
        results.append(forge.sync_line_comments(r, 7, findings=[one, two, three], limit=2, **kw))
        kw["head_sha"] = SHA2
        fake.update_pull(FULL, 7, head_sha=SHA2)
        results.append(forge.sync_line_comments(r, 7, findings=[two, three, four], limit=2, **kw))
        results.append(forge.sync_line_comments(r, 7, findings=[one, three], limit=2, **kw))
        return results

    first, second, third = run(scenario)
    assert first == LineCommentSync(posted=2, resolved=0, unchanged=0, over_limit=1)
    assert second == LineCommentSync(posted=2, resolved=1 if gitea else 0, unchanged=1)
    assert third == LineCommentSync(posted=0, resolved=2 if gitea else 0, unchanged=2)

    reviews = [rv for rv in fake.reviews(FULL, 7) if rv["user"]["login"] == fake.bot_login]
    assert [rv["state"] for rv in reviews] == ["COMMENT", "COMMENT"]
    assert [rv["commit_id"] for rv in reviews] == [SHA, SHA2]
    comments = [c for rv in reviews for c in rv["comments"]]
    fingerprints = [marker_fingerprint(c["body"]) for c in comments]
    assert fingerprints == ["fp1", "fp2", "fp3", "fp4"]  # each once, never again
    assert comments[0]["body"] == f"**1**\n\n{finding_marker('fp1')}"
    assert [(c["path"], c["position"]) for c in comments] == [
        ("clusters/1.yaml", 3),
        ("clusters/2.yaml", 5),
        ("clusters/3.yaml", 8),
        ("clusters/4.yaml", 9),
    ]
    resolved = {marker_fingerprint(c["body"]): "resolver" in c for c in comments}
    # fp1 was resolved on the second push and reopened on the third, when it came back.
    assert resolved == {"fp1": False, "fp2": gitea, "fp3": False, "fp4": gitea}
    assert "resolver" not in fake.review_comments(FULL, 7)[0]  # the person's

    r1, r2 = reviews[0]["id"], reviews[1]["id"]
    c1, c2, _, c4 = (c["id"] for c in comments)
    reviews_path, human_id = f"{API}/pulls/7/reviews", human["id"]
    expected = [
        "GET /api/v1/user 200",
        f"GET {reviews_path} 200",
        f"POST {reviews_path} 200",
        # second push: fp4 is new, fp1 is gone
        f"GET {reviews_path} 200",
        f"GET {reviews_path}/{r1}/comments 200",
        f"POST {reviews_path} 200",
        f"POST {API}/pulls/comments/{c1}/resolve {204 if gitea else 404}",
        # third push: fp1 is back, fp2 and fp4 are gone
        f"GET {reviews_path} 200",
        f"GET {reviews_path}/{r1}/comments 200",
        f"GET {reviews_path}/{r2}/comments 200",
    ]
    if gitea:
        expected += [
            f"POST {API}/pulls/comments/{c1}/unresolve 204",
            f"POST {API}/pulls/comments/{c2}/resolve 204",
            f"POST {API}/pulls/comments/{c4}/resolve 204",
        ]
    assert fake.calls_summary() == expected
    assert all(f"/reviews/{human_id}/" not in c.path for c in fake.calls)
    # The second review holds only what was new: the limit counts per sync.
    assert [marker_fingerprint(c["body"]) for c in reviews[1]["comments"]] == ["fp3", "fp4"]
    post = next(c for c in fake.calls if c.method == "POST" and c.path == reviews_path)
    assert post.json["event"] == "COMMENT" and post.json["commit_id"] == SHA
    assert post.json["comments"][1] == {
        "path": "clusters/2.yaml",
        "body": f"**2**\n\n{finding_marker('fp2')}",
        "new_position": 5,
    }
    if gitea:
        clean(fake)
    else:  # Forgejo has no such route: the one probe is all, and it is a 404
        assert fake.validation_errors == [
            f"POST {API}/pulls/comments/{c1}/resolve: no path template of the description "
            f"matches /repos/{FULL}/pulls/comments/{c1}/resolve"
        ]


def test_a_comment_a_person_resolved_stays_resolved(gitea: FakeGitea) -> None:
    fake = gitea  # resolving over the API is Gitea's
    run, r = Driver(fake), repo(fake)
    kw: dict[str, Any] = {"head_sha": SHA, "base_sha": BASE, "limit": 5}
    run(lambda forge: forge.sync_line_comments(r, 7, findings=[finding("1", 3)], **kw))
    fake.resolve_review_comment(fake.review_comments(FULL, 7)[0]["id"], user="alice")
    fake.reset_calls()
    result = run(lambda forge: forge.sync_line_comments(r, 7, findings=[finding("1", 3)], **kw))
    assert result == LineCommentSync(unchanged=1)
    assert not any("resolve" in c.path for c in fake.calls)
    assert fake.review_comments(FULL, 7)[0]["resolver"]["login"] == "alice"


def test_limit_zero_posts_nothing_and_nothing_to_do_posts_nothing(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    kw: dict[str, Any] = {"head_sha": SHA, "base_sha": BASE}
    found = [finding("1", 3), finding("1", 3), finding("2", 4)]  # a duplicate counts once
    result = run(lambda forge: forge.sync_line_comments(r, 7, findings=found, limit=0, **kw))
    assert result == LineCommentSync(over_limit=2)
    result = run(lambda forge: forge.sync_line_comments(r, 7, findings=[], limit=3, **kw))
    assert result == LineCommentSync()
    assert fake.reviews(FULL, 7) == []
    assert [c.method for c in fake.calls] == ["GET", "GET", "GET", "GET"]  # user, reviews, x2
    clean(fake)


def test_a_lost_review_response_is_not_posted_twice(fake: FakeGitea) -> None:
    fake.inject("POST", f"{API}/pulls/7/reviews", delay=1.0)  # lands, answer comes too late
    found = [finding("1", 3), finding("2", 4)]
    result = Driver(fake, timeout=0.3)(
        lambda forge: forge.sync_line_comments(
            repo(fake), 7, head_sha=SHA, base_sha=BASE, findings=found, limit=5
        )
    )
    # The retry re-lists, finds both, posts nothing, and still reports them as posted.
    assert result == LineCommentSync(posted=2)
    assert len(fake.review_comments(FULL, 7)) == 2
    assert [c.method for c in fake.calls] == ["GET", "GET", "POST", "GET", "GET"]


def test_reviews_are_read_page_by_page(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    for i in range(55):  # more than Gitea's largest page
        fake.add_review(FULL, 7, [], user="alice", body=f"r{i}")
    kw: dict[str, Any] = {"head_sha": SHA, "base_sha": BASE, "limit": 5}
    run(lambda forge: forge.sync_line_comments(r, 7, findings=[finding("1", 3)], **kw))
    run(lambda forge: forge.sync_line_comments(r, 7, findings=[finding("1", 3)], **kw))
    pages = [
        c.query.get("page")
        for c in fake.calls
        if c.path == f"{API}/pulls/7/reviews" and c.method == "GET"
    ]
    assert pages == ["1", "2", "1", "2"]
    assert len(fake.review_comments(FULL, 7)) == 1
    clean(fake)


# ---------------------------------------------------------------------------- permissions


def test_permissions_map_to_levels(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    for user, level in (("alice", "write"), ("bob", "read"), ("carol", "admin"), ("dan", "none")):
        fake.set_permission(FULL, user, level)

    def scenario(forge: GiteaForge) -> list[Permission]:
        users = ("alice", "bob", "carol", "dan", "octo", "nobody")
        return [forge.permission(r, u) for u in users]

    assert run(scenario) == [
        Permission.WRITE,
        Permission.READ,
        Permission.ADMIN,
        Permission.NONE,
        Permission.ADMIN,  # the owner
        Permission.NONE,  # no such user: 404
    ]
    assert fake.calls_summary()[-1] == f"GET {API}/collaborators/nobody/permission 404"
    clean(fake)


def test_permission_403_says_the_token_needs_admin(
    fake: FakeGitea, caplog: pytest.LogCaptureFixture
) -> None:
    fake.set_permission(FULL, "alice", "write")
    fake.forbid_permission_reads(FULL)
    run = Driver(fake)
    with (
        caplog.at_level(logging.ERROR, logger="ichor.forge.gitea"),
        pytest.raises(PermanentForgeError) as caught,
    ):
        run(lambda forge: forge.permission(repo(fake), "alice"))
    text = str(caught.value)
    assert "403" in text and "needs admin rights on octo/gitops" in text
    assert "ICHOR_GITEA_TOKEN" in text and fake.token not in text
    assert "needs admin rights" in caplog.text
    assert fake.calls_summary() == [f"GET {API}/collaborators/alice/permission 403"]
    assert run.slept == []


# ---------------------------------------------------------------------------- pull requests


def test_pull_requests_get_find_and_open(fake: FakeGitea) -> None:
    run, r = Driver(fake), repo(fake)
    fake.add_pull(FULL, 8, head_sha="d" * 40, head_ref="ichor/x", state="closed")
    fake.add_pull(FULL, 9, head_sha="e" * 40, head_ref="ichor/x")
    fake.set_branch(FULL, "main", BASE)
    fake.set_branch(FULL, "ichor/new", "f" * 40)

    def scenario(forge: GiteaForge) -> list[PullRequestRef | None]:
        return [
            forge.get_pull_request(r, 7),
            forge.find_pull_request(r, "ichor/x", "main"),
            forge.find_pull_request(r, "nothing", "main"),
            forge.open_pull_request(r, head="ichor/new", base="main", title="T", body="B"),
            forge.open_pull_request(r, head="ichor/new", base="main", title="T", body="B"),
        ]

    got, found, missing, opened, again = run(scenario)
    assert got == PullRequestRef(
        7,
        f"{fake.url}/{FULL}/pulls/7",
        SHA,
        BASE,
        "main",
        author="alice",
        state="open",
        head_ref="feature",
        body="",
        title="A change",
    )
    # By base/head, Gitea names the old closed pull first: the open one comes from the list.
    assert found is not None and found.number == 9
    assert missing is None
    url = f"{fake.url}/{FULL}/pulls/10"
    assert opened == PullRequestRef(
        10,
        url,
        "f" * 40,
        BASE,
        "main",
        "ichor-bot",
        "open",
        head_ref="ichor/new",
        body="B",
        title="T",
    )
    assert again == opened
    assert fake.calls_summary() == [
        f"GET {API}/pulls/7 200",
        f"GET {API}/pulls/main/ichor%2Fx 200",
        f"GET {API}/pulls 200",
        f"GET {API}/pulls/main/nothing 404",
        f"POST {API}/pulls 201",
        f"POST {API}/pulls 409",
        f"GET {API}/pulls/main/ichor%2Fnew 200",
    ]
    assert [p["number"] for p in fake.pulls(FULL)] == [7, 8, 9, 10]
    clean(fake)


# ---------------------------------------------------------------------------- git


def git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, text=True, check=False
    )


def test_git_credentials_clone_over_http(fake: FakeGitea, tmp_path: Path) -> None:
    work = tmp_path / "work"
    git("init", "-q", "-b", "main", str(work))
    (work / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    fake.make_bare_repo(FULL, source=work)
    credentials = Driver(fake)(lambda forge: forge.git_credentials(repo(fake)))
    assert credentials.host == fake.url.removeprefix("http://")
    assert fake.token not in repr(credentials)
    scheme, _, value = credentials.header.partition(": ")[2].partition(" ")
    assert scheme == "Basic"
    assert base64.b64decode(value).decode() == f"{fake.token}:x-oauth-basic"
    url = fake.clone_url(FULL)
    ok = git(
        "-c", f"http.extraHeader={credentials.header}", "clone", "-q", url, str(tmp_path / "c")
    )
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "c" / "a.txt").read_text() == "a\n"
    anonymous = git("clone", "-q", url, str(tmp_path / "anon"))
    assert anonymous.returncode != 0
    assert {r.status for r in fake.git.requests} >= {200, 401}
    assert fake.calls == []  # git is not an API call
