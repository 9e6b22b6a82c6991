"""The fake GitLab: serves the endpoints the GitLab adapter uses, and really rejects what GitLab
rejects (repeated status transitions, bad states, stale diff positions, missing tokens)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakeforge import gitlab as fake_gitlab
from tests.fakeforge.gitlab import FakeGitLab
from tests.support.clock import ManualClock
from tests.support.gitrepo import WorkRepo

PROJECT = "group/gitops"
SHA = "a" * 40
BASE = "b" * 40
STATUSES = f"/api/v4/projects/1/statuses/{SHA}"
MR = "/api/v4/projects/1/merge_requests/7"


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    with FakeGitLab() as fake:
        fake.add_project(PROJECT, project_id=1)
        fake.add_merge_request(PROJECT, 7, head_sha=SHA, base_sha=BASE)
        yield fake


@pytest.fixture
def client(fake: FakeGitLab) -> Iterator[httpx.Client]:
    headers = {"PRIVATE-TOKEN": fake.token}
    with httpx.Client(base_url=fake.url, headers=headers, verify=False) as client:
        yield client


def post_status(client: httpx.Client, state: str, **extra: Any) -> httpx.Response:
    return client.post(STATUSES, json={"state": state, "name": "ichor/acceptance", **extra})


def position(head: str = SHA, base: str = BASE, **extra: Any) -> dict[str, Any]:
    return {
        "position_type": "text",
        "base_sha": base,
        "start_sha": base,
        "head_sha": head,
        "new_path": "a.yaml",
        "old_path": "a.yaml",
        "new_line": 3,
        **extra,
    }


def test_a_status_walks_pending_running_success_and_never_repeats(
    fake: FakeGitLab, client: httpx.Client
) -> None:
    answers = [
        post_status(client, state)
        for state in ("pending", "pending", "running", "running", "success", "success")
    ]
    assert [a.status_code for a in answers] == [201, 400, 201, 400, 201, 400]
    assert answers[1].json() == {
        "message": "Cannot transition status via :enqueue from :pending (Reason(s): Status "
        'cannot transition via "enqueue")'
    }
    assert (
        answers[3].json()["message"].startswith("Cannot transition status via :run from :running")
    )
    assert (
        answers[5]
        .json()["message"]
        .startswith("Cannot transition status via :success from :success")
    )
    [status] = fake.statuses(PROJECT, SHA)
    assert status["history"] == ["created", "pending", "running", "success"]
    assert status["status"] == "success" and status["finished_at"]
    # A refused transition is GitLab's answer to a client mistake, not a malformed request.
    assert fake.validation_errors == []


def test_running_directly_is_enqueued_then_run_and_pending_after_running_is_refused(
    fake: FakeGitLab, client: httpx.Client
) -> None:
    assert post_status(client, "running").status_code == 201
    refused = post_status(client, "pending")
    assert refused.status_code == 400
    assert "via :enqueue from :running" in refused.json()["message"]
    assert post_status(client, "failed", description="3 problems").status_code == 201
    # Another state after a finished status is a new status (a retried job), as in GitLab.
    assert post_status(client, "running").status_code == 201
    first, second = fake.statuses(PROJECT, SHA)
    assert first["history"] == ["created", "pending", "running", "failed"]
    assert first["description"] == "3 problems"
    assert second["history"] == ["created", "pending", "running"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"state": "error"}, "state does not have a valid value"),
        ({"state": "failure"}, "state does not have a valid value"),
        ({"name": "x"}, "state is missing"),
        ({"state": "success", "description": "d" * 256}, "description is too long"),
        ({"state": "success", "target_url": "javascript:alert(1)"}, "target_url is blocked"),
    ],
)
def test_bad_status_requests_are_400(
    fake: FakeGitLab, client: httpx.Client, body: dict[str, Any], message: str
) -> None:
    answer = client.post(STATUSES, json=body)
    assert answer.status_code == 400
    assert message in str(answer.json())
    assert len(fake.validation_errors) == 1 and message in fake.validation_errors[0]
    assert fake.statuses(PROJECT, SHA) == []


def test_a_position_must_name_the_latest_version(fake: FakeGitLab, client: httpx.Client) -> None:
    url = f"{MR}/discussions"
    fake.push_merge_request(PROJECT, 7, head_sha="c" * 40)
    stale = client.post(url, json={"body": "old", "position": position()})
    assert stale.status_code == 400
    assert "must be a valid line code" in stale.json()["message"]
    assert "head_sha" in fake.validation_errors[-1]
    missing = client.post(url, json={"body": "x", "position": position(head_sha=None)})
    assert missing.json() == {"error": "position[head_sha] is missing"}
    no_line = client.post(url, json={"body": "x", "position": position("c" * 40, new_line=None)})
    assert no_line.status_code == 400
    kind = client.post(url, json={"body": "x", "position": position("c" * 40, position_type="x")})
    assert kind.json() == {"error": "position[position_type] does not have a valid value"}
    assert [v["head_commit_sha"] for v in client.get(f"{MR}/versions").json()] == [
        "c" * 40,
        SHA,
    ]
    good = client.post(url, json={"body": "new", "position": position("c" * 40)})
    assert good.status_code == 201
    note = good.json()["notes"][0]
    assert note["type"] == "DiffNote" and note["resolvable"] and note["resolved"] is False
    assert note["position"]["new_line"] == 3
    # curl's form encoding, position[...] keys, is read too.
    form = {f"position[{k}]": str(v) for k, v in position("c" * 40).items()} | {"body": "f"}
    assert client.post(url, data=form).status_code == 201
    assert len(fake.discussions(PROJECT, 7)) == 2


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"PRIVATE-TOKEN": "glpat-wrong"}, 401),
        ({"Authorization": "Basic b2F1dGgyOng="}, 401),
        ("private", 200),
        ("bearer", 200),
    ],
)
def test_requests_need_the_token(fake: FakeGitLab, headers: Any, status: int) -> None:
    if headers == "private":
        headers = {"PRIVATE-TOKEN": fake.token}
    elif headers == "bearer":
        headers = {"Authorization": f"Bearer {fake.token}"}
    answer = httpx.get(f"{fake.url}/api/v4/user", headers=headers)
    assert answer.status_code == status
    if status == 401:
        assert answer.json() == {"message": "401 Unauthorized"}
        assert len(fake.auth_failures) == 1
    else:
        assert answer.json()["username"] == "ichor-bot"


def test_faults_fail_then_clear(
    fake: FakeGitLab, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    monkeypatch.setattr(fake_gitlab, "_now", clock)
    fake.inject("POST", r"/api/v4/projects/1/statuses/\w+", status=502, times=2)
    assert [post_status(client, "running").status_code for _ in range(3)] == [502, 502, 201]
    fake.inject_rate_limit("GET", r".*/notes", retry_after=7)
    limited = client.get(f"{MR}/notes")
    assert limited.status_code == 429 and limited.text == "Retry later\n"
    assert limited.headers["retry-after"] == "7"
    assert limited.headers["ratelimit-remaining"] == "0"
    assert int(limited.headers["ratelimit-reset"]) == clock.now + 7
    assert client.get(f"{MR}/notes").status_code == 200
    assert fake.calls_summary()[-1] == f"GET {MR}/notes 200"


def test_an_after_fault_applies_the_request_then_loses_the_answer(
    fake: FakeGitLab, client: httpx.Client
) -> None:
    fake.inject("POST", r".*/statuses/\w+", status=502, after=True)
    assert post_status(client, "running").status_code == 502
    assert fake.statuses(PROJECT, SHA)[0]["status"] == "running"  # it happened all the same
    assert post_status(client, "running").status_code == 400


def test_a_delay_fault_answers_late(fake: FakeGitLab, client: httpx.Client) -> None:
    fake.inject("GET", r"/api/v4/user", delay=0.3)
    start = time.monotonic()
    assert client.get("/api/v4/user").status_code == 200
    assert time.monotonic() - start >= 0.3


def test_pagination_follows_gitlab_headers(fake: FakeGitLab, client: httpx.Client) -> None:
    for i in range(45):
        fake.add_note(PROJECT, 7, f"note {i}")
    first = client.get(f"{MR}/notes", params={"sort": "asc"})
    assert len(first.json()) == 20
    assert first.headers["x-total"] == "45" and first.headers["x-total-pages"] == "3"
    assert first.headers["x-next-page"] == "2" and first.headers["x-prev-page"] == ""
    bodies, url = [], f"{MR}/notes?sort=asc&per_page=20"
    while url:
        page = client.get(url)
        bodies += [n["body"] for n in page.json()]
        url = page.links.get("next", {}).get("url", "")
    assert bodies == [f"note {i}" for i in range(45)]
    assert "sort=asc" in first.links["next"]["url"]
    newest = client.get(f"{MR}/notes", params={"per_page": 1}).json()
    assert newest[0]["body"] == "note 44"  # GitLab's default order: created_at desc


def test_bad_list_parameters_are_400(fake: FakeGitLab, client: httpx.Client) -> None:
    assert client.get(f"{MR}/notes", params={"sort": "up"}).json() == {
        "error": "sort does not have a valid value"
    }
    assert client.get("/api/v4/projects/1/merge_requests", params={"state": "open"}).json() == {
        "error": "state does not have a valid value"
    }
    assert client.get(f"{MR}/notes", params={"per_page": "x"}).status_code == 400
    assert len(fake.validation_errors) == 3


def test_unserved_routes_are_404_and_recorded(fake: FakeGitLab, client: httpx.Client) -> None:
    assert client.get("/api/v4/projects/1/issues").json() == {"error": "404 Not Found"}
    assert client.delete(f"{MR}/notes/1").status_code == 404
    assert client.get("/api/v4/projects/9/merge_requests/7").json() == {
        "message": "404 Project Not Found"
    }
    assert client.get("/api/v4/projects/1/merge_requests/x").json() == {"error": "iid is invalid"}
    assert len(fake.validation_errors) == 3  # the unknown project is an answer, not a mistake


def test_notes_discussions_and_members(fake: FakeGitLab, client: httpx.Client) -> None:
    theirs = fake.add_note(PROJECT, 7, "LGTM")
    assert client.put(f"{MR}/notes/{theirs['id']}", json={"body": "x"}).status_code == 403
    mine = client.post(f"{MR}/notes", json={"body": "summary"}).json()
    assert mine["author"]["id"] == fake.bot_user_id and mine["resolvable"] is False
    edited = client.put(f"{MR}/notes/{mine['id']}", json={"body": "summary 2"})
    assert edited.json()["body"] == "summary 2"
    assert client.post(f"{MR}/notes", json={}).json() == {"error": "body is missing"}
    # A plain note is its own discussion, and not resolvable.
    individual = [d for d in client.get(f"{MR}/discussions").json() if d["individual_note"]]
    assert len(individual) == 2
    assert client.put(f"{MR}/discussions/{individual[0]['id']}?resolved=true").status_code == 400
    thread = client.post(f"{MR}/discussions", json={"body": "b", "position": position()}).json()
    resolved = client.put(f"{MR}/discussions/{thread['id']}", params={"resolved": "true"}).json()
    assert resolved["notes"][0]["resolved_by"]["username"] == "ichor-bot"
    assert client.put(f"{MR}/discussions/{thread['id']}", json={}).json() == {
        "error": "resolved is missing"
    }
    user_id = fake.add_member(PROJECT, "dev", 30)
    [user] = client.get("/api/v4/users", params={"username": "DEV"}).json()
    assert user["id"] == user_id and user["username"] == "dev"
    member = client.get(f"/api/v4/projects/1/members/all/{user_id}").json()
    assert member["access_level"] == 30
    stranger = fake.add_user("stranger")
    assert client.get(f"/api/v4/projects/1/members/all/{stranger}").status_code == 404


def test_projects_are_found_by_encoded_path(fake: FakeGitLab, client: httpx.Client) -> None:
    answer = client.get("/api/v4/projects/group%2Fgitops/merge_requests/7")
    assert answer.status_code == 200
    assert answer.json()["web_url"] == f"{fake.url}/{PROJECT}/-/merge_requests/7"
    assert answer.json()["diff_refs"] == {"base_sha": BASE, "head_sha": SHA, "start_sha": BASE}


def test_git_over_http_serves_merge_request_heads_and_opens_mrs(tmp_path: Path) -> None:
    work = WorkRepo(tmp_path / "work")
    base = work.commit({"a.yaml": "a: 1\n"})
    work.checkout("feature", create_from="main")
    head = work.commit({"a.yaml": "a: 2\n"})
    with FakeGitLab(tmp_path / "forge") as fake:
        fake.add_project(PROJECT, project_id=1)
        fake.make_bare_repo(PROJECT, source=work.path)
        fake.add_merge_request(PROJECT, 1, head_sha=head, base_sha=base)
        env = {
            **os.environ,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0",
        }

        def ls_remote(*config: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                ["git", *config, "ls-remote", fake.clone_url(PROJECT)],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )

        header = fake.basic_auth_header(user="anything")  # GitLab takes any user name
        listed = ls_remote("-c", f"http.extraHeader={header}")
        assert listed.returncode == 0, listed.stderr
        assert f"{head}\trefs/merge-requests/1/head" in listed.stdout
        assert ls_remote().returncode != 0
        wrong = fake.basic_auth_header(token="glpat-nope")
        assert ls_remote("-c", f"http.extraHeader={wrong}").returncode != 0
        assert fake.calls == []  # git is not an API call

        with httpx.Client(base_url=fake.url, headers={"PRIVATE-TOKEN": fake.token}) as client:
            data = {"source_branch": "feature", "target_branch": "main", "title": "T"}
            created = client.post("/api/v4/projects/1/merge_requests", json=data)
            assert created.status_code == 409  # !1 is open from feature into main
            assert created.json() == {
                "message": ["Another open merge request already exists for this source branch: !1"]
            }
            fake.add_project("group/other", project_id=2)
            assert client.post("/api/v4/projects/2/merge_requests", json=data).status_code == 400
            listed_mrs = client.get(
                "/api/v4/projects/1/merge_requests",
                params={"state": "opened", "source_branch": "feature", "target_branch": "main"},
            ).json()
            assert [m["iid"] for m in listed_mrs] == [1]
            assert listed_mrs[0]["sha"] == head and "diff_refs" not in listed_mrs[0]
            missing = client.post(
                f"/api/v4/projects/1/statuses/{'0' * 40}", json={"state": "running"}
            )
            assert missing.json() == {"message": "404 Commit Not Found"}


def test_pushes_want_the_token_and_can_be_raced(tmp_path: Path) -> None:
    work = WorkRepo(tmp_path / "work")
    base = work.commit({"a.yaml": "a: 1\n"})
    other = work.commit({"a.yaml": "a: 2\n"})
    with FakeGitLab(tmp_path / "forge") as fake:
        fake.add_project(PROJECT, project_id=1)
        bare = fake.make_bare_repo(PROJECT)
        work.git("push", "-q", str(bare), f"{base}:refs/heads/main")
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        env["GIT_TERMINAL_PROMPT"] = "0"

        def push(refspec: str, *config: str) -> subprocess.CompletedProcess[str]:
            argv = ["git", "-C", str(work.path), *config, "push", "--porcelain"]
            argv += ["--force-with-lease=refs/heads/topic:", fake.clone_url(PROJECT), refspec]
            return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)

        assert push(f"{other}:refs/heads/topic").returncode != 0  # no token: not even asked
        refused = [r for r in fake.git.requests if r.query == "service=git-receive-pack"]
        assert refused and all(r.status == 401 and not r.authorized for r in refused)
        assert fake.git.posts("git-receive-pack") == []

        header = f"http.extraHeader={fake.basic_auth_header(user='oauth2')}"
        fake.before_push(lambda: fake.set_branch(PROJECT, "topic", base))  # someone else
        raced = push(f"{other}:refs/heads/topic", "-c", header)
        assert raced.returncode != 0 and "[remote rejected]" in raced.stdout
        assert work.git("--git-dir", str(bare), "rev-parse", "topic") == base
        assert len(fake.git.posts("git-receive-pack")) == 1

        with httpx.Client(base_url=fake.url, headers={"PRIVATE-TOKEN": fake.token}) as client:
            data = {"source_branch": "nope", "target_branch": "main", "title": "T"}
            missing = client.post("/api/v4/projects/1/merge_requests", json=data)
            assert missing.status_code == 400
            assert missing.json() == {"message": ["Source branch is invalid"]}
            data["source_branch"] = "topic"
            assert client.post("/api/v4/projects/1/merge_requests", json=data).status_code == 201
            data["description"] = "Fixes it.\n/merge\n"  # GitLab would merge it at once
            assert client.post("/api/v4/projects/1/merge_requests", json=data).status_code == 409
        assert fake.validation_errors == [
            "POST /api/v4/projects/1/merge_requests: the description runs GitLab's /merge quick "
            "action"
        ]
