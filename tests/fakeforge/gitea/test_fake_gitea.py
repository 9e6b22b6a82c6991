"""The fake Gitea/Forgejo: really rejects what its recorded description rejects, on both
flavors; serves the endpoints the adapter uses; faults. Git over HTTP:
:mod:`tests.fakeforge.gitea.test_git`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakeforge.gitea import DESCRIPTIONS, FakeGitea, load

FULL = "octo/gitops"
SHA = "a" * 40
BASE = "b" * 40
API = f"/api/v1/repos/{FULL}"


@pytest.fixture(params=["gitea", "forgejo"])
def fake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FakeGitea]:
    with FakeGitea(tmp_path / "git", flavor=request.param) as fake:
        fake.add_repo(FULL)
        fake.add_pull(FULL, 7, head_sha=SHA, base_sha=BASE)
        yield fake
        assert fake.response_errors == [], fake.response_errors


def client(fake: FakeGitea, authorization: str | None = "token") -> httpx.Client:
    headers = {}
    if authorization == "token":
        headers["authorization"] = f"token {fake.token}"
    elif authorization is not None:
        headers["authorization"] = authorization
    return httpx.Client(base_url=f"{fake.url}/api/v1", headers=headers)


@pytest.fixture
def api(fake: FakeGitea) -> Iterator[httpx.Client]:
    with client(fake) as c:
        yield c


# ---------------------------------------------------------------------------- validation


def test_a_bad_status_state_is_422_on_both_flavors(fake: FakeGitea, api: httpx.Client) -> None:
    answer = api.post(f"/repos/{FULL}/statuses/{SHA}", json={"state": "green", "context": "c"})
    assert answer.status_code == 422
    assert set(answer.json()) == {"message", "url"}
    assert (
        '"green" is not one of ["pending", "success", "error", "failure"'
        in answer.json()["message"]
    )
    assert fake.statuses(FULL, SHA) == []
    assert fake.validation_errors == [f"POST {API}/statuses/{SHA}: {answer.json()['message']}"]
    good = api.post(f"/repos/{FULL}/statuses/{SHA}", json={"state": "warning", "context": "c"})
    assert good.status_code == 201 and good.json()["status"] == "warning"


def test_the_state_enum_comes_from_each_description() -> None:
    gitea, forgejo = load("gitea"), load("forgejo")
    assert gitea.document["definitions"]["CreateStatusOption"]["properties"]["state"]["enum"]
    # Forgejo's says the values in prose only; the fake reads them from there.
    assert "enum" not in forgejo.document["definitions"]["CommitStatusState"]
    assert forgejo.definitions["CommitStatusState"]["enum"] == [
        "pending",
        "success",
        "error",
        "failure",
        "warning",
        "skipped",
    ]


@pytest.mark.parametrize(
    ("method", "path", "why"),
    [
        ("GET", "/repos/octo/gitops/nothing", "no path template"),
        ("DELETE", "/repos/octo/gitops/statuses/abc", "no DELETE operation"),
        ("GET", "/repos/octo/gitops/pulls/seven/reviews", "index"),
    ],
)
def test_unknown_operations_and_bad_path_integers_are_404(
    fake: FakeGitea, api: httpx.Client, method: str, path: str, why: str
) -> None:
    answer = api.request(method, path)
    assert answer.status_code == 404
    assert len(fake.validation_errors) == 1 and why in fake.validation_errors[0]


def test_paths_outside_the_api_are_404(fake: FakeGitea) -> None:
    answer = httpx.get(f"{fake.url}/repos/{FULL}/statuses/{SHA}")
    assert answer.status_code == 404
    assert fake.validation_errors == [f"GET /repos/{FULL}/statuses/{SHA}: not an API path"]


@pytest.mark.parametrize(
    ("authorization", "reason"),
    [
        (None, "no Authorization header"),
        ("token not-the-token", "unknown token"),
        ("Basic dXNlcjpwYXNz", "unsupported Authorization scheme 'Basic'"),
    ],
)
def test_requests_without_the_token_are_401(
    fake: FakeGitea, authorization: str | None, reason: str
) -> None:
    with client(fake, authorization) as c:
        answer = c.get("/user")
    assert answer.status_code == 401
    assert fake.auth_failures == [f"GET /api/v1/user: {reason}"]
    assert fake.calls[0].headers.get("authorization", "") in (
        "",
        "token <redacted>",
        "Basic <redacted>",
    )


def test_bearer_is_accepted_as_gitea_does(fake: FakeGitea) -> None:
    with client(fake, f"Bearer {fake.token}") as c:
        assert c.get("/user").json()["login"] == "ichor-bot"
    assert fake.calls[0].auth_scheme == "Bearer"


def test_route_and_auth_come_before_the_body(fake: FakeGitea) -> None:
    with client(fake, None) as c:
        assert c.post(f"/repos/{FULL}/statuses/{SHA}", json={"state": "x"}).status_code == 401
        assert c.post(f"/repos/{FULL}/nowhere", json={}).status_code == 404
    assert fake.statuses(FULL, SHA) == []


@pytest.mark.parametrize(
    ("path", "body", "problem"),
    [
        ("/statuses/" + SHA, {"context": "c"}, "a commit status needs a state"),
        ("/statuses/" + SHA, {"state": "success", "context": 5}, "5 is not of type"),
        ("/issues/7/comments", {}, "'body' is a required property"),
        ("/issues/7/comments", {"body": 1}, "1 is not of type"),
        ("/pulls/7/reviews", {"event": "COMMENT"}, "requires a body or a comment"),
        (
            "/pulls/7/reviews",
            {"event": "COMMENT", "comments": [{"path": "a", "body": "b"}]},
            "new_position or old_position must be a line",
        ),
        (
            "/pulls/7/reviews",
            {"event": "COMMENT", "comments": [{"path": "a", "body": "b", "new_position": "3"}]},
            "is not of type",
        ),
        (
            "/pulls/7/reviews",
            {"event": "COMMENT", "comments": [{"new_position": 3, "body": "b"}]},
            "no path",
        ),
    ],
)
def test_bodies_that_break_the_description_are_422(
    fake: FakeGitea, api: httpx.Client, path: str, body: dict[str, Any], problem: str
) -> None:
    answer = api.post(f"/repos/{FULL}{path}", json=body)
    assert answer.status_code == 422, answer.text
    assert problem in answer.json()["message"]
    assert len(fake.validation_errors) == 1
    assert fake.reviews(FULL, 7) == [] and fake.comments(FULL, 7) == []


def test_a_required_body_and_json_itself(fake: FakeGitea, api: httpx.Client) -> None:
    assert api.post(f"/repos/{FULL}/pulls/7/reviews").status_code == 422
    assert "a JSON request body is required" in fake.validation_errors[0]
    broken = api.post(
        f"/repos/{FULL}/issues/7/comments",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert broken.status_code == 422 and "not JSON" in broken.json()["message"]


def test_gitea_enums_the_review_event_forgejo_does_not(fake: FakeGitea, api: httpx.Client) -> None:
    answer = api.post(f"/repos/{FULL}/pulls/7/reviews", json={"event": "LGTM", "body": "x"})
    if fake.flavor == "gitea":
        assert answer.status_code == 422
    else:  # a plain string there; Forgejo keeps an unknown event's review pending
        assert answer.status_code == 200 and answer.json()["state"] == "PENDING"


def test_only_gitea_describes_resolving_review_comments(fake: FakeGitea, api: httpx.Client) -> None:
    review = fake.add_review(FULL, 7, [("a.yaml", 2, "x")], user="ichor-bot")
    comment_id = fake.review_comments(FULL, 7)[0]["id"]
    answer = api.post(f"/repos/{FULL}/pulls/comments/{comment_id}/resolve")
    if fake.flavor == "gitea":
        assert answer.status_code == 204
        assert fake.review_comments(FULL, 7)[0]["resolver"]["login"] == "ichor-bot"
        assert api.post(f"/repos/{FULL}/pulls/comments/{comment_id}/unresolve").status_code == 204
        assert "resolver" not in fake.review_comments(FULL, 7)[0]
        assert api.post(f"/repos/{FULL}/pulls/comments/999/resolve").status_code == 404
    else:
        assert answer.status_code == 404
        assert "no path template" in fake.validation_errors[0]
        # Forgejo adds comments to a review instead; the fake does not serve that.
        more = api.post(
            f"/repos/{FULL}/pulls/7/reviews/{review['id']}/comments",
            json={"path": "a.yaml", "body": "y", "new_position": 2},
        )
        assert more.status_code == 501 and fake.unimplemented


def test_responses_are_checked_closed(fake: FakeGitea, api: httpx.Client) -> None:
    render = fake._render_user
    fake._render_user = lambda login: {**render(login), "invented": True}  # type: ignore[method-assign]
    api.get("/user")
    assert fake.response_errors == [
        "GET /api/v1/user 200: Additional properties are not allowed ('invented' was unexpected)"
    ]
    fake._response_errors.clear()


def test_every_handler_names_a_described_operation() -> None:
    ids = {op.operation_id for flavor in DESCRIPTIONS for op in load(flavor).operations}
    handlers = {name.removeprefix("_op_") for name in dir(FakeGitea) if name.startswith("_op_")}
    assert handlers <= ids, handlers - ids


# ---------------------------------------------------------------------------- behaviour


def test_comments_reviews_and_pages(fake: FakeGitea, api: httpx.Client) -> None:
    created = api.post(f"/repos/{FULL}/issues/7/comments", json={"body": "hi"})
    assert created.status_code == 201
    edited = api.patch(f"/repos/{FULL}/issues/comments/{created.json()['id']}", json={"body": "ho"})
    assert edited.json()["body"] == "ho"
    assert api.get(f"/repos/{FULL}/issues/8/comments").status_code == 404
    for i in range(3):
        fake.add_review(FULL, 7, [("f.yaml", i + 1, f"c{i}")], body=f"r{i}")
    first = api.get(f"/repos/{FULL}/pulls/7/reviews", params={"limit": 2, "page": 1})
    assert [r["body"] for r in first.json()] == ["r0", "r1"]
    assert first.headers["x-total-count"] == "3" and 'rel="next"' in first.headers["link"]
    second = api.get(f"/repos/{FULL}/pulls/7/reviews", params={"limit": 2, "page": 2})
    assert [r["body"] for r in second.json()] == ["r2"]
    comments = api.get(f"/repos/{FULL}/pulls/7/reviews/{first.json()[0]['id']}/comments").json()
    assert [(c["path"], c["position"], c["body"]) for c in comments] == [("f.yaml", 1, "c0")]
    assert api.get(f"/repos/{FULL}/pulls/8/reviews/1/comments").status_code == 404
    fake.assert_clean()


def test_by_base_and_head_ignores_state_like_gitea(fake: FakeGitea, api: httpx.Client) -> None:
    fake.add_pull(FULL, 8, head_sha="d" * 40, head_ref="x", state="closed")
    fake.add_pull(FULL, 9, head_sha="e" * 40, head_ref="x")
    assert api.get(f"/repos/{FULL}/pulls/main/x").json()["number"] == 8
    assert api.get(f"/repos/{FULL}/pulls/main/y").status_code == 404
    listed = api.get(f"/repos/{FULL}/pulls", params={"state": "open"}).json()
    assert [p["number"] for p in listed] == [9, 7]


def test_opening_a_pull_twice_is_409(fake: FakeGitea, api: httpx.Client) -> None:
    fake.set_branch(FULL, "main", BASE)
    fake.set_branch(FULL, "ichor/x", SHA)
    body = {"head": "ichor/x", "base": "main", "title": "t"}
    opened = api.post(f"/repos/{FULL}/pulls", json=body)
    assert opened.status_code == 201 and opened.json()["head"]["sha"] == SHA
    assert api.post(f"/repos/{FULL}/pulls", json=body).status_code == 409
    missing = api.post(f"/repos/{FULL}/pulls", json={**body, "head": "nope"})
    assert missing.status_code == 404


def test_permission_endpoint_needs_a_repository_admin(fake: FakeGitea, api: httpx.Client) -> None:
    fake.set_permission(FULL, "alice", "write")
    answer = api.get(f"/repos/{FULL}/collaborators/alice/permission")
    assert answer.json()["permission"] == "write"
    assert api.get(f"/repos/{FULL}/collaborators/ghost/permission").status_code == 404
    fake.forbid_permission_reads(FULL)
    refused = api.get(f"/repos/{FULL}/collaborators/alice/permission")
    assert refused.status_code == 403 and "Only admins" in refused.json()["message"]
    own = api.get(f"/repos/{FULL}/collaborators/ichor-bot/permission")
    assert own.json()["permission"] == "write"  # anyone may read their own


def test_unknown_repository_is_404(fake: FakeGitea, api: httpx.Client) -> None:
    assert api.get("/repos/octo/other/pulls/7").status_code == 404
    assert fake.validation_errors == []


# ---------------------------------------------------------------------------- faults


def test_faults_fire_times_then_serve(fake: FakeGitea, api: httpx.Client) -> None:
    fault = fake.inject("POST", f"{API}/statuses/.*", status=502, times=2)
    fake.inject("GET", "/api/v1/user", status=429, headers={"Retry-After": "7"})
    body = {"state": "pending", "context": "c"}
    assert [api.post(f"/repos/{FULL}/statuses/{SHA}", json=body).status_code for _ in range(3)] == [
        502,
        502,
        201,
    ]
    limited = api.get("/user")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "7"
    assert api.get("/user").status_code == 200
    assert fault.exhausted and fake.calls[0].fault is fault
    assert len(fake.statuses(FULL, SHA)) == 1


def test_faults_apply_after_validation_and_can_only_delay(
    fake: FakeGitea, api: httpx.Client
) -> None:
    fake.inject(status=500, times=None)
    assert api.post(f"/repos/{FULL}/statuses/{SHA}", json={"state": "nope"}).status_code == 422
    fake.clear_faults()
    fake.inject("GET", "/api/v1/user", delay=0.3)
    started = time.monotonic()
    assert api.get("/user").status_code == 200
    assert time.monotonic() - started >= 0.3


def test_wait_for_times_out_with_the_calls(fake: FakeGitea) -> None:
    assert fake.wait_for(lambda: 42) == 42
    with pytest.raises(AssertionError, match="calls"):
        fake.wait_for(lambda: None, timeout=0.05)
