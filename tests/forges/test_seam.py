"""The request seam once, on a mock transport: what every forge's request goes through (sent,
timed out, retried, accounted, scrubbed, mapped). The adapters' own tests run it over HTTP
against the fake forges."""

from __future__ import annotations

import logging
from collections.abc import Callable

import httpx
import pytest
import requests

from bot.errors import ForgeStatusError, PermanentForgeError, TransientForgeError
from bot.forges.http.redaction import REDACTED, secrets_list, token_forms
from bot.forges.http.seam import SECONDARY_LIMIT_WAIT, Policy, RateLimit, Seam
from bot.forges.http.session import SeamSession

TOKEN = "tok-0123456789abcdef"
SECRETS = secrets_list(token_forms(TOKEN))
NOW = 1_700_000_000.0
URL = "https://forge.test/api/repos/o/r"


def seam(
    answer: Callable[[httpx.Request], httpx.Response],
    policy: Policy | None = None,
    sleeps: list[float] | None = None,
) -> Seam:
    client = httpx.Client(transport=httpx.MockTransport(answer), follow_redirects=False)
    delays = sleeps if sleeps is not None else []
    return Seam(policy or Policy("Forge"), client, clock=lambda: NOW, sleep=delays.append)


def test_a_success_is_returned_read_and_sends_what_it_was_given() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True})

    response = seam(answer).send(
        "POST", URL, headers={"Authorization": f"token {TOKEN}"}, json={"a": 1}, params={"p": 2}
    )
    assert response.json() == {"ok": True}
    assert seen[0].url == URL + "?p=2" and seen[0].content == b'{"a":1}'


def test_a_transport_failure_is_transient_names_where_and_never_the_token() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout(f"timed out sending {TOKEN}")

    with pytest.raises(TransientForgeError) as caught:
        seam(answer).send("GET", URL, secrets=SECRETS)
    assert str(caught.value).startswith("Forge GET /api/repos/o/r: ConnectTimeout")
    assert TOKEN not in str(caught.value) and REDACTED in str(caught.value)


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_5xx_and_429_are_transient_with_the_wait_the_server_named(status: int) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"Retry-After": "7"}, json={"message": "busy"})

    with pytest.raises(TransientForgeError) as caught:
        seam(answer).send("GET", URL, where="Forge GET /x")
    assert caught.value.retry_after == 7.0
    assert str(caught.value).startswith(f"Forge GET /x: {status} ")


def test_a_4xx_is_a_status_error_with_the_forges_message_and_its_hint() -> None:
    policy = Policy("Forge", hint=lambda r: " (check the token)" if r.status_code == 401 else "")

    def answer(request: httpx.Request) -> httpx.Response:
        status = 401 if request.url.path.endswith("401") else 404
        return httpx.Response(status, json={"message": f"no {TOKEN}", "errors": ["e1"]})

    for path, status, hint in (("/401", 401, " (check the token)"), ("/404", 404, "")):
        with pytest.raises(ForgeStatusError) as caught:
            seam(answer, policy).send("GET", URL + path, secrets=SECRETS)
        error = caught.value
        assert error.status == status and error.message == f"no {REDACTED}; e1"
        assert str(error).endswith(f": no {REDACTED}; e1{hint}")


def test_a_redirect_is_not_followed_and_an_unknown_status_is_an_error() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/moved":
            return httpx.Response(301, headers={"Location": "https://elsewhere.test/"})
        return httpx.Response(520, text="origin error")

    with pytest.raises(ForgeStatusError) as moved:
        seam(answer).send("GET", "https://forge.test/moved")
    assert moved.value.status == 301
    with pytest.raises(TransientForgeError, match="GET /odd: 520: origin error"):
        seam(answer).send("GET", "https://forge.test/odd")


def test_a_403_is_a_rate_limit_only_where_the_forge_says_so() -> None:
    exhausted = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(NOW + 30)}

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/secondary":
            return httpx.Response(403, json={"message": "You exceeded a secondary rate limit"})
        if request.url.path == "/refused":
            return httpx.Response(403, headers={"x-ratelimit-remaining": "9"}, json={})
        return httpx.Response(403, headers=exhausted, json={"message": "limit"})

    github = Policy("GitHub", limits_with_403=True)
    with pytest.raises(TransientForgeError) as limited:
        seam(answer, github).send("GET", "https://forge.test/limited")
    assert limited.value.retry_after == 30.0
    with pytest.raises(TransientForgeError) as secondary:
        seam(answer, github).send("GET", "https://forge.test/secondary")
    assert secondary.value.retry_after == SECONDARY_LIMIT_WAIT
    with pytest.raises(ForgeStatusError):
        seam(answer, github).send("GET", "https://forge.test/refused")
    with pytest.raises(ForgeStatusError):  # another forge's 403 is a refusal
        seam(answer).send("GET", "https://forge.test/limited")


