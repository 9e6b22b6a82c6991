"""The forge parts every adapter shares: status errors, waits, clipping, locks, purity."""

from __future__ import annotations

import ast
import base64
import time
from pathlib import Path

import httpx
import pytest

from bot.errors import ForgeStatusError, PermanentForgeError, TransientForgeError
from bot.forges.clipping import clip, one_line
from bot.forges.gitea.http import POLICY as GITEA
from bot.forges.github.http import POLICY as GITHUB
from bot.forges.gitlab.api import POLICY as GITLAB
from bot.forges.http.errors import http_error, phrase
from bot.forges.http.redaction import REDACTED, redact, secrets_list, token_forms
from bot.forges.http.retry import server_wait
from bot.forges.http.seam import SECONDARY_LIMIT_WAIT, Policy, Seam
from bot.forges.keyed_locks import KeyedLocks
from tests.support.together import together

TOKEN = "glpat-0123456789abcdefghij"
NOW = 1_700_000_000.0


# -- HTTP status -> error -------------------------------------------------------------------


def test_a_4xx_is_a_status_error_with_its_status_and_message() -> None:
    error = http_error("Gitea GET /x", 404, "  no  such\nthing ", hint=" (hint)")
    assert isinstance(error, ForgeStatusError) and isinstance(error, PermanentForgeError)
    assert (error.status, error.message) == (404, "no such thing")
    assert str(error) == "Gitea GET /x: 404 Not Found: no such thing (hint)"


def test_5xx_and_429_are_transient_with_the_wait_given() -> None:
    for status in (500, 503, 429):
        error = http_error("X", status, "", retry_after=3.0)
        assert isinstance(error, TransientForgeError) and error.retry_after == 3.0


def test_a_message_saying_only_the_reason_is_not_repeated() -> None:
    assert str(http_error("X", 404, "not found")) == "X: 404 Not Found"
    assert phrase(599) == ""
    assert str(http_error("X", 599, "odd")) == "X: 599: odd"


@pytest.mark.parametrize(
    "secret", [TOKEN, base64.b64encode(f"oauth2:{TOKEN}".encode()).decode("ascii")]
)
def test_a_token_straddling_the_cut_is_redacted_before_the_message_is_shortened(
    secret: str,
) -> None:
    # The token starts 290 characters in: cut first, its first 10 characters would remain.
    message = "x" * 290 + secret + " tail"
    secrets = secrets_list(token_forms(TOKEN))
    for error in (
        http_error("X", 400, message, secrets=secrets),
        Seam(GITHUB).error("X", httpx.Response(400, json={"message": message}), secrets),
    ):
        assert secret[:10] not in str(error) and REDACTED in str(error)
        assert isinstance(error, ForgeStatusError) and secret[:10] not in error.message


def test_redact_cuts_every_form_from_the_text_and_the_message() -> None:
    error = ForgeStatusError(f"failed with {TOKEN}", status=400, message=f"m {TOKEN}")
    redact(error, secrets_list(token_forms(TOKEN)))
    assert TOKEN not in str(error) and TOKEN not in error.message


def test_github_reads_its_rate_limit_403s_as_transient() -> None:
    seam = Seam(GITHUB, clock=lambda: NOW)

    def answer(headers: dict[str, str], message: str) -> httpx.Response:
        return httpx.Response(403, headers=headers, json={"message": message})

    exhausted = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(NOW + 30)}
    limited = seam.error("G", answer(exhausted, "limit"), ())
    assert isinstance(limited, TransientForgeError) and limited.retry_after == 30.0
    secondary = seam.error("G", answer({}, "You have exceeded a secondary rate limit"), ())
    assert isinstance(secondary, TransientForgeError)
    assert secondary.retry_after == SECONDARY_LIMIT_WAIT
    refused = seam.error("G", answer({"x-ratelimit-remaining": "9"}, "no"), ())
    assert isinstance(refused, ForgeStatusError) and refused.status == 403


# -- waits ----------------------------------------------------------------------------------


def test_retry_after_in_seconds_or_as_an_http_date() -> None:
    assert server_wait({"Retry-After": "7"}, NOW) == 7.0
    assert server_wait({"retry-after": "-3"}, NOW) == 0.0
    date = "Tue, 14 Nov 2023 22:13:40 GMT"  # NOW + 20 s
    assert server_wait({"Retry-After": date}, NOW) == 20.0
    assert server_wait({"Retry-After": "soon"}, NOW) is None


def test_an_exhausted_rate_limit_waits_for_its_reset() -> None:
    github = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(NOW + 12)}
    assert server_wait(github, NOW) == 12.0
    assert server_wait({**github, "X-RateLimit-Remaining": "5"}, NOW) is None
    assert server_wait({"RateLimit-Reset": str(NOW + 4)}, NOW) == 4.0  # GitLab, alone
    assert server_wait({"RateLimit-Reset": "junk"}, NOW) is None
    assert server_wait({}, NOW) is None


# -- clipping -------------------------------------------------------------------------------


def test_clip_by_characters_or_utf8_bytes_ends_in_the_note() -> None:
    assert clip("short", 10) == "short"
    assert clip("abcdefghij", 5) == "abcd…"
    assert clip("abcdefghij", 6, note="[cut]") == "a[cut]"
    assert clip("ééééé", 6, note="", utf8=True) == "ééé"
    assert clip("éééé", 5, note="", utf8=True) == "éé"  # never half a character
    assert one_line(" a \n b\tc ", 4) == "a b…"


# -- locks ----------------------------------------------------------------------------------


def test_keyed_locks_serialise_one_key_and_are_freed_after_use() -> None:
    locks, order = KeyedLocks(), []

    def job(key: str, name: str) -> None:
        with locks.hold(key):
            order.append(f"{name} in")
            time.sleep(0)
            order.append(f"{name} out")

    def main() -> None:
        together(lambda: job("pr-1", "a"), lambda: job("pr-1", "b"), lambda: job("pr-2", "c"))
        assert len(locks) == 0

    main()
    assert order.index("a out") < order.index("b in")


def test_a_failing_holder_frees_its_key() -> None:
    locks = KeyedLocks()

    def main() -> None:
        with pytest.raises(RuntimeError), locks.hold(("sha", 1)):
            raise RuntimeError
        assert len(locks) == 0

    main()


# -- purity ---------------------------------------------------------------------------------

PURE = ("plans.py", "clipping.py", "http/errors.py", "http/redaction.py")
IO = {
    "asyncio",
    "httpx",
    "requests",
    "gitlab",
    "gidgethub",
    "redis",
    "rq",
    "subprocess",
    "os",
    "socket",
    "time",
    "pathlib",
    "random",
    "threading",
    "logging",
    "bot.settings",
    "bot.checks",
}


def test_the_shared_cores_import_no_io() -> None:
    root = Path(__file__).resolve().parents[2] / "bot" / "forges"
    for name in PURE:
        tree = ast.parse((root / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            else:
                continue
            for module in modules:
                assert not any(module == m or module.startswith(m + ".") for m in IO), (
                    name,
                    module,
                )


@pytest.mark.parametrize("policy", [GITHUB, GITLAB, GITEA])
def test_every_forge_redacts_a_token_straddling_the_cut(policy: Policy) -> None:
    answer = httpx.Response(400, json={"message": "x" * 290 + TOKEN})
    error = Seam(policy).error("X", answer, secrets_list(token_forms(TOKEN)))
    assert TOKEN[:10] not in str(error) and REDACTED in str(error)
    assert isinstance(error, ForgeStatusError) and TOKEN[:10] not in error.message
