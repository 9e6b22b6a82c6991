"""GitHubForge against httpx.MockTransport: payloads, batching, retries, error mapping, secrecy."""

from __future__ import annotations

import base64
import json
import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.errors import ForgeError, PermanentForgeError, TransientForgeError
from bot.forges.base import (
    Annotation,
    CheckHandle,
    CheckOutput,
    Conclusion,
    ForgeAdapter,
    Permission,
    PullRequestRef,
)
from bot.forges.github.adapter import SUMMARY_MARKER, GitHubForge
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings
from tests.support.together import together

T = TypeVar("T")
NOW = 1_700_000_000.0
STAMP = "2023-11-14T22:13:20Z"  # NOW
HOUR_LATER = "2023-11-14T23:13:20Z"
API = "https://api.github.test"
REPO = RepoRef(
    forge=ForgeKind.GITHUB,
    full_name="octo/widgets",
    clone_url="https://github.test/octo/widgets.git",
    installation_id=7,
)
TOKEN_PATH = "/app/installations/7/access_tokens"
SHA = "a" * 40


@cache
def key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem() -> str:
    return (
        key()
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )


def reply(status: int, body: Any = None, **headers: str) -> httpx.Response:
    return httpx.Response(
        status, json=body, headers={k.replace("_", "-"): v for k, v in headers.items()}
    )


class FakeGitHub:
    """Scripted answers by "METHOD /path?query"; the last answer for a route repeats.

    Installation tokens are issued ("tok-1", "tok-2", ...) unless a test scripts the route.
    """

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.now = NOW
        self.routes: dict[str, list[httpx.Response | Exception]] = defaultdict(list)
        self.requests: list[httpx.Request] = []
        self.tokens: list[str] = []
        self.token_delay = 0.0
        self.issued = 0

    def on(self, route: str, *answers: httpx.Response | Exception) -> None:
        self.routes[route].extend(answers)

    def calls(self, route: str) -> list[httpx.Request]:
        return [r for r in self.requests if self.route_of(r) == route]

    def bodies(self, route: str) -> list[Any]:
        return [json.loads(r.content) for r in self.calls(route)]

    def route_of(self, request: httpx.Request) -> str:
        target = request.url.raw_path.decode()
        assert target.startswith(self.prefix)
        return f"{request.method} {target.removeprefix(self.prefix)}"

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        route = self.route_of(request)
        answers = self.routes.get(route)
        if answers:
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
            if isinstance(answer, Exception):
                raise answer
            return answer
        if route == f"POST {TOKEN_PATH}":
            if self.token_delay:
                time.sleep(self.token_delay)
            self.issued += 1
            token = self.tokens.pop(0) if self.tokens else f"tok-{self.issued}"
            return reply(201, {"token": token, "expires_at": HOUR_LATER})
        return reply(404, {"message": "Not Found"})


class Harness:
    def __init__(
        self,
        fake: FakeGitHub,
        api: str = API,
        web: str = "https://github.test",
        handler: Callable[[httpx.Request], httpx.Response] | None = None,
    ) -> None:
        self.fake = fake
        self.slept: list[float] = []
        self.client = httpx.Client(transport=httpx.MockTransport(handler or fake))

        def sleep(seconds: float) -> None:
            self.slept.append(seconds)

        self.forge = GitHubForge(
            app_id="42",
            private_key_pem=pem(),
            api_url=api,
            web_url=web,
            client=self.client,
            clock=lambda: fake.now,
            sleep=sleep,
        )

    def run(self, make: Callable[[GitHubForge], T]) -> T:
        return make(self.forge)

    def authorizations(self, route: str) -> list[str]:
        return [r.headers["authorization"] for r in self.fake.calls(route)]


@pytest.fixture
def fake() -> FakeGitHub:
    return FakeGitHub()


@pytest.fixture
def gh(fake: FakeGitHub) -> Harness:
    return Harness(fake)


