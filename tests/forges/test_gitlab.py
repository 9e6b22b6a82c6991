"""GitLabForge against the fake GitLab over real HTTP (python-gitlab speaks requests): status
transitions, retries, the summary note, diff discussions, permissions, MRs, secrecy."""

from __future__ import annotations

import base64
import logging
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bot.errors import ForgeError, PermanentForgeError, TransientForgeError
from bot.forges.base import (
    SUMMARY_MARKER,
    CheckHandle,
    CheckOutput,
    Conclusion,
    ForgeAdapter,
    LineCommentSync,
    LineFinding,
    Permission,
    PullRequestRef,
    finding_marker,
)
from bot.forges.gitlab.adapter import GitLabForge
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings
from tests.fakeforge.gitlab import FakeGitLab
from tests.support.gitrepo import WorkRepo
from tests.support.together import together

T = TypeVar("T")
PROJECT = "group/gitops"
SHA = "a" * 40
BASE = "b" * 40
API = "/api/v4/projects/1"
STATUS = f"{API}/statuses/{SHA}"
MR = f"{API}/merge_requests/7"
REPO = RepoRef(forge=ForgeKind.GITLAB, full_name=PROJECT, clone_url="unused", id="1")
DETAILS = "https://ichor.example/jobs/1"


class Sleeps(list[float]):
    """An injected sleep that records the delays and returns at once."""

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
    """``body()``, closing the forge after."""

    def main() -> T:
        try:
            return body()
        finally:
            forge.close()

    return main()


def output(conclusion: Conclusion = Conclusion.SUCCESS, title: str = "All clear") -> CheckOutput:
    return CheckOutput(conclusion, title, "summary", "text", details_url=DETAILS)


def sent(fake: FakeGitLab) -> list[Any]:
    return [c.json for c in fake.calls]


def test_it_is_a_forge(forge: GitLabForge) -> None:
    protocol: ForgeAdapter = forge
    assert protocol.name == "gitlab"


