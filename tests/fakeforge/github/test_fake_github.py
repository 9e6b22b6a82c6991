"""The fake GitHub: serves the endpoints the bot uses, and really rejects what GitHub rejects."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from gidgethub import apps
from gidgethub.httpx import GitHubAPI

from tests.fakeforge import FakeGitHub, github, new_private_key
from tests.fakeforge.fixtures import fake_github  # noqa: F401 (the fixture)
from tests.fakeforge.openapi import load
from tests.support.clock import ManualClock

REPO = "octo/gitops"
SHA = "a" * 40
BASE_SHA = "b" * 40
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "true",
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def annotation(line: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "path": "clusters/prod/x.yaml",
        "start_line": line,
        "end_line": line,
        "annotation_level": "failure",
        "message": f"problem on line {line}",
        **extra,
    }


@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:  # noqa: F811
    fake_github.add_repo(REPO, installation_id=42)
    return fake_github


def api(fake: FakeGitHub, authorization: str | None = None) -> httpx.Client:
    """A client of the fake (plain HTTP: verify=False skips building a TLS context)."""
    headers = {"authorization": authorization} if authorization else {}
    return httpx.Client(base_url=fake.url, headers=headers, verify=False)


@pytest.fixture
def client(fake: FakeGitHub) -> Iterator[httpx.Client]:
    with api(fake, f"token {fake.issue_token(42)}") as c:
        yield c


def app_client(fake: FakeGitHub, jwt: str | None = None) -> httpx.Client:
    return api(fake, f"Bearer {jwt or fake.make_jwt()}")


# ---------------------------------------------------------------------------- happy paths


def test_token_then_create_and_patch_check_run(fake: FakeGitHub) -> None:
    with app_client(fake) as app:
        answer = app.post("/app/installations/42/access_tokens")
    assert answer.status_code == 201
    issued = answer.json()
    assert issued["repository_selection"] == "all"
    assert issued["token"] == fake.tokens[-1]
    assert issued["expires_at"].endswith("Z")
    with api(fake, f"Bearer {issued['token']}") as c:
        created = c.post(
            f"/repos/{REPO}/check-runs",
            json={"name": "ichor/acceptance", "head_sha": SHA, "status": "in_progress"},
        )
        assert created.status_code == 201
        run = created.json()
        assert (run["status"], run["conclusion"], run["head_sha"]) == ("in_progress", None, SHA)
        assert run["html_url"].endswith(f"/{REPO}/runs/{run['id']}")
        first = [annotation(i) for i in range(1, 51)]
        done = c.patch(
            f"/repos/{REPO}/check-runs/{run['id']}",
            json={
                "conclusion": "failure",
                "output": {"title": "Refused", "summary": "1 target", "annotations": first},
            },
        )
        assert done.status_code == 200
        assert (done.json()["status"], done.json()["conclusion"]) == ("completed", "failure")
        more = c.patch(
            f"/repos/{REPO}/check-runs/{run['id']}",
            json={"output": {"title": "Refused", "summary": "1 target", "annotations": first[:3]}},
        )
        assert more.json()["output"]["annotations_count"] == 53  # GitHub appends
        got = c.get(f"/repos/{REPO}/check-runs/{run['id']}").json()
        assert got["output"]["title"] == "Refused"
        page = c.get(f"/repos/{REPO}/check-runs/{run['id']}/annotations", params={"per_page": 50})
        assert len(page.json()) == 50
        assert 'rel="next"' in page.headers["link"]

    [state] = fake.check_runs(REPO)
    assert len(state["output"]["annotations"]) == 53
    assert state["output"]["annotations"][0]["blob_href"].endswith(f"/{SHA}/clusters/prod/x.yaml")
    assert fake.calls_summary() == [
        "POST /app/installations/42/access_tokens 201",
        "POST /repos/octo/gitops/check-runs 201",
        "PATCH /repos/octo/gitops/check-runs/1 200",
        "PATCH /repos/octo/gitops/check-runs/1 200",
        "GET /repos/octo/gitops/check-runs/1 200",
        "GET /repos/octo/gitops/check-runs/1/annotations 200",
    ]
    calls = fake.calls
    assert calls[0].auth_scheme == "Bearer" and (calls[0].token or "").count(".") == 2
    assert calls[1].token == issued["token"]
    assert calls[1].headers["authorization"] == "Bearer <redacted>"
    assert calls[1].json["name"] == "ichor/acceptance"
    assert fake.tokens_issued == 1
    fake.assert_clean()


def test_gidgethub_as_the_bot_uses_it(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, number=7, head_sha=SHA, base_sha=BASE_SHA, head_repo="fork/gitops")
    fake.set_permission(REPO, "alice", "maintain")

    async def run() -> dict[str, Any]:
        async with httpx.AsyncClient() as http:
            gh = GitHubAPI(http, "ichor-test", base_url=fake.url)
            token = await apps.get_installation_access_token(
                gh, installation_id="42", app_id=fake.app_id, private_key=fake.private_key_pem
            )
            tok = token["token"]
            pr = await gh.getitem(f"/repos/{REPO}/pulls/7", oauth_token=tok)
            comment = await gh.post(
                f"/repos/{REPO}/issues/7/comments",
                data={"body": "<!-- ichor -->hi"},
                oauth_token=tok,
            )
            await gh.patch(
                f"/repos/{REPO}/issues/comments/{comment['id']}",
                data={"body": "edited"},
                oauth_token=tok,
            )
            comments = [
                c async for c in gh.getiter(f"/repos/{REPO}/issues/7/comments", oauth_token=tok)
            ]
            perm = await gh.getitem(
                f"/repos/{REPO}/collaborators/alice/permission", oauth_token=tok
            )
            return {"pr": pr, "comments": comments, "perm": perm, "token": tok}

    got = asyncio.run(run())
    assert got["pr"]["head"]["sha"] == SHA and got["pr"]["base"]["sha"] == BASE_SHA
    assert got["pr"]["head"]["repo"]["full_name"] == "fork/gitops"
    assert got["pr"]["head"]["label"] == "fork:feature"
    assert [c["body"] for c in got["comments"]] == ["edited"]
    assert got["comments"][0]["user"]["login"] == fake.bot_login
    assert got["comments"][0]["user"]["type"] == "Bot"
    assert (got["perm"]["permission"], got["perm"]["role_name"]) == ("write", "maintain")
    assert got["perm"]["user"]["login"] == "alice"
    assert all(c.token == got["token"] for c in fake.calls[1:])
    fake.assert_clean()


def test_pull_filters_and_duplicate_creation(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.add_pull(REPO, number=7, head_sha=SHA, head_ref="ichor/ignore-x")
    fake.add_pull(REPO, number=8, head_sha=BASE_SHA, head_ref="other", state="closed")
    fake.add_pull(REPO, number=9, head_sha=SHA, head_ref="dev", base_ref="release")

    def numbers(**params: str) -> list[int]:
        answer = client.get(f"/repos/{REPO}/pulls", params=params)
        assert answer.status_code == 200
        return [p["number"] for p in answer.json()]

    assert numbers() == [9, 7]
    assert numbers(state="all") == [9, 8, 7]
    assert numbers(state="closed") == [8]
    assert numbers(head="octo:ichor/ignore-x", base="main") == [7]
    assert numbers(head="fork:ichor/ignore-x") == []
    assert numbers(head="ichor/ignore-x") == [9, 7]  # GitHub ignores a head without "owner:"
    assert numbers(base="release") == [9]

    dup = client.post(f"/repos/{REPO}/pulls", json={"head": "ichor/ignore-x", "base": "main"})
    assert dup.status_code == 422
    assert (
        dup.json()["errors"][0]["message"]
        == "A pull request already exists for octo:ichor/ignore-x."
    )
    fake.set_branch(REPO, "ichor/new", "c" * 40)
    fake.set_branch(REPO, "main", BASE_SHA)
    new = client.post(
        f"/repos/{REPO}/pulls", json={"head": "ichor/new", "base": "main", "title": "t"}
    )
    assert new.status_code == 201
    assert (new.json()["number"], new.json()["head"]["sha"]) == (10, "c" * 40)
    assert new.json()["base"]["sha"] == BASE_SHA
    assert client.get(f"/repos/{REPO}/pulls/10").json()["head"]["ref"] == "ichor/new"
    assert client.get(f"/repos/{REPO}/pulls/99").status_code == 404
    assert fake.validation_errors == []  # business 422s are not validation errors


def test_pagination_follows_github_link_headers(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.add_pull(REPO, number=1, head_sha=SHA)
    for i in range(5):
        fake.add_comment(REPO, 1, f"comment {i}", user="alice")
    bodies: list[str] = []
    url: str | None = f"/repos/{REPO}/issues/1/comments?per_page=2"
    while url:
        answer = client.get(url)
        bodies += [c["body"] for c in answer.json()]
        links = httpx.Response(200, headers={"link": answer.headers.get("link", "")}).links
        url = links.get("next", {}).get("url")
    assert bodies == [f"comment {i}" for i in range(5)]
    assert len(fake.calls) == 3


def test_permission_defaults_and_roles(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.add_repo("octo/public", installation_id=42, private=False)
    fake.set_permission(REPO, "triager", "triage")

    def perm(repo: str, user: str) -> tuple[str, str]:
        body = client.get(f"/repos/{repo}/collaborators/{user}/permission").json()
        return body["permission"], body["role_name"]

    assert perm(REPO, "triager") == ("read", "triage")
    assert perm(REPO, "stranger") == ("none", "none")
    assert perm("octo/public", "stranger") == ("read", "read")


# ---------------------------------------------------------------------------- review comments


def test_a_review_with_line_comments_then_an_edit(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.add_pull(REPO, number=7, head_sha=SHA, base_sha=BASE_SHA)
    fake.set_permission(REPO, "alice", "write")
    by_alice = fake.add_review_comment(REPO, 7, "looks odd", path="a.yaml", line=1)
    review = client.post(
        f"/repos/{REPO}/pulls/7/reviews",
        json={
            "commit_id": SHA,
            "event": "COMMENT",
            "body": "2 findings",
            "comments": [
                {"path": "a.yaml", "line": 3, "side": "RIGHT", "body": "one"},
                {"path": "b.yaml", "line": 9, "side": "RIGHT", "body": "two"},
            ],
        },
    )
    assert review.status_code == 200, review.text
    assert (review.json()["state"], review.json()["commit_id"]) == ("COMMENTED", SHA)
    assert review.json()["submitted_at"].endswith("Z")
    listed = client.get(f"/repos/{REPO}/pulls/7/comments", params={"per_page": 2})
    assert [c["body"] for c in listed.json()] == ["looks odd", "one"]
    assert 'rel="next"' in listed.headers["link"]
    one = listed.json()[1]
    assert (one["path"], one["line"], one["side"], one["commit_id"]) == ("a.yaml", 3, "RIGHT", SHA)
    assert one["pull_request_review_id"] == review.json()["id"]
    assert (one["user"]["login"], one["user"]["type"]) == (fake.bot_login, "Bot")
    assert one["html_url"].endswith(f"/{REPO}/pull/7#discussion_r{one['id']}")
    assert (by_alice["user"]["type"], by_alice["author_association"]) == ("User", "COLLABORATOR")

    edited = client.patch(f"/repos/{REPO}/pulls/comments/{one['id']}", json={"body": "fixed"})
    assert (edited.status_code, edited.json()["body"]) == (200, "fixed")
    single = client.post(
        f"/repos/{REPO}/pulls/7/comments",
        json={"body": "three", "commit_id": SHA, "path": "c.yaml", "line": 4, "side": "RIGHT"},
    )
    assert single.status_code == 201
    assert single.headers["location"].endswith(f"/pulls/comments/{single.json()['id']}")
    reply = client.post(
        f"/repos/{REPO}/pulls/7/comments",
        json={"body": "why?", "in_reply_to": by_alice["id"], "commit_id": SHA, "path": "x"},
    )
    assert (reply.json()["in_reply_to_id"], reply.json()["path"]) == (by_alice["id"], "a.yaml")
    assert [c["body"] for c in fake.review_comments(REPO, 7)] == [
        "looks odd",
        "fixed",
        "two",
        "three",
        "why?",
    ]
    assert [r["state"] for r in fake.reviews(REPO, 7)] == ["COMMENTED"] * 4
    assert client.patch(f"/repos/{REPO}/pulls/comments/999", json={"body": "x"}).status_code == 404
    assert client.get(f"/repos/{REPO}/pulls/8/comments").status_code == 404
    pending = client.post(
        f"/repos/{REPO}/pulls/7/reviews",
        json={"comments": [{"path": "a.yaml", "line": 5, "body": "draft"}]},
    )
    assert pending.json()["state"] == "PENDING" and "submitted_at" not in pending.json()
    assert len(client.get(f"/repos/{REPO}/pulls/7/comments").json()) == 5  # drafts are hidden
    fake.assert_clean()


def test_a_line_outside_the_diff_fails_the_whole_review(
    fake: FakeGitHub, client: httpx.Client
) -> None:
    fake.add_pull(REPO, number=7, head_sha=SHA)
    fake.set_diff_lines(REPO, 7, {"a.yaml": {1, 2, 3}})

    def comment(path: str, line: int) -> dict[str, Any]:
        return {"path": path, "line": line, "side": "RIGHT", "body": f"{path}:{line}"}

    review = client.post(
        f"/repos/{REPO}/pulls/7/reviews",
        json={
            "event": "COMMENT",
            "body": "b",
            "comments": [comment("a.yaml", 2), comment("a.yaml", 4)],
        },
    )
    assert review.status_code == 422
    assert review.json()["message"] == "Unprocessable Entity"
    assert "line must be part of the diff" in review.json()["errors"][0]
    assert fake.reviews(REPO) == [] and fake.review_comments(REPO) == []

    def single(path: str, line: int) -> httpx.Response:
        return client.post(
            f"/repos/{REPO}/pulls/7/comments", json={**comment(path, line), "commit_id": SHA}
        )

    assert single("a.yaml", 2).status_code == 201
    refused = single("b.yaml", 1)
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"] == "pull_request_review_thread.line"
    assert [c["body"] for c in fake.review_comments(REPO)] == ["a.yaml:2"]
    fake.assert_clean()  # like GitHub's duplicate-PR 422, these are not validation errors


# ---------------------------------------------------------------------------- rejections


def test_51_annotations_are_refused_and_recorded(fake: FakeGitHub, client: httpx.Client) -> None:
    answer = client.post(
        f"/repos/{REPO}/check-runs",
        json={
            "name": "ichor/acceptance",
            "head_sha": SHA,
            "output": {"title": "t", "summary": "s", "annotations": [annotation()] * 51},
        },
    )
    assert answer.status_code == 422
    body = answer.json()
    assert body["message"] == "Validation Failed"
    assert body["documentation_url"].startswith("https://docs.github.com/")
    assert body["errors"][0]["field"] == "output.annotations"
    assert fake.validation_errors == [
        "POST /repos/octo/gitops/check-runs: output.annotations: 51 items, at most 50 allowed"
    ]
    assert fake.check_runs(REPO) == []


def test_bad_conclusion_is_refused_and_the_run_kept(fake: FakeGitHub, client: httpx.Client) -> None:
    run = client.post(f"/repos/{REPO}/check-runs", json={"name": "n", "head_sha": SHA}).json()
    answer = client.patch(f"/repos/{REPO}/check-runs/{run['id']}", json={"conclusion": "error"})
    assert answer.status_code == 422
    [error] = fake.validation_errors
    assert "conclusion" in error and '"error" is not one of' in error
    assert fake.check_run(run["id"])["status"] == "queued"


@pytest.mark.parametrize(
    ("method", "path", "body", "needle"),
    [
        ("PATCH", "/check-runs/1", {"status": "completed"}, "anyOf"),  # the description's anyOf
        ("POST", "/check-runs", {"name": "n"}, "'head_sha' is a required property"),
        ("POST", "/check-runs", {"name": 5, "head_sha": SHA}, "is not of type"),
        (
            "POST",
            "/check-runs",
            {"name": "n", "head_sha": SHA, "status": "completed"},
            "required when",
        ),
        ("POST", "/check-runs", {"name": "n", "head_sha": SHA, "conclusion": "stale"}, "stale"),
        (
            "POST",
            "/check-runs",
            {"name": "n", "head_sha": SHA, "started_at": "yesterday"},
            "date-time",
        ),
        ("POST", "/check-runs", {"name": "n", "head_sha": SHA, "actions": [{}] * 4}, "at most 3"),
        (
            "POST",
            "/check-runs",
            {"name": "n", "head_sha": SHA, "output": {"title": "t", "summary": "x" * 65536}},
            "at most 65535",
        ),
        (
            "POST",
            "/check-runs",
            {
                "name": "n",
                "head_sha": SHA,
                "output": {
                    "title": "t",
                    "summary": "s",
                    "annotations": [annotation(start_column=1, end_line=2)],
                },
            },
            "columns",
        ),
        (
            "POST",
            "/check-runs",
            {
                "name": "n",
                "head_sha": SHA,
                "output": {
                    "title": "t",
                    "summary": "s",
                    "annotations": [{**annotation(), "annotation_level": "error"}],
                },
            },
            "annotation_level",
        ),
        ("POST", "/issues/1/comments", {}, "'body' is a required property"),
        ("POST", "/pulls", {"head": "x"}, "'base' is a required property"),
        ("POST", "/pulls/1/reviews", {"event": "SHIP_IT"}, "is not one of"),
        ("POST", "/pulls/1/reviews", {"event": "COMMENT"}, "body: required for a COMMENT"),
        (
            "POST",
            "/pulls/1/reviews",
            {"event": "COMMENT", "comments": [{"path": "a.yaml", "body": "x"}]},
            "comments.0.line: required",
        ),
        (
            "POST",
            "/pulls/1/reviews",
            {"comments": [{"path": "a.yaml", "body": "x", "line": 2, "side": "MIDDLE"}]},
            "comments.0.side",
        ),
        ("POST", "/pulls/1/comments", {"body": "x", "path": "a", "line": 1}, "'commit_id'"),
        (
            "POST",
            "/pulls/1/comments",
            {"body": "x", "commit_id": SHA, "path": "a", "line": 3, "start_line": 3},
            "must precede the end line",
        ),
        ("PATCH", "/pulls/comments/1", {}, "'body' is a required property"),
        (
            "POST",
            "/app/installations/42/access_tokens",
            {"permissions": {"checks": "all"}},
            "checks",
        ),
    ],
)
def test_bodies_that_break_the_description(
    fake: FakeGitHub, client: httpx.Client, method: str, path: str, body: Any, needle: str
) -> None:
    fake.add_pull(REPO, number=1, head_sha=SHA)
    client.post(f"/repos/{REPO}/check-runs", json={"name": "n", "head_sha": SHA})
    if path.startswith("/app/"):
        with app_client(fake) as app:
            answer = app.request(method, path, json=body)
    else:
        answer = client.request(method, f"/repos/{REPO}{path}", json=body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["message"] == "Validation Failed"
    [error] = fake.validation_errors
    assert needle in error


def test_unparseable_json_is_400(fake: FakeGitHub, client: httpx.Client) -> None:
    answer = client.post(f"/repos/{REPO}/check-runs", content=b"{nope")
    assert answer.status_code == 400
    assert answer.json()["message"] == "Problems parsing JSON"
    assert fake.validation_errors == [
        "POST /repos/octo/gitops/check-runs: request body is not JSON"
    ]


def test_unknown_routes_and_non_integer_ids_are_404(fake: FakeGitHub, client: httpx.Client) -> None:
    assert client.get(f"/repos/{REPO}/check-runz").status_code == 404
    assert client.delete(f"/repos/{REPO}/check-runs/1").status_code == 404
    assert client.get(f"/repos/{REPO}/check-runs/abc").status_code == 404
    assert client.get(f"/api/v3/repos/{REPO}/pulls").status_code == 404
    assert client.get(f"/repos/{REPO}/pulls", params={"state": "merged"}).status_code == 422
    assert client.get("/repos/octo/missing/pulls").status_code == 404  # not registered
    assert client.get(f"/repos/{REPO}/check-runs/5").status_code == 404  # no such run
    assert client.get(f"/repos/{REPO}/check-runz").json() == {
        "message": "Not Found",
        "documentation_url": "https://docs.github.com/rest",
        "status": "404",
    }
    errors = fake.validation_errors
    assert len(errors) == 6
    assert "no path template" in errors[0]
    assert "no DELETE operation" in errors[1]
    assert "check_run_id" in errors[2] and "integer" in errors[2]
    assert "/api/v3/" in errors[3]
    assert "state" in errors[4]


def test_described_but_unserved_operations_answer_501(
    fake: FakeGitHub, client: httpx.Client
) -> None:
    answer = client.get(f"/repos/{REPO}/contents/README.md")
    assert answer.status_code == 501
    assert fake.unimplemented == [
        "GET /repos/octo/gitops/contents/README.md: "
        "/repos/{owner}/{repo}/contents/{path} (repos/get-content) is not served by the fake"
    ]
    with pytest.raises(AssertionError, match="unimplemented"):
        fake.assert_clean()


def test_every_handler_names_a_described_operation() -> None:
    ids = {op.operation_id for op in github.supplemented().operations}
    handlers = {name.removeprefix("_op_") for name in dir(FakeGitHub) if name.startswith("_op_")}
    names = {i.replace("/", "_").replace("-", "_") for i in ids}
    assert handlers <= names, handlers - names
    assert len(handlers) >= 22


def test_the_supplement_adds_only_what_the_recorded_description_lacks() -> None:
    recorded = {(op.method, op.template) for op in load().operations}
    served = {(op.method, op.template): op for op in github.supplemented().operations}
    added = {
        (method.upper(), template)
        for template, methods in github.SUPPLEMENT.items()
        for method in methods
    }
    # Once the recorded file is re-trimmed to hold one of these, drop it from SUPPLEMENT.
    assert not added & recorded, added & recorded
    assert set(served) == recorded | added
    update = served[("PATCH", "/repos/{owner}/{repo}/pulls/comments/{comment_id}")]
    assert update.operation_id == "pulls/update-review-comment"
    assert update.body_required and update.body_schema is not None
    assert load() is not github.supplemented()  # the recording itself is left as it is


# ---------------------------------------------------------------------------- credentials


def test_missing_unknown_and_expired_tokens_are_401(fake: FakeGitHub) -> None:
    path = f"/repos/{REPO}/pulls"
    c = api(fake)

    def status(authorization: str | None) -> int:
        return c.get(
            path, headers={"authorization": authorization} if authorization else {}
        ).status_code

    assert status(None) == 401
    assert status("token nope") == 401
    token = fake.issue_token(42)
    assert status(f"token {token}") == 200
    fake.expire_tokens()
    expired = c.get(path, headers={"authorization": f"token {token}"})
    assert expired.status_code == 401
    assert expired.json()["message"] == "Bad credentials"
    assert status(f"Bearer {fake.make_jwt()}") == 401
    c.close()
    assert fake.auth_failures == [
        f"GET {path}: no Authorization header",
        f"GET {path}: unknown installation token",
        f"GET {path}: expired installation token",
        f"GET {path}: an app JWT was sent to an installation endpoint",
    ]
    assert fake.validation_errors == []


def test_a_token_expires_when_its_expires_at_says(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock()
    monkeypatch.setattr(github, "_now", clock)
    with FakeGitHub(None, token_ttl=90.5) as fake:
        fake.add_repo(REPO)
        with app_client(fake) as app:
            issued = app.post("/app/installations/42/access_tokens").json()
        expires = datetime.strptime(issued["expires_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert expires.timestamp() - clock.now == 90  # whole seconds, floored
        later = expires.timestamp()
        clock.now = later - 0.01
        assert fake.token_valid(issued["token"])
        with api(fake, f"token {issued['token']}") as c:
            assert c.get(f"/repos/{REPO}/pulls").status_code == 200
            clock.now = later
            assert not fake.token_valid(issued["token"])
            assert c.get(f"/repos/{REPO}/pulls").status_code == 401


def test_token_shape_is_configurable(tmp_path: Path) -> None:
    with FakeGitHub(None, token_prefix="", token_length=200, token_alphabet="xyz._-") as fake:
        fake.add_repo(REPO)
        with app_client(fake) as app:
            token = app.post("/app/installations/42/access_tokens").json()["token"]
        assert len(token) == 200 and set(token) <= set("xyz._-")
        with api(fake, f"token {token}") as c:
            assert c.get(f"/repos/{REPO}/pulls").status_code == 200
    with FakeGitHub(None, token_factory=lambda: "v1." + "f" * 7) as fake:
        fake.add_repo(REPO)
        assert fake.issue_token(42) == "v1.fffffff"


def test_token_of_another_installation_sees_nothing(fake: FakeGitHub) -> None:
    fake.add_repo("other/repo", installation_id=43)
    token = fake.issue_token(43)
    with api(fake, f"token {token}") as c:
        assert c.get(f"/repos/{REPO}/pulls").status_code == 404


def test_installation_permissions_are_enforced(fake: FakeGitHub) -> None:
    fake.add_repo("ro/repo", installation_id=50, permissions={"metadata": "read", "checks": "read"})
    token = fake.issue_token(50)
    c = api(fake, f"token {token}")
    answer = c.post("/repos/ro/repo/check-runs", json={"name": "n", "head_sha": SHA})
    assert answer.status_code == 403
    assert answer.json()["message"] == "Resource not accessible by integration"
    assert answer.headers["x-accepted-github-permissions"] == "checks=write"
    with app_client(fake) as app:
        too_much = app.post(
            "/app/installations/50/access_tokens", json={"permissions": {"checks": "write"}}
        )
        narrowed = app.post(
            "/app/installations/42/access_tokens",
            json={"permissions": {"checks": "read"}, "repositories": ["gitops"]},
        )
    assert too_much.status_code == 422
    assert narrowed.status_code == 201 and narrowed.json()["repository_selection"] == "selected"
    tok = narrowed.json()["token"]
    refused = c.post(
        f"/repos/{REPO}/check-runs",
        json={"name": "n", "head_sha": SHA},
        headers={"authorization": f"token {tok}"},
    )
    assert refused.status_code == 403
    c.close()


def jwt_status(fake: FakeGitHub, token: str, scheme: str = "Bearer") -> int:
    with api(fake, f"{scheme} {token}") as c:
        return c.post("/app/installations/42/access_tokens").status_code


def test_app_jwts_are_verified(fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ManualClock()
    monkeypatch.setattr(github, "_now", clock)
    now = int(clock.now)
    assert jwt_status(fake, fake.make_jwt()) == 201
    assert jwt_status(fake, fake.make_jwt(iss=int(fake.app_id))) == 201  # int iss is fine
    assert jwt_status(fake, fake.make_jwt(iat=now - 30, exp=now - 30 + 600)) == 201
    assert jwt_status(fake, fake.make_jwt(iat=now - 30, exp=now - 30 + 601)) == 401
    assert jwt_status(fake, fake.make_jwt(iat=now - 700, exp=now - 100)) == 401  # expired
    assert jwt_status(fake, fake.make_jwt(iat=now + 60, exp=now + 300)) == 401  # from the future
    assert jwt_status(fake, fake.make_jwt(iss="999")) == 401
    assert jwt_status(fake, fake.make_jwt(key_pem=new_private_key())) == 401
    assert jwt_status(fake, fake.make_jwt(), scheme="token") == 401
    assert jwt_status(fake, fake.issue_token(42)) == 401
    failures = fake.auth_failures
    assert len(failures) == 7
    assert "exp - iat = 601 s > 600 s" in failures[0]
    assert "expired" in failures[1]
    assert "future" in failures[2]
    assert "iss '999'" in failures[3]
    assert "Signature verification failed" in failures[4]
    assert fake.tokens_issued == 3  # over HTTP; issue_token() is not counted
    assert len(fake.tokens) == 4


# ---------------------------------------------------------------------------- faults


def test_fault_502_once_then_served(fake: FakeGitHub, client: httpx.Client) -> None:
    fault = fake.inject(method="POST", path=r"/repos/.*/check-runs", status=502, times=1)
    body = {"name": "n", "head_sha": SHA}
    assert client.post(f"/repos/{REPO}/check-runs", json=body).status_code == 502
    assert client.post(f"/repos/{REPO}/check-runs", json=body).status_code == 201
    assert fault.hits == 1 and fault.exhausted
    assert fake.calls_summary() == [
        "POST /repos/octo/gitops/check-runs 502",
        "POST /repos/octo/gitops/check-runs 201",
    ]
    assert fake.calls[0].fault is fault
    assert len(fake.check_runs(REPO)) == 1


def test_fault_rate_limits(
    fake: FakeGitHub, client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    monkeypatch.setattr(github, "_now", clock)
    fake.inject_secondary_rate_limit("GET", r"/repos/.*/pulls", retry_after=1)
    fake.inject_primary_rate_limit("GET", r"/repos/.*/pulls", reset_in=30)
    fake.inject(
        "PATCH",
        r"/repos/.*/check-runs/\d+",
        status=429,
        headers={"retry-after": "7"},
        body={"message": "slow down"},
    )
    first = client.get(f"/repos/{REPO}/pulls")
    assert (first.status_code, first.headers["retry-after"]) == (429, "1")
    second = client.get(f"/repos/{REPO}/pulls")
    assert second.status_code == 403
    assert second.headers["x-ratelimit-remaining"] == "0"
    assert int(second.headers["x-ratelimit-reset"]) == clock.now + 30
    assert client.get(f"/repos/{REPO}/pulls").status_code == 200
    patched = client.patch(f"/repos/{REPO}/check-runs/1", json={"status": "in_progress"})
    assert (patched.status_code, patched.json(), patched.headers["retry-after"]) == (
        429,
        {"message": "slow down"},
        "7",
    )


def test_fault_delay_is_a_slow_response(fake: FakeGitHub, client: httpx.Client) -> None:
    fake.inject("GET", r"/repos/.*/pulls", delay=0.3)
    start = time.monotonic()
    assert client.get(f"/repos/{REPO}/pulls").status_code == 200
    assert time.monotonic() - start >= 0.3
    fake.inject("POST", r"/repos/.*/check-runs", delay=2)
    with pytest.raises(httpx.ReadTimeout):
        client.post(f"/repos/{REPO}/check-runs", json={"name": "n", "head_sha": SHA}, timeout=0.2)
    assert len(fake.check_runs(REPO)) == 1  # the effect happened; only the answer was late


def test_stop_is_prompt_with_open_and_slow_connections(tmp_path: Path) -> None:
    fake = FakeGitHub(None).start()
    fake.add_repo(REPO)
    fake.inject(delay=30, times=None)
    token = fake.issue_token(42)
    keep = api(fake, f"token {token}")
    slow = threading.Thread(target=lambda: _ignore(keep.get, f"/repos/{REPO}/pulls"), daemon=True)
    slow.start()
    url = fake.url
    time.sleep(0.1)  # the request is in its delay
    start = time.monotonic()
    fake.stop()
    assert time.monotonic() - start < 2
    slow.join(timeout=2)
    assert not slow.is_alive()
    keep.close()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url, verify=False)


def _ignore(fn: Any, *args: Any) -> None:
    with contextlib.suppress(httpx.HTTPError):
        fn(*args)


# ---------------------------------------------------------------------------- concurrency


def test_concurrent_clients_and_wait_for(fake: FakeGitHub) -> None:
    token = fake.issue_token(42)

    def worker() -> None:
        with api(fake, f"token {token}") as c:
            for _ in range(10):
                assert (
                    c.post(
                        f"/repos/{REPO}/check-runs", json={"name": "n", "head_sha": SHA}
                    ).status_code
                    == 201
                )

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    runs = fake.wait_for(
        lambda: len(fake.check_runs(REPO)) == 60 and fake.check_runs(REPO), timeout=10
    )
    for t in threads:
        t.join()
    assert isinstance(runs, list)
    assert sorted(r["id"] for r in runs) == list(range(1, 61))
    with pytest.raises(AssertionError, match="timed out"):
        fake.wait_for(lambda: False, timeout=0.05)


# ---------------------------------------------------------------------------- git


def git(
    *args: str, cwd: Path | None = None, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**GIT_ENV, **(extra or {})},
        capture_output=True,
        text=True,
        timeout=30,
    )


def make_bare(fake: FakeGitHub, full_name: str, tmp_path: Path) -> str:
    """A bare repository with one commit on main and one on feature; the feature head."""
    work = tmp_path / "work"
    git("init", "-q", "-b", "main", str(work))
    (work / "a.txt").write_text("a\n")
    git("add", "a.txt", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    git("checkout", "-q", "-b", "feature", cwd=work)
    (work / "b.txt").write_text("b\n")
    git("add", "b.txt", cwd=work)
    git("commit", "-q", "-m", "two", cwd=work)
    fake.make_bare_repo(full_name, source=work)
    return git("rev-parse", "feature", cwd=work).stdout.strip()


def test_git_clone_needs_a_valid_installation_token(fake: FakeGitHub, tmp_path: Path) -> None:
    make_bare(fake, REPO, tmp_path)
    url = fake.clone_url(REPO)
    assert url == f"{fake.git_url}/{REPO}.git"
    token = fake.issue_token(42)
    header = fake.basic_auth_header(token)
    assert (
        header
        == "Authorization: Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()
    )

    ok = git("-c", f"http.extraHeader={header}", "clone", "-q", url, str(tmp_path / "ok"))
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "ok" / "a.txt").read_text() == "a\n"
    bearer = git(
        "-c",
        f"http.extraHeader=Authorization: Bearer {token}",
        "clone",
        "-q",
        url,
        str(tmp_path / "b"),
    )
    assert bearer.returncode == 0, bearer.stderr

    anonymous = git("clone", "-q", url, str(tmp_path / "anon"))
    assert anonymous.returncode != 0
    wrong_user = base64.b64encode(f"someone:{token}".encode()).decode()
    bad = git(
        "-c",
        f"http.extraHeader=Authorization: Basic {wrong_user}",
        "clone",
        "-q",
        url,
        str(tmp_path / "bad"),
    )
    assert bad.returncode != 0
    fake.expire_tokens()
    expired = git("-c", f"http.extraHeader={header}", "clone", "-q", url, str(tmp_path / "exp"))
    assert expired.returncode != 0
    assert any(r.status == 401 for r in fake.git.requests)
    assert any(r.authorized and r.status == 200 for r in fake.git.requests)


def test_bare_repository_backs_pulls_and_check_run_shas(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    feature = make_bare(fake, REPO, tmp_path)
    created = client.post(f"/repos/{REPO}/pulls", json={"head": "feature", "base": "main"})
    assert created.status_code == 201
    assert created.json()["head"]["sha"] == feature
    missing = client.post(f"/repos/{REPO}/pulls", json={"head": "nope", "base": "main"})
    assert missing.status_code == 422
    assert missing.json()["errors"][0]["field"] == "head"
    assert (
        client.post(
            f"/repos/{REPO}/check-runs", json={"name": "n", "head_sha": feature}
        ).status_code
        == 201
    )
    unknown = client.post(f"/repos/{REPO}/check-runs", json={"name": "n", "head_sha": "f" * 40})
    assert unknown.status_code == 422
    assert fake.validation_errors == [
        f"POST /repos/{REPO}/check-runs: No commit found for SHA: {'f' * 40}"
    ]
    assert [p["number"] for p in fake.pulls(REPO)] == [1]
    assert fake.env()["ICHOR_GITHUB_URL"] == fake.git_url


def test_git_push_with_the_token_then_open_the_pull(
    fake: FakeGitHub, client: httpx.Client, tmp_path: Path
) -> None:
    make_bare(fake, REPO, tmp_path)
    work = tmp_path / "work"
    git("checkout", "-q", "-b", "ichor/ignore-x", cwd=work)
    (work / "c.txt").write_text("c\n")
    git("add", "c.txt", cwd=work)
    git("commit", "-q", "-m", "three", cwd=work)
    head = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    url = fake.clone_url(REPO)

    refused = git("push", "-q", url, "ichor/ignore-x", cwd=work)
    assert refused.returncode != 0
    assert fake.branch_sha(REPO, "ichor/ignore-x") is None
    header = fake.basic_auth_header(fake.issue_token(42))
    pushed = git("-c", f"http.extraHeader={header}", "push", "-q", url, "ichor/ignore-x", cwd=work)
    assert pushed.returncode == 0, pushed.stderr
    assert fake.branch_sha(REPO, "ichor/ignore-x") == head
    opened = client.post(
        f"/repos/{REPO}/pulls", json={"head": "octo:ichor/ignore-x", "base": "main"}
    )
    assert opened.status_code == 201
    assert opened.json()["head"]["sha"] == head