def test_it_is_a_forge(gh: Harness) -> None:
    forge: ForgeAdapter = gh.forge
    assert forge.name == "github"


# -- credentials ----------------------------------------------------------------------------


def test_git_credentials_carry_the_installation_token(gh: Harness) -> None:
    creds = gh.run(lambda f: f.git_credentials(REPO))
    assert creds.host == "github.test"
    assert creds.header.startswith("Authorization: Basic ")
    assert base64.b64decode(creds.header.split()[-1]).decode() == "x-access-token:tok-1"
    assert "tok-1" not in repr(creds)
    [bearer] = gh.authorizations(f"POST {TOKEN_PATH}")
    assert bearer.startswith("Bearer ")
    claims = jwt.decode(
        bearer.removeprefix("Bearer "),
        key().public_key(),
        algorithms=["RS256"],
        options={"verify_exp": False, "verify_iat": False},
    )
    assert (
        claims["iss"] == "42" and claims["iat"] == NOW - 60 and claims["exp"] - claims["iat"] <= 600
    )


def test_git_credentials_name_the_web_host_and_port() -> None:
    gh = Harness(FakeGitHub(), web="https://user@GHE.example:8443/")
    assert gh.run(lambda f: f.git_credentials(REPO)).host == "ghe.example:8443"


@pytest.mark.parametrize("token", ["abc", "x" * 300])
def test_tokens_of_odd_lengths_work(fake: FakeGitHub, gh: Harness, token: str) -> None:
    fake.tokens = [token]
    fake.on("POST /repos/octo/widgets/check-runs", reply(201, {"id": 1}))
    creds = gh.run(lambda f: f.git_credentials(REPO))
    assert base64.b64decode(creds.header.split()[-1]).decode() == f"x-access-token:{token}"
    gh.run(lambda f: f.start_check(REPO, SHA, external_id="job"))
    assert gh.authorizations("POST /repos/octo/widgets/check-runs") == [f"Bearer {token}"]


def test_concurrent_calls_make_one_token_request(fake: FakeGitHub, gh: Harness) -> None:
    fake.token_delay = 0.01

    def many(forge: GitHubForge) -> set[str]:
        got = together(*(lambda: forge.git_credentials(REPO) for _ in range(10)))
        return {c.header for c in got if c is not None}

    assert len(gh.run(many)) == 1
    assert len(fake.calls(f"POST {TOKEN_PATH}")) == 1


def test_the_token_is_reused_until_five_minutes_before_expiry(
    fake: FakeGitHub, gh: Harness
) -> None:
    def token_now() -> str:
        creds = gh.run(lambda f: f.git_credentials(REPO))
        return base64.b64decode(creds.header.split()[-1]).decode().partition(":")[2]

    assert token_now() == "tok-1"
    fake.now = NOW + 3600 - 301
    assert token_now() == "tok-1"
    fake.now = NOW + 3600 - 299
    assert token_now() == "tok-2"


def test_a_repository_without_an_installation_is_refused(gh: Harness) -> None:
    bare = RepoRef(forge=ForgeKind.GITHUB, full_name="octo/widgets", clone_url="https://x/y.git")
    with pytest.raises(PermanentForgeError, match="installation"):
        gh.run(lambda f: f.git_credentials(bare))


# -- check runs -----------------------------------------------------------------------------

CHECKS = "/repos/octo/widgets/check-runs"


def output(n_annotations: int = 0, **overrides: Any) -> CheckOutput:
    notes = tuple(
        Annotation(
            path=f"t/f{i}.yaml",
            start_line=i + 1,
            end_line=i + 2,
            level="failure",
            title=f"issue {i}",
            message=f"message {i}",
        )
        for i in range(n_annotations)
    )
    values: dict[str, Any] = {
        "conclusion": Conclusion.FAILURE,
        "title": "1 target refused",
        "summary": "sum",
        "text": "full list",
        "annotations": notes,
    }
    return CheckOutput(**(values | overrides))