def test_the_rate_limit_each_answer_reports_is_kept_per_bucket(
    caplog: pytest.LogCaptureFixture,
) -> None:
    left = iter(["2", "0"])

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"RateLimit-Remaining": next(left), "RateLimit-Limit": "600"}
        return httpx.Response(200, headers={**headers, "RateLimit-Reset": str(NOW + 9)})

    s = seam(answer, Policy("GitLab"))
    assert s.rate("a") is None
    s.send("GET", URL, bucket="a")
    assert s.rate("a") == RateLimit(2, 600, NOW + 9) and s.rate("b") is None
    with caplog.at_level(logging.INFO, logger="ichor.forge.gitlab"):
        s.send("GET", URL, bucket="a")
    assert s.rate("a") == RateLimit(0, 600, NOW + 9)
    assert "GitLab rate limit spent (a); it resets in 9s" in caplog.text


def test_each_rate_limit_is_handed_to_the_observer_which_never_fails_the_request() -> None:
    seen: list[tuple[str, RateLimit]] = []

    def observe(bucket: str, rate: RateLimit) -> None:
        seen.append((bucket, rate))
        raise RuntimeError("the store is down")

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"X-RateLimit-Remaining": "41", "X-RateLimit-Limit": "5000"}
        return httpx.Response(200, headers={**headers, "X-RateLimit-Reset": str(NOW + 60)})

    client = httpx.Client(transport=httpx.MockTransport(answer))
    s = Seam(Policy("GitHub"), client, clock=lambda: NOW, observe=observe)
    assert s.send("GET", URL, bucket="installation 42").status_code == 200
    assert seen == [("installation 42", RateLimit(41, 5000, NOW + 60))]


def test_an_expected_status_is_an_answer_not_an_error() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(304, headers={"ETag": '"abc"'})

    assert seam(answer).send("GET", URL, expect=(304,)).headers["etag"] == '"abc"'
    with pytest.raises(ForgeStatusError):  # unless expected, a 304 is as any other 3xx
        seam(answer).send("GET", URL)


def test_an_answer_over_the_limit_is_refused_unread() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"x" * 2048)

    assert seam(answer).send("GET", URL, limit=4096).content == b"x" * 2048
    with pytest.raises(PermanentForgeError, match="over 1024 bytes"):
        seam(answer).send("GET", URL, limit=1024)


def test_run_retries_an_operation_whole_and_waits_what_the_server_named() -> None:
    answers = iter([503, 429, 200])

    def answer(request: httpx.Request) -> httpx.Response:
        status = next(answers)
        return httpx.Response(status, headers={"Retry-After": "2"} if status == 429 else {})

    sleeps: list[float] = []
    s = seam(answer, sleeps=sleeps)
    assert s.run(lambda: s.send("GET", URL).status_code) == 200
    assert len(sleeps) == 2 and sleeps[1] == 2.0


def test_run_lets_a_wait_past_the_policys_limit_propagate_for_the_queue() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(429, headers={"Retry-After": "3600"})

    sleeps: list[float] = []
    s = seam(answer, sleeps=sleeps)
    with pytest.raises(TransientForgeError) as caught:
        s.run(lambda: s.send("GET", URL))
    assert caught.value.retry_after == 3600.0 and sleeps == []


def test_a_requests_session_sends_through_the_seam() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method == "DELETE":
            return httpx.Response(503, json={"message": f"down {TOKEN}"})
        return httpx.Response(201, headers={"Link": '<https://forge.test/n>; rel="next"'}, json=[1])

    session = SeamSession(seam(answer, Policy("GitLab")), SECRETS)
    response = session.post(URL, json={"a": 1}, headers={"PRIVATE-TOKEN": TOKEN})
    assert response.status_code == 201 and response.json() == [1]
    assert response.links["next"]["url"] == "https://forge.test/n"
    assert seen[0].content == b'{"a": 1}' and seen[0].headers["private-token"] == TOKEN
    with pytest.raises(TransientForgeError) as caught:
        session.delete(URL)
    assert str(caught.value).startswith("GitLab DELETE /api/repos/o/r: 503 Service Unavailable")
    assert TOKEN not in str(caught.value)
    assert session.last_request() == ("DELETE", URL)
    assert not isinstance(caught.value, requests.RequestException)