def test_git_credentials_work_with_git_over_http(tmp_path: Path, sleeps: Sleeps) -> None:
    work = WorkRepo(tmp_path / "work")
    head = work.commit({"a.yaml": "a: 1\n"})
    with FakeGitLab(tmp_path / "forge") as fake:
        fake.add_project(PROJECT, project_id=1)
        fake.make_bare_repo(PROJECT, source=work.path)
        fake.add_merge_request(PROJECT, 3, head_sha=head, base_sha=head)
        forge = GitLabForge(url=fake.url, token=fake.token, sleep=sleeps)
        credentials = run(forge, lambda: forge.git_credentials(REPO))
        assert credentials.host == fake.url.removeprefix("http://")
        scheme, _, value = credentials.header.partition(": Basic ")
        assert scheme == "Authorization"
        assert base64.b64decode(value).decode() == f"oauth2:{fake.token}"
        assert fake.token not in repr(credentials)
        env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}
        listed = subprocess.run(
            [
                *("git", "-c", f"http.extraHeader={credentials.header}", "ls-remote"),
                *(fake.clone_url(PROJECT), "refs/merge-requests/3/head"),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.split() == [head, "refs/merge-requests/3/head"]
        assert fake.calls == []  # no API call needed for credentials


def test_status_transitions_are_never_repeated(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    def body() -> CheckHandle:
        check = forge.start_check(REPO, SHA, external_id="job-1")
        again = forge.start_check(REPO, SHA, external_id="job-1")  # a redelivery
        assert again == check
        forge.complete_check(REPO, check, output())
        forge.complete_check(REPO, check, output())
        return check

    assert run(forge, body) == CheckHandle(head_sha=SHA)
    assert fake.calls_summary() == [f"POST {STATUS} 201", f"POST {STATUS} 201"]
    assert sent(fake) == [
        {"state": "running", "name": "ichor/acceptance", "description": "Checking…"},
        {
            "state": "success",
            "name": "ichor/acceptance",
            "description": "All clear",
            "target_url": DETAILS,
        },
    ]
    [status] = fake.statuses(PROJECT, SHA)
    assert status["history"] == ["created", "pending", "running", "success"]
    assert sleeps == []


def test_a_status_another_process_set_counts_as_done(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    first = GitLabForge(url=fake.url, token=fake.token, sleep=sleeps)
    run(first, lambda: first.start_check(REPO, SHA, external_id="job-1"))

    def body() -> None:  # a restarted worker knows nothing of what was posted
        check = forge.start_check(REPO, SHA, external_id="job-1")
        forge.complete_check(REPO, check, output(Conclusion.FAILURE, "2 problems"))

    run(forge, body)
    assert fake.calls_summary() == [
        f"POST {STATUS} 201",
        f"POST {STATUS} 400",
        f"POST {STATUS} 201",
    ]
    assert "Cannot transition status via :run from :running" in str(fake.calls[1].response)
    [status] = fake.statuses(PROJECT, SHA)
    assert status["history"] == ["created", "pending", "running", "failed"]
    assert sleeps == []  # a refused repeat is an answer, not a failure to retry


def test_a_job_run_again_takes_up_the_status_an_earlier_run_ended(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    first = GitLabForge(url=fake.url, token=fake.token, sleep=sleeps)

    def first_run() -> None:  # ... and its worker died before the job was recorded
        check = first.start_check(REPO, SHA, external_id="job-1")
        first.complete_check(REPO, check, output())

    def retry() -> None:
        check = forge.start_check(REPO, SHA, external_id="job-1", resume=True)
        forge.complete_check(REPO, check, output())

    run(first, first_run)
    run(forge, retry)
    # Posting running again would have made GitLab start a second status for the commit.
    [status] = fake.statuses(PROJECT, SHA)
    assert status["history"] == ["created", "pending", "running", "success"]
    assert fake.calls_summary()[2:] == [f"GET {API}/repository/commits/{SHA}/statuses 200"]
    assert fake.validation_errors == []


def test_the_final_state_is_reached_through_a_502_and_a_429(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    fake.inject("POST", STATUS, status=502)
    fake.inject_rate_limit("POST", STATUS, retry_after=3)

    def body() -> None:
        check = forge.start_check(REPO, SHA, external_id="job-1")
        forge.complete_check(REPO, check, output())

    with caplog.at_level(logging.WARNING, logger="ichor.forge.gitlab"):
        run(forge, body)
    assert fake.calls_summary() == [
        f"POST {STATUS} 502",
        f"POST {STATUS} 429",
        f"POST {STATUS} 201",
        f"POST {STATUS} 201",
    ]
    # Ours are the only retries (python-gitlab's are off): one request per attempt, and the
    # 429 waits exactly what Retry-After says.
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and sleeps[1] == 3.0
    assert fake.statuses(PROJECT, SHA)[-1]["status"] == "success"
    first, second = (r.getMessage() for r in caplog.records)
    assert first.startswith(f"GitLab POST {STATUS}: 502 Bad Gateway") and "retrying in" in first
    assert f"POST {STATUS}: 429 Too Many Requests" in second and second.endswith("retrying in 3.0s")
    assert fake.token not in caplog.text


def test_a_rate_limit_reset_without_retry_after_is_waited_for(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    reset = str(int(time.time()) + 5)
    headers = {"RateLimit-Remaining": "0", "RateLimit-Reset": reset}
    fake.inject("POST", STATUS, status=429, headers=headers)
    run(forge, lambda: forge.start_check(REPO, SHA, external_id="job-1"))
    assert len(sleeps) == 1 and 3.5 <= sleeps[0] <= 5.0


def test_a_lost_answer_to_the_final_post_is_not_an_error(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    def body() -> None:
        check = forge.start_check(REPO, SHA, external_id="job-1")
        # GitLab applies the success, but the answer is lost: the retry is refused as a repeat.
        fake.inject("POST", STATUS, status=502, after=True)
        forge.complete_check(REPO, check, output())

    run(forge, body)
    assert fake.calls_summary() == [
        f"POST {STATUS} 201",
        f"POST {STATUS} 502",
        f"POST {STATUS} 400",
    ]
    [status] = fake.statuses(PROJECT, SHA)
    assert status["history"] == ["created", "pending", "running", "success"]
    assert len(sleeps) == 1


def test_persistent_5xx_gives_up_after_five_attempts_and_a_later_job_finishes(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    fake.inject("POST", STATUS, status=503, times=None)

    def body() -> None:
        with pytest.raises(TransientForgeError, match="503 Service Unavailable"):
            forge.start_check(REPO, SHA, external_id="job-1")
        fake.clear_faults()
        forge.complete_check(REPO, CheckHandle(SHA), output(Conclusion.ERROR, "git died"))

    run(forge, body)
    assert fake.calls_summary() == [f"POST {STATUS} 503"] * 5 + [f"POST {STATUS} 201"]
    assert len(sleeps) == 4
    [status] = fake.statuses(PROJECT, SHA)
    assert status["status"] == "failed"
    assert status["description"] == "Check could not be completed: git died"


@pytest.mark.parametrize(
    ("conclusion", "state", "description"),
    [
        (Conclusion.SUCCESS, "success", "Verdict"),
        (Conclusion.NEUTRAL, "success", "Verdict"),
        (Conclusion.FAILURE, "failed", "Verdict"),
        (Conclusion.ACTION_REQUIRED, "failed", "Verdict"),
        (Conclusion.ERROR, "failed", "Check could not be completed: Verdict"),
    ],
)
def test_conclusion_mapping(
    fake: FakeGitLab, forge: GitLabForge, conclusion: Conclusion, state: str, description: str
) -> None:
    run(forge, lambda: forge.complete_check(REPO, CheckHandle(SHA), output(conclusion, "Verdict")))
    [status] = fake.statuses(PROJECT, SHA)
    assert (status["status"], status["description"]) == (state, description)
    assert status["target_url"] == DETAILS


def test_long_descriptions_are_clipped_and_paths_name_the_project(
    fake: FakeGitLab, forge: GitLabForge
) -> None:
    by_path = RepoRef(forge=ForgeKind.GITLAB, full_name=PROJECT, clone_url="unused")
    title = "Many problems\nfound " + "x" * 300
    run(forge, lambda: forge.complete_check(by_path, CheckHandle(SHA), output(title=title)))
    assert fake.calls_summary() == [f"POST /api/v4/projects/group%2Fgitops/statuses/{SHA} 201"]
    description = fake.statuses(PROJECT, SHA)[0]["description"]
    assert len(description) == 255 and description.endswith("…")
    assert description.startswith("Many problems found xxx")


def test_the_summary_note_is_created_once_then_edited(fake: FakeGitLab, forge: GitLabForge) -> None:
    def body() -> list[str]:
        return [
            forge.upsert_summary_comment(REPO, 7, "first"),
            forge.upsert_summary_comment(REPO, 7, f"{SUMMARY_MARKER}\nsecond"),
            forge.upsert_summary_comment(REPO, 7, "second"),  # unchanged
        ]

    urls = run(forge, body)
    [note] = fake.notes(PROJECT, 7)
    assert urls == [f"{fake.url}/{PROJECT}/-/merge_requests/7#note_{note['id']}"] * 3
    assert note["body"] == f"{SUMMARY_MARKER}\nsecond"
    assert fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"GET {MR}/notes 200",
        f"POST {MR}/notes 201",
        f"GET {MR}/notes 200",
        f"PUT {MR}/notes/{note['id']} 200",
        f"GET {MR}/notes 200",
    ]
    assert fake.calls[1].query == {"per_page": "100", "sort": "asc", "order_by": "created_at"}


def test_the_summary_is_found_on_a_later_page_and_people_are_not_edited(
    fake: FakeGitLab, forge: GitLabForge
) -> None:
    quoted = fake.add_note(PROJECT, 7, f"Why does it say {SUMMARY_MARKER}?")
    fake.add_note(PROJECT, 7, f"{SUMMARY_MARKER} bot", author="ichor-bot", system=True)
    for i in range(110):
        fake.add_note(PROJECT, 7, f"chatter {i}")

    def body() -> None:
        forge.upsert_summary_comment(REPO, 7, "v1")
        forge.upsert_summary_comment(REPO, 7, "v2")

    run(forge, body)
    notes = fake.notes(PROJECT, 7)
    ours = [n for n in notes if n["author"]["id"] == fake.bot_user_id and not n["system"]]
    assert [n["body"] for n in ours] == [f"{SUMMARY_MARKER}\nv2"]
    assert next(n for n in notes if n["id"] == quoted["id"])["body"] == quoted["body"]
    assert fake.calls_summary()[1:] == [
        f"GET {MR}/notes 200",
        f"GET {MR}/notes 200",  # page 2 of 113
        f"POST {MR}/notes 201",
        f"GET {MR}/notes 200",
        f"GET {MR}/notes 200",
        f"PUT {MR}/notes/{ours[0]['id']} 200",
    ]


def finding(fingerprint: str, line: int) -> LineFinding:
    return LineFinding(fingerprint, "clusters/prod/app.yaml", line, f"Problem {fingerprint}")


def test_line_comments_over_three_pushes(fake: FakeGitLab, forge: GitLabForge) -> None:
    a, b, c = finding("aaa1", 3), finding("bbb2", 5), finding("ccc3", 8)

    def sync(*findings: LineFinding) -> LineCommentSync:
        return forge.sync_line_comments(
            REPO, 7, head_sha=SHA, base_sha=BASE, findings=findings, limit=2
        )

    def body() -> list[LineCommentSync]:
        first = sync(a, b, c)
        second = sync(b, c, b)  # a fixed (and b listed twice)
        third = sync(a, c)  # a is back, b fixed
        return [first, second, third]

    first, second, third = run(forge, body)
    assert first == LineCommentSync(posted=2, resolved=0, unchanged=0, over_limit=1)
    assert second == LineCommentSync(posted=1, resolved=1, unchanged=1, over_limit=0)
    assert third == LineCommentSync(posted=0, resolved=1, unchanged=2, over_limit=0)

    threads = fake.discussions(PROJECT, 7)
    by_body = {d["notes"][0]["body"]: d for d in threads}
    assert list(by_body) == [
        f"Problem {f.fingerprint}\n\n{finding_marker(f.fingerprint)}" for f in (a, b, c)
    ]
    ids = [d["id"] for d in threads]
    assert [d["notes"][0]["resolved"] for d in threads] == [False, True, False]
    assert threads[0]["notes"][0]["position"] == {
        "base_sha": BASE,
        "start_sha": BASE,
        "head_sha": SHA,
        "old_path": "clusters/prod/app.yaml",
        "new_path": "clusters/prod/app.yaml",
        "position_type": "text",
        "old_line": None,
        "new_line": 3,
        "line_range": None,
    }
    sync_calls = [f"GET {MR}/versions 200", f"GET {MR}/discussions 200"]
    assert fake.calls_summary() == [
        "GET /api/v4/user 200",
        *sync_calls,
        f"POST {MR}/discussions 201",
        f"POST {MR}/discussions 201",
        *sync_calls,
        f"POST {MR}/discussions 201",
        f"PUT {MR}/discussions/{ids[0]} 200",
        *sync_calls,
        f"PUT {MR}/discussions/{ids[0]} 200",
        f"PUT {MR}/discussions/{ids[1]} 200",
    ]
    puts = [c.json for c in fake.calls if c.method == "PUT"]
    assert puts == [{"resolved": True}, {"resolved": False}, {"resolved": True}]


def test_positions_come_from_the_latest_version_and_a_stale_head_does_nothing(
    fake: FakeGitLab, forge: GitLabForge
) -> None:
    head2, base2 = "c" * 40, "d" * 40
    fake.push_merge_request(PROJECT, 7, head_sha=head2, base_sha=base2)

    def body() -> tuple[LineCommentSync, LineCommentSync]:
        stale = forge.sync_line_comments(
            REPO, 7, head_sha=SHA, base_sha=BASE, findings=[finding("aaa1", 1)], limit=5
        )
        fresh = forge.sync_line_comments(
            REPO, 7, head_sha=head2, base_sha=base2, findings=[finding("aaa1", 1)], limit=5
        )
        return stale, fresh

    stale, fresh = run(forge, body)
    assert stale == LineCommentSync()
    assert fresh == LineCommentSync(posted=1)
    [thread] = fake.discussions(PROJECT, 7)
    position = thread["notes"][0]["position"]
    assert (position["base_sha"], position["start_sha"], position["head_sha"]) == (
        base2,
        base2,
        head2,
    )
    assert fake.calls_summary() == [
        "GET /api/v4/user 200",
        f"GET {MR}/versions 200",  # the stale sync stops here
        f"GET {MR}/versions 200",
        f"GET {MR}/discussions 200",
        f"POST {MR}/discussions 201",
    ]


def test_people_and_their_decisions_are_left_alone(fake: FakeGitLab, forge: GitLabForge) -> None:
    theirs = fake.add_discussion(PROJECT, 7, f"See {finding_marker('zzz9')}", author="alice")

    def sync(*findings: LineFinding) -> LineCommentSync:
        return forge.sync_line_comments(
            REPO, 7, head_sha=SHA, base_sha=BASE, findings=findings, limit=5
        )

    def body() -> LineCommentSync:
        sync(finding("aaa1", 1))
        [_, ours] = fake.discussions(PROJECT, 7)
        fake.resolve_discussion(PROJECT, 7, ours["id"], by="alice")  # "won't fix"
        return sync(finding("aaa1", 1))

    assert run(forge, body) == LineCommentSync(unchanged=1)
    threads = fake.discussions(PROJECT, 7)
    assert threads[0] == theirs  # not resolved although its marker is in no finding
    assert threads[1]["notes"][0]["resolved_by"]["username"] == "alice"  # not reopened
    assert all(c.method in ("GET", "POST") for c in fake.calls)


def test_a_refused_position_leaves_that_finding_for_the_summary(
    fake: FakeGitLab, forge: GitLabForge
) -> None:
    fake.inject("POST", f"{MR}/discussions", status=400, body={"message": "line_code invalid"})
    findings = [finding("aaa1", 1), finding("bbb2", 2)]
    result = run(
        forge,
        lambda: forge.sync_line_comments(
            REPO, 7, head_sha=SHA, base_sha=BASE, findings=findings, limit=5
        ),
    )
    assert result == LineCommentSync(posted=1, over_limit=1)
    [thread] = fake.discussions(PROJECT, 7)
    assert "bbb2" in thread["notes"][0]["body"]


def test_a_retry_half_way_neither_duplicates_nor_overruns_the_limit(
    fake: FakeGitLab, forge: GitLabForge, sleeps: Sleeps
) -> None:
    a, b, c = finding("aaa1", 1), finding("bbb2", 2), finding("ccc3", 3)

    def body() -> LineCommentSync:
        forge.sync_line_comments(REPO, 7, head_sha=SHA, base_sha=BASE, findings=[a], limit=1)
        fake.inject("PUT", rf"{MR}/discussions/\w+", status=502)
        return forge.sync_line_comments(
            REPO, 7, head_sha=SHA, base_sha=BASE, findings=[b, c], limit=1
        )

    result = run(forge, body)
    assert result == LineCommentSync(posted=1, resolved=1, unchanged=0, over_limit=1)
    assert len(fake.discussions(PROJECT, 7)) == 2
    assert fake.calls_summary()[4:] == [
        f"GET {MR}/versions 200",
        f"GET {MR}/discussions 200",
        f"POST {MR}/discussions 201",
        f"PUT {MR}/discussions/{fake.discussions(PROJECT, 7)[0]['id']} 502",
        f"GET {MR}/versions 200",
        f"GET {MR}/discussions 200",
        f"PUT {MR}/discussions/{fake.discussions(PROJECT, 7)[0]['id']} 200",
    ]
    assert len(sleeps) == 1


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        (5, Permission.NONE),
        (10, Permission.READ),
        (15, Permission.READ),
        (20, Permission.READ),
        (30, Permission.WRITE),
        (40, Permission.MAINTAIN),
        (50, Permission.ADMIN),
    ],
)
def test_permission_mapping(
    fake: FakeGitLab, forge: GitLabForge, level: int, expected: Permission
) -> None:
    user_id = fake.add_member(PROJECT, "dev", level)
    assert run(forge, lambda: forge.permission(REPO, "dev")) is expected
    assert fake.calls_summary() == [
        "GET /api/v4/users 200",
        f"GET {API}/members/all/{user_id} 200",
    ]
    assert fake.calls[0].query == {"username": "dev"}


def test_strangers_and_unknown_users_have_no_permission(
    fake: FakeGitLab, forge: GitLabForge
) -> None:
    stranger = fake.add_user("stranger")
    fake.add_member(PROJECT, "Dev", 50)

    def body() -> list[Permission]:
        return [
            forge.permission(REPO, "stranger"),
            forge.permission(REPO, "nobody"),
            forge.permission(REPO, "dev"),  # another account than "Dev"
        ]

    assert run(forge, body) == [Permission.NONE] * 3
    assert fake.calls_summary() == [
        "GET /api/v4/users 200",
        f"GET {API}/members/all/{stranger} 404",
        "GET /api/v4/users 200",
        "GET /api/v4/users 200",
    ]


def test_merge_requests(tmp_path: Path, sleeps: Sleeps) -> None:
    work = WorkRepo(tmp_path / "work")
    base = work.commit({"a.yaml": "a: 1\n"})
    work.checkout("ichor/fix", create_from="main")
    head = work.commit({"a.yaml": "a: 2\n"})
    with FakeGitLab(tmp_path / "forge") as fake:
        fake.add_project(PROJECT, project_id=1)
        fake.make_bare_repo(PROJECT, source=work.path)
        # A fork's MR from a namesake branch is not the project's own.
        fake.add_merge_request(PROJECT, 1, "e" * 40, base, "ichor/fix", "main", 99)
        forge = GitLabForge(url=fake.url, token=fake.token, sleep=sleeps)

        def body() -> list[PullRequestRef | None]:
            missing = forge.find_pull_request(REPO, "ichor/fix", "main")
            opened = forge.open_pull_request(
                REPO, head="ichor/fix", base="main", title="Fix", body="Why"
            )
            again = forge.open_pull_request(
                REPO, head="ichor/fix", base="main", title="Fix", body="Why"
            )
            found = forge.find_pull_request(REPO, "ichor/fix", "main")
            got = forge.get_pull_request(REPO, 2)
            return [missing, opened, again, found, got]

        missing, *refs = run(forge, body)
        assert missing is None
        expected = PullRequestRef(
            number=2,
            url=f"{fake.url}/{PROJECT}/-/merge_requests/2",
            head_sha=head,
            base_sha=base,
            base_ref="main",
            author=fake.bot_username,  # the token's user opened it
            state="open",
            head_ref="ichor/fix",
            body="Why",  # what tells the bot's own merge requests apart
            title="Fix",
        )
        assert refs == [expected] * 4
        mrs = f"{API}/merge_requests"
        assert fake.calls_summary() == [
            f"GET {mrs} 200",
            f"POST {mrs} 201",
            f"POST {mrs} 409",
            f"GET {mrs} 200",
            f"GET {mrs}/2 200",  # a listed MR has no diff_refs: read the one found
            f"GET {mrs} 200",
            f"GET {mrs}/2 200",
            f"GET {mrs}/2 200",
        ]
        assert fake.calls[1].json == {
            "source_branch": "ichor/fix",
            "target_branch": "main",
            "title": "Fix",
            "description": "Why",
        }
        assert fake.calls[0].query == {
            "state": "opened",
            "source_branch": "ichor/fix",
            "target_branch": "main",
        }
        assert sleeps == []
        assert fake.validation_errors == []


@pytest.mark.parametrize("status", [403, 404, 502])
def test_the_token_is_never_in_error_text_or_logs(
    fake: FakeGitLab,
    forge: GitLabForge,
    status: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    basic = base64.b64encode(f"oauth2:{fake.token}".encode()).decode()
    echo = {"message": f"token {fake.token} (or {basic}) refused"}
    fake.inject(path=".*", status=status, body=echo, times=None)
    with caplog.at_level(logging.DEBUG, logger="ichor"), pytest.raises(ForgeError) as caught:
        run(forge, lambda: forge.upsert_summary_comment(REPO, 7, "x"))
    error = caught.value
    assert isinstance(error, TransientForgeError if status == 502 else PermanentForgeError)
    assert str(error).startswith(f"GitLab GET /api/v4/user: {status} ")
    assert "<redacted>" in str(error)
    for text in (str(error), repr(error), caplog.text, repr(error.__cause__)):
        assert fake.token not in text and basic not in text


def test_a_refused_connection_is_transient_and_says_where(sleeps: Sleeps) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = "glpat-secret-secret-1"
    forge = GitLabForge(url=f"http://127.0.0.1:{port}", token=token, sleep=sleeps)
    with pytest.raises(TransientForgeError, match=f"GitLab POST {STATUS}: ConnectError") as e:
        run(forge, lambda: forge.start_check(REPO, SHA, external_id="x"))
    assert token not in str(e.value)
    assert len(sleeps) == 4


def test_a_repository_of_another_forge_is_refused(forge: GitLabForge) -> None:
    github = RepoRef(forge=ForgeKind.GITHUB, full_name=PROJECT, clone_url="unused")
    with pytest.raises(PermanentForgeError, match="not GitLab"):
        run(forge, lambda: forge.start_check(github, SHA, external_id="x"))


def test_from_settings_names_the_missing_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ICHOR_GITLAB_TOKEN", raising=False)
    with pytest.raises(PermanentForgeError, match="ICHOR_GITLAB_TOKEN"):
        GitLabForge.from_settings(Settings(gitlab_token=" "))
    forge = GitLabForge.from_settings(
        Settings(gitlab_token="glpat-x", gitlab_url="https://gitlab.example:8443/")
    )
    credentials = forge.git_credentials(REPO)
    assert credentials.host == "gitlab.example:8443"
    with pytest.raises(PermanentForgeError, match="http"):
        GitLabForge(url="gitlab.example", token="glpat-x")


def test_a_refused_token_points_at_the_setting(fake: FakeGitLab, sleeps: Sleeps) -> None:
    forge = GitLabForge(url=fake.url, token="glpat-revoked-token-00", sleep=sleeps)
    with pytest.raises(PermanentForgeError) as caught:
        run(forge, lambda: forge.start_check(REPO, SHA, external_id="x"))
    assert str(caught.value) == (
        f"GitLab POST {STATUS}: 401 Unauthorized: 401 Unauthorized "
        "(the token was refused: check ICHOR_GITLAB_TOKEN)"
    )
    assert sleeps == [] and len(fake.auth_failures) == 1


def test_locks_are_dropped_when_no_job_holds_them(fake: FakeGitLab, forge: GitLabForge) -> None:
    def body() -> None:
        shas = [f"{i:040x}" for i in range(1, 6)]
        together(
            *(lambda sha=sha: forge.start_check(REPO, sha, external_id="x") for sha in shas),
            lambda: forge.start_check(REPO, shas[0], external_id="x"),  # waits, then skips
            lambda: forge.upsert_summary_comment(REPO, 7, "x"),
            lambda: forge.upsert_summary_comment(REPO, 7, "x"),
        )
        assert len(forge._locks) == 0

    run(forge, body)
    posts = [c for c in fake.calls if c.method == "POST" and "/statuses/" in c.path]
    assert len(posts) == 5 and all(c.status == 201 for c in posts)
    assert len(fake.notes(PROJECT, 7)) == 1