def test_start_check_creates_an_in_progress_run(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"POST {CHECKS}", reply(201, {"id": 991}))
    handle = gh.run(lambda f: f.start_check(REPO, SHA, external_id="delivery-1"))
    assert handle == CheckHandle(head_sha=SHA, id="991")
    assert fake.bodies(f"POST {CHECKS}") == [
        {
            "name": "ichor/acceptance",
            "head_sha": SHA,
            "status": "in_progress",
            "external_id": "delivery-1",
            "started_at": STAMP,
        },
    ]
    assert gh.authorizations(f"POST {CHECKS}") == ["Bearer tok-1"]


LISTED = (
    f"GET /repos/octo/widgets/commits/{SHA}/check-runs"
    "?check_name=ichor%2Facceptance&filter=all&per_page=100"
)


def test_a_resumed_check_reuses_the_run_its_delivery_started(fake: FakeGitHub, gh: Harness) -> None:
    runs = [{"id": 5, "external_id": "other"}, {"id": 7, "external_id": "delivery-1"}]
    fake.on(LISTED, reply(200, {"total_count": 2, "check_runs": runs}))
    handle = gh.run(lambda f: f.start_check(REPO, SHA, external_id="delivery-1", resume=True))
    assert handle == CheckHandle(head_sha=SHA, id="7")
    assert fake.calls(f"POST {CHECKS}") == []


def test_a_resumed_check_whose_run_was_never_made_makes_one(fake: FakeGitHub, gh: Harness) -> None:
    runs = [{"id": 5, "external_id": "another-delivery"}]
    fake.on(LISTED, reply(200, {"total_count": 1, "check_runs": runs}))
    fake.on(f"POST {CHECKS}", reply(201, {"id": 992}))
    handle = gh.run(lambda f: f.start_check(REPO, SHA, external_id="delivery-1", resume=True))
    assert handle == CheckHandle(head_sha=SHA, id="992")
    assert len(fake.calls(LISTED)) == 1


def test_complete_check_sends_the_verdict_and_output(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"PATCH {CHECKS}/991", reply(200, {"id": 991}))
    out = output(2, conclusion=Conclusion.SUCCESS, details_url="https://ichor.test/r/1")
    gh.run(lambda f: f.complete_check(REPO, CheckHandle(SHA, "991"), out))
    [body] = fake.bodies(f"PATCH {CHECKS}/991")
    assert body["status"] == "completed" and body["conclusion"] == "success"
    assert body["completed_at"] == STAMP and body["details_url"] == "https://ichor.test/r/1"
    assert body["output"]["title"] == "1 target refused"
    assert body["output"]["summary"] == "sum" and body["output"]["text"] == "full list"
    assert body["output"]["annotations"][1] == {
        "path": "t/f1.yaml",
        "start_line": 2,
        "end_line": 3,
        "annotation_level": "failure",
        "message": "message 1",
        "title": "issue 1",
    }


@pytest.mark.parametrize(
    ("conclusion", "sent"),
    [
        (Conclusion.SUCCESS, "success"),
        (Conclusion.FAILURE, "failure"),
        (Conclusion.NEUTRAL, "neutral"),
        (Conclusion.ACTION_REQUIRED, "action_required"),
        (Conclusion.ERROR, "failure"),
    ],
)
def test_conclusion_mapping(
    fake: FakeGitHub, gh: Harness, conclusion: Conclusion, sent: str
) -> None:
    fake.on(f"PATCH {CHECKS}/5", reply(200, {}))
    gh.run(lambda f: f.complete_check(REPO, CheckHandle(SHA, "5"), output(conclusion=conclusion)))
    [body] = fake.bodies(f"PATCH {CHECKS}/5")
    assert body["conclusion"] == sent
    assert "details_url" not in body
    # An error must not read like a verdict on the change.
    could_not = body["output"]["title"].startswith("Check could not be completed")
    assert could_not == (conclusion is Conclusion.ERROR)


def test_120_annotations_go_in_batches_of_50(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"PATCH {CHECKS}/5", reply(200, {}))
    gh.run(lambda f: f.complete_check(REPO, CheckHandle(SHA, "5"), output(120)))
    bodies = fake.bodies(f"PATCH {CHECKS}/5")
    assert [len(b["output"]["annotations"]) for b in bodies] == [50, 50, 20]
    assert bodies[0]["conclusion"] == "failure"
    for later in bodies[1:]:
        assert set(later) == {"output"}  # appends only; the verdict stands
        assert (
            later["output"]["title"] == "1 target refused" and later["output"]["summary"] == "sum"
        )
    sent = [a["path"] for b in bodies for a in b["output"]["annotations"]]
    assert sent == [f"t/f{i}.yaml" for i in range(120)]


def test_a_failed_annotation_batch_does_not_undo_the_verdict(
    fake: FakeGitHub, gh: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    fake.on(f"PATCH {CHECKS}/5", reply(200, {}), reply(422, {"message": "Invalid annotation"}))
    gh.run(lambda f: f.complete_check(REPO, CheckHandle(SHA, "5"), output(120)))
    assert len(fake.calls(f"PATCH {CHECKS}/5")) == 2
    assert "70 annotations not added" in caplog.text


def test_api_limits_are_enforced(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"PATCH {CHECKS}/5", reply(200, {}))
    huge = Annotation(
        path="a", start_line=0, end_line=0, level="warning", title="t" * 400, message="é" * 70_000
    )
    out = output(title="T" * 300, summary="s" * 70_000, text="x" * 100_000, annotations=(huge,))
    gh.run(lambda f: f.complete_check(REPO, CheckHandle(SHA, "5"), out))
    [body] = fake.bodies(f"PATCH {CHECKS}/5")
    shown, [note] = body["output"], body["output"]["annotations"]
    assert len(shown["title"]) == 255
    for text in (shown["summary"], shown["text"], note["message"]):
        assert len(text.encode()) <= 65535 and text.endswith(
            "size limit; the full result is in the job's report)"
        )
    assert len(note["title"]) == 255
    assert note["start_line"] == 1 and note["end_line"] == 1


def test_completing_needs_a_check_run_id(gh: Harness) -> None:
    with pytest.raises(PermanentForgeError, match="check run id"):
        gh.run(lambda f: f.complete_check(REPO, CheckHandle(SHA), output()))


def test_an_enterprise_api_url_keeps_its_path() -> None:
    fake = FakeGitHub(prefix="/api/v3")
    fake.on(f"POST {CHECKS}", reply(201, {"id": 3}))
    gh = Harness(fake, api="https://ghe.example/api/v3")
    assert gh.run(lambda f: f.start_check(REPO, SHA, external_id="e")).id == "3"
    assert {r.url.host for r in fake.requests} == {"ghe.example"}


# -- retries and error mapping --------------------------------------------------------------


def test_a_502_is_retried_transparently(
    fake: FakeGitHub, gh: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    fake.on(f"POST {CHECKS}", reply(502, {"message": "Server Error"}), reply(201, {"id": 8}))
    with caplog.at_level(logging.WARNING, logger="ichor.forge.github"):
        assert gh.run(lambda f: f.start_check(REPO, SHA, external_id="e")).id == "8"
    assert len(gh.slept) == 1 and 0.25 <= gh.slept[0] <= 0.5
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    for fragment in ("POST", CHECKS, "502", "retrying in"):
        assert fragment in record.getMessage()
    assert "tok-1" not in caplog.text


def test_429_waits_as_long_as_retry_after_says(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(
        f"POST {CHECKS}",
        reply(429, {"message": "slow down"}, retry_after="2"),
        reply(201, {"id": 1}),
    )
    gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert gh.slept == [2.0]


def test_403_rate_limit_waits_for_the_reset(fake: FakeGitHub, gh: Harness) -> None:
    limited = reply(
        403,
        {"message": "API rate limit exceeded"},
        x_ratelimit_limit="5000",
        x_ratelimit_remaining="0",
        x_ratelimit_reset=str(int(NOW) + 30),
    )
    fake.on(f"POST {CHECKS}", limited, reply(201, {"id": 1}))
    gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert gh.slept == [30.0]


def test_a_reset_an_hour_away_is_left_to_the_queue(fake: FakeGitHub, gh: Harness) -> None:
    limited = reply(
        403,
        {"message": "API rate limit exceeded"},
        x_ratelimit_remaining="0",
        x_ratelimit_reset=str(int(NOW) + 3600),
    )
    fake.on(f"POST {CHECKS}", limited)
    with pytest.raises(TransientForgeError) as caught:
        gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert caught.value.retry_after == 3600 and gh.slept == []


def test_secondary_rate_limit_is_transient(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(
        f"POST {CHECKS}",
        reply(403, {"message": "You have exceeded a secondary rate limit"}, retry_after="7"),
        reply(403, {"message": "You have exceeded a secondary rate limit. Please wait."}),
        reply(201, {"id": 1}),
    )
    gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert gh.slept == [7.0, 60.0]


def test_a_plain_403_is_permanent(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(
        f"POST {CHECKS}",
        reply(
            403, {"message": "Resource not accessible by integration"}, x_ratelimit_remaining="4000"
        ),
    )
    with pytest.raises(PermanentForgeError, match="Resource not accessible by integration"):
        gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert len(fake.calls(f"POST {CHECKS}")) == 1


def test_404_is_permanent_and_says_where(fake: FakeGitHub, gh: Harness) -> None:
    with pytest.raises(PermanentForgeError) as caught:
        gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert str(caught.value) == f"GitHub POST {CHECKS}: 404 Not Found"
    assert len(fake.calls(f"POST {CHECKS}")) == 1 and gh.slept == []


@pytest.mark.parametrize(
    "failure",
    [httpx.ReadTimeout("read timed out"), httpx.ConnectError("refused"), reply(503), reply(520)],
)
def test_transport_failures_and_odd_5xx_are_retried(
    fake: FakeGitHub, gh: Harness, failure: Any
) -> None:
    fake.on(f"POST {CHECKS}", failure, reply(201, {"id": 4}))
    assert gh.run(lambda f: f.start_check(REPO, SHA, external_id="e")).id == "4"
    assert len(gh.slept) == 1


def test_persistent_5xx_gives_up_after_five_attempts(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"POST {CHECKS}", reply(500, {"message": "boom"}))
    with pytest.raises(
        TransientForgeError, match=f"POST {CHECKS}: 500 Internal Server Error: boom"
    ):
        gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert len(fake.calls(f"POST {CHECKS}")) == 5


def test_a_401_replaces_the_token_once(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"POST {CHECKS}", reply(401, {"message": "Bad credentials"}), reply(201, {"id": 2}))
    assert gh.run(lambda f: f.start_check(REPO, SHA, external_id="e")).id == "2"
    assert gh.authorizations(f"POST {CHECKS}") == ["Bearer tok-1", "Bearer tok-2"]


def test_a_second_401_is_final(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"POST {CHECKS}", reply(401, {"message": "Bad credentials"}))
    with pytest.raises(PermanentForgeError, match="401"):
        gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert len(fake.calls(f"POST {CHECKS}")) == 2


def test_a_refused_app_jwt_points_at_the_settings(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"POST {TOKEN_PATH}", reply(401, {"message": "A JSON web token could not be decoded"}))
    with pytest.raises(PermanentForgeError, match="ICHOR_GITHUB_PRIVATE_KEY"):
        gh.run(lambda f: f.git_credentials(REPO))


class Echo:
    """A server that repeats the request's Authorization header back in its error answers."""

    def __init__(self, fake: FakeGitHub, status: int, *, on_token: bool) -> None:
        self.fake, self.status, self.on_token = fake, status, on_token

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.fake.requests.append(request)
        if request.url.path == TOKEN_PATH and not self.on_token:
            self.fake.requests.pop()
            return self.fake(request)
        auth = request.headers["authorization"]
        if self.status == 0:
            raise httpx.ConnectError(f"could not send {auth}")
        return reply(self.status, {"message": f"you sent {auth}", "errors": [auth]})


@pytest.mark.parametrize("on_token", [False, True], ids=["api", "token-endpoint"])
@pytest.mark.parametrize("status", [0, 401, 403, 404, 422, 500])
def test_no_token_or_jwt_in_error_text(
    fake: FakeGitHub, status: int, on_token: bool, caplog: pytest.LogCaptureFixture
) -> None:
    fake.tokens = ["s3cret-token-value", "s3cret-token-value"]
    gh = Harness(fake, handler=Echo(fake, status, on_token=on_token))
    with caplog.at_level(logging.DEBUG, logger="ichor"), pytest.raises(ForgeError) as caught:
        gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    secrets = {r.headers["authorization"].removeprefix("Bearer ") for r in fake.requests}
    secrets.add("s3cret-token-value")
    assert len(secrets) >= 2  # the token and at least one app JWT
    for text in (str(caught.value), repr(caught.value), caplog.text):
        assert not any(secret in text for secret in secrets)
        assert "eyJ" not in text  # not even a shortened JWT
    assert "<redacted>" in str(caught.value)


# -- the summary comment --------------------------------------------------------------------

COMMENTS = "/repos/octo/widgets/issues/12/comments"


def comment(id_: int, body: str, kind: str = "Bot") -> dict[str, Any]:
    return {
        "id": id_,
        "body": body,
        "user": {"login": "someone", "type": kind},
        "html_url": f"https://github.test/octo/widgets/pull/12#issuecomment-{id_}",
    }


def test_the_summary_comment_is_created_once_then_edited(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"GET {COMMENTS}?per_page=100", reply(200, []))
    fake.on(f"POST {COMMENTS}", reply(201, comment(55, "x")))
    url = gh.run(lambda f: f.upsert_summary_comment(REPO, 12, "first"))
    assert url == "https://github.test/octo/widgets/pull/12#issuecomment-55"
    [created] = fake.bodies(f"POST {COMMENTS}")
    assert created == {"body": f"{SUMMARY_MARKER}\nfirst"}

    fake.routes[f"GET {COMMENTS}?per_page=100"] = [
        reply(200, [comment(1, "LGTM", "User"), comment(55, created["body"])])
    ]
    fake.on("PATCH /repos/octo/widgets/issues/comments/55", reply(200, {}))
    # An edit's answer without html_url (never seen from GitHub): the listed one is as good.
    assert gh.run(lambda f: f.upsert_summary_comment(REPO, 12, "second")) == url
    assert fake.bodies("PATCH /repos/octo/widgets/issues/comments/55") == [
        {"body": f"{SUMMARY_MARKER}\nsecond"}
    ]
    assert len(fake.calls(f"POST {COMMENTS}")) == 1


def test_an_unchanged_summary_is_not_rewritten(fake: FakeGitHub, gh: Harness) -> None:
    body = f"{SUMMARY_MARKER}\nsame"
    fake.on(f"GET {COMMENTS}?per_page=100", reply(200, [comment(55, body)]))
    url = gh.run(lambda f: f.upsert_summary_comment(REPO, 12, body))
    assert url == "https://github.test/octo/widgets/pull/12#issuecomment-55"
    assert [r.method for r in fake.requests if r.url.path != TOKEN_PATH] == ["GET"]


def test_the_summary_is_found_on_a_later_page(fake: FakeGitHub, gh: Harness) -> None:
    page2 = f"{API}/repositories/1/issues/12/comments?per_page=100&page=2"
    fake.on(
        f"GET {COMMENTS}?per_page=100",
        reply(
            200, [comment(i, "chatter", "User") for i in range(100)], link=f'<{page2}>; rel="next"'
        ),
    )
    fake.on(
        "GET /repositories/1/issues/12/comments?per_page=100&page=2",
        reply(200, [comment(700, f"{SUMMARY_MARKER}\nold")]),
    )
    fake.on("PATCH /repos/octo/widgets/issues/comments/700", reply(200, {}))
    gh.run(lambda f: f.upsert_summary_comment(REPO, 12, "new"))
    assert len(fake.calls("PATCH /repos/octo/widgets/issues/comments/700")) == 1
    assert fake.calls(f"POST {COMMENTS}") == []


def test_a_person_quoting_the_marker_is_not_edited(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(
        f"GET {COMMENTS}?per_page=100", reply(200, [comment(9, f"> {SUMMARY_MARKER} why?", "User")])
    )
    fake.on(f"POST {COMMENTS}", reply(201, comment(10, "x")))
    gh.run(lambda f: f.upsert_summary_comment(REPO, 12, "mine"))
    assert len(fake.calls(f"POST {COMMENTS}")) == 1


def test_a_retried_upsert_rereads_instead_of_posting_twice(fake: FakeGitHub, gh: Harness) -> None:
    # The POST landed but its answer was lost; the retry lists again and finds it.
    body = f"{SUMMARY_MARKER}\nhello"
    fake.on(f"GET {COMMENTS}?per_page=100", reply(200, []), reply(200, [comment(3, body)]))
    fake.on(f"POST {COMMENTS}", httpx.ReadTimeout("lost"))
    gh.run(lambda f: f.upsert_summary_comment(REPO, 12, "hello"))
    assert len(fake.calls(f"POST {COMMENTS}")) == 1


# -- permissions and pull requests ----------------------------------------------------------

PERMISSION = "/repos/octo/widgets/collaborators/{}/permission"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"permission": "admin", "role_name": "admin"}, Permission.ADMIN),
        ({"permission": "write", "role_name": "maintain"}, Permission.MAINTAIN),
        ({"permission": "write", "role_name": "write"}, Permission.WRITE),
        ({"permission": "read", "role_name": "triage"}, Permission.TRIAGE),
        ({"permission": "read", "role_name": "read"}, Permission.READ),
        ({"permission": "none", "role_name": "none"}, Permission.NONE),
        ({"permission": "write"}, Permission.WRITE),
        ({"permission": "write", "role_name": "security-reviewer"}, Permission.WRITE),
        ({"permission": "owner-ish"}, Permission.NONE),
    ],
)
def test_permission_mapping(fake: FakeGitHub, gh: Harness, body: Any, expected: Permission) -> None:
    fake.on(f"GET {PERMISSION.format('mona')}", reply(200, body))
    assert gh.run(lambda f: f.permission(REPO, "mona")) is expected


def test_permission_of_a_stranger_is_none(gh: Harness) -> None:
    assert gh.run(lambda f: f.permission(REPO, "nobody")) is Permission.NONE


def test_user_names_cannot_walk_the_path(fake: FakeGitHub, gh: Harness) -> None:
    gh.run(lambda f: f.permission(REPO, "../../admin"))
    assert fake.requests[-1].url.raw_path.decode() == PERMISSION.format("..%2F..%2Fadmin")


PULLS = "/repos/octo/widgets/pulls"
FIND = f"GET {PULLS}?state=open&head=octo%3Aichor%2Fupdate&base=main"
PR_URL = "https://github.test/octo/widgets/pull/31"
PR = {
    "number": 31,
    "html_url": PR_URL,
    "head": {"sha": SHA},
    "base": {"sha": "b" * 40, "ref": "main"},
}
PR_REF = PullRequestRef(number=31, url=PR_URL, head_sha=SHA, base_sha="b" * 40, base_ref="main")


def test_find_pull_request(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(FIND, reply(200, [{**PR, "body": "<!-- ichor:change -->\nwhy"}]))
    found = gh.run(lambda f: f.find_pull_request(REPO, "ichor/update", "main"))
    # The body too: the engine reads its marker to know whose pull request it is.
    assert found == PullRequestRef(
        number=31,
        url=PR_URL,
        head_sha=SHA,
        base_sha="b" * 40,
        base_ref="main",
        body="<!-- ichor:change -->\nwhy",
    )


def test_get_pull_request(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"GET {PULLS}/31", reply(200, PR))
    assert gh.run(lambda f: f.get_pull_request(REPO, 31)) == PR_REF


def test_no_open_pull_request_is_none(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(FIND, reply(200, []))
    assert gh.run(lambda f: f.find_pull_request(REPO, "ichor/update", "main")) is None


def test_a_failed_lookup_raises(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(FIND, reply(500))
    with pytest.raises(TransientForgeError):
        gh.run(lambda f: f.find_pull_request(REPO, "ichor/update", "main"))


def test_open_pull_request(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"POST {PULLS}", reply(201, PR))
    ref = gh.run(
        lambda f: f.open_pull_request(REPO, head="ichor/update", base="main", title="T", body="B")
    )
    assert ref == PR_REF
    assert fake.bodies(f"POST {PULLS}") == [
        {"title": "T", "head": "ichor/update", "base": "main", "body": "B"}
    ]


def test_opening_an_existing_pull_request_returns_it(fake: FakeGitHub, gh: Harness) -> None:
    exists = {
        "message": "Validation Failed",
        "errors": [{"message": "A pull request already exists"}],
    }
    fake.on(f"POST {PULLS}", reply(422, exists))
    fake.on(FIND, reply(200, [PR]))
    ref = gh.run(
        lambda f: f.open_pull_request(REPO, head="ichor/update", base="main", title="T", body="B")
    )
    assert ref.number == 31


def test_other_422s_on_open_are_raised(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(
        f"POST {PULLS}",
        reply(422, {"message": "Validation Failed", "errors": [{"message": "No commits"}]}),
    )
    fake.on(FIND, reply(200, []))
    with pytest.raises(PermanentForgeError, match="422"):
        gh.run(
            lambda f: f.open_pull_request(
                REPO, head="ichor/update", base="main", title="T", body="B"
            )
        )


# -- construction ---------------------------------------------------------------------------


def test_from_settings_names_the_missing_variable(tmp_path: Path) -> None:
    with pytest.raises(PermanentForgeError, match="ICHOR_GITHUB_APP_ID"):
        GitHubForge.from_settings(Settings(github_private_key=pem()))
    with pytest.raises(PermanentForgeError, match="ICHOR_GITHUB_PRIVATE_KEY"):
        GitHubForge.from_settings(Settings(github_app_id="42"))
    key_file = tmp_path / "app.pem"
    key_file.write_text(pem(), encoding="utf-8")
    forge = GitHubForge.from_settings(
        Settings(
            github_app_id="42", github_private_key=str(key_file), github_url="https://ghe.example"
        )
    )
    assert forge.name == "github"
    forge.close()


def test_close_closes_only_its_own_client(gh: Harness) -> None:
    gh.run(lambda f: f.close())
    assert not gh.client.is_closed
    own = GitHubForge(app_id="1", private_key_pem=pem(), api_url=API, web_url="https://github.test")
    own.close()
    assert own._seam.client.is_closed


def test_a_url_without_a_host_is_refused() -> None:
    with pytest.raises(PermanentForgeError, match="web URL"):
        GitHubForge(app_id="1", private_key_pem=pem(), api_url=API, web_url="github.test")


def test_the_request_identifies_the_app(fake: FakeGitHub, gh: Harness) -> None:
    fake.on(f"POST {CHECKS}", reply(201, {"id": 1}))
    gh.run(lambda f: f.start_check(REPO, SHA, external_id="e"))
    assert {r.headers["user-agent"] for r in fake.requests} == {"ichor-bot"}
    assert all(re.match(r"Bearer \S+$", r.headers["authorization"]) for r in fake.requests)
