"""GitHub App authentication: the JWT's claims, loading the key, caching installation tokens."""

from __future__ import annotations

import time
from functools import cache
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from bot.errors import PermanentForgeError
from bot.forges.github.auth import InstallationTokens, app_jwt, load_private_key, parse_expiry
from tests.support.together import together

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z
HOUR_LATER = "2023-11-14T23:13:20Z"


@cache
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | None = None,
    encryption: serialization.KeySerializationEncryption | None = None,
) -> str:
    key = key or rsa_key()
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        encryption or serialization.NoEncryption(),
    ).decode()


def claims(token: str) -> dict[str, Any]:
    return jwt.decode(
        token,
        rsa_key().public_key(),
        algorithms=["RS256"],
        options={"verify_exp": False, "verify_iat": False},
    )


# -- app_jwt --------------------------------------------------------------------------------


def test_app_jwt_claims() -> None:
    token = app_jwt("12345", pem(), now=NOW)
    assert jwt.get_unverified_header(token)["alg"] == "RS256"
    got = claims(token)
    assert got["iss"] == "12345"
    assert got["iat"] == NOW - 60
    assert got["exp"] == NOW + 540
    assert got["exp"] - got["iat"] <= 600


def test_app_jwt_is_valid_now() -> None:
    import time

    now = time.time()
    decoded = jwt.decode(app_jwt("7", pem(), now=now), rsa_key().public_key(), algorithms=["RS256"])
    assert decoded["iss"] == "7"


@pytest.mark.parametrize("bad", ["", "not a key", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n"])
def test_app_jwt_with_an_unusable_key_is_a_forge_error(bad: str) -> None:
    with pytest.raises(PermanentForgeError, match="cannot sign") as caught:
        app_jwt("1", bad, now=NOW)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


# -- load_private_key ----------------------------------------------------------------------


def test_pem_text_is_accepted() -> None:
    text = pem()
    assert load_private_key(text).strip() == text.strip()
    assert load_private_key(f"\n  {text}  \n").strip() == text.strip()


def test_a_path_to_a_pem_file_is_read(tmp_path: Path) -> None:
    key_file = tmp_path / "app.private-key.pem"
    key_file.write_text(pem(), encoding="utf-8")
    assert load_private_key(str(key_file)).strip() == pem().strip()


def test_escaped_newlines_from_a_one_line_variable_are_restored() -> None:
    one_line = pem().strip().replace("\n", "\\n")
    loaded = load_private_key(one_line)
    assert app_jwt("1", loaded, now=NOW)  # usable


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pem"
    with pytest.raises(PermanentForgeError) as caught:
        load_private_key(str(missing))
    assert str(missing) in str(caught.value)
    assert "ICHOR_GITHUB_PRIVATE_KEY" in str(caught.value)


def test_key_material_without_its_begin_line_is_never_echoed() -> None:
    body = "".join(pem().strip().splitlines()[1:-1])  # the base64 alone, as if pasted badly
    with pytest.raises(PermanentForgeError) as caught:
        load_private_key(body)
    text = str(caught.value)
    assert "ICHOR_GITHUB_PRIVATE_KEY" in text
    assert body[:20] not in text and body[-20:] not in text


def test_broken_pem_text_is_refused_without_echoing_it() -> None:
    broken = pem().replace("A", "!")
    with pytest.raises(PermanentForgeError) as caught:
        load_private_key(broken)
    assert "not hold a readable PEM private key" in str(caught.value)
    assert broken.splitlines()[1][:16] not in str(caught.value)


def test_an_encrypted_key_is_refused() -> None:
    encrypted = pem(encryption=serialization.BestAvailableEncryption(b"pw"))
    with pytest.raises(PermanentForgeError, match="encrypted"):
        load_private_key(encrypted)


def test_a_key_that_is_not_rsa_is_refused(tmp_path: Path) -> None:
    key_file = tmp_path / "ec.pem"
    key_file.write_text(pem(ec.generate_private_key(ec.SECP256R1())), encoding="utf-8")
    with pytest.raises(PermanentForgeError, match="not RSA") as caught:
        load_private_key(str(key_file))
    assert str(key_file) in str(caught.value)


# -- installation tokens -------------------------------------------------------------------


def test_parse_expiry() -> None:
    assert parse_expiry(HOUR_LATER) == NOW + 3600
    assert parse_expiry("2023-11-14T23:13:20+00:00") == NOW + 3600
    assert parse_expiry("tomorrow") is None
    assert parse_expiry(None) is None


class FakeTokenEndpoint:
    def __init__(self, *tokens: str, expires_at: Any = HOUR_LATER, delay: float = 0.0) -> None:
        self.tokens = list(tokens)
        self.expires_at = expires_at
        self.delay = delay
        self.calls: list[tuple[str, str]] = []

    def __call__(self, path: str, bearer: str) -> Any:
        self.calls.append((path, bearer))
        if self.delay:
            time.sleep(self.delay)
        expiry = self.expires_at.pop(0) if isinstance(self.expires_at, list) else self.expires_at
        return {"token": self.tokens.pop(0), "expires_at": expiry}


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def tokens_with(endpoint: FakeTokenEndpoint, clock: Clock) -> InstallationTokens:
    return InstallationTokens(app_id="42", private_key_pem=pem(), request=endpoint, clock=clock)


def test_the_token_request_is_authorised_by_the_app_jwt() -> None:
    endpoint = FakeTokenEndpoint("t1")
    assert tokens_with(endpoint, Clock()).get(77) == "t1"
    [(path, bearer)] = endpoint.calls
    assert path == "/app/installations/77/access_tokens"
    assert claims(bearer)["iss"] == "42" and claims(bearer)["iat"] == NOW - 60


def test_a_token_is_cached_until_five_minutes_before_it_expires() -> None:
    two_hours_later = "2023-11-15T00:13:20Z"
    endpoint = FakeTokenEndpoint("t1", "t2", expires_at=[HOUR_LATER, two_hours_later])
    clock = Clock()
    tokens = tokens_with(endpoint, clock)

    def scenario() -> list[str]:
        got = [tokens.get(1)]
        clock.now = NOW + 3600 - 301  # still more than five minutes left
        got.append(tokens.get(1))
        clock.now = NOW + 3600 - 299  # inside the margin: refreshed
        got.append(tokens.get(1))
        got.append(tokens.get(1))
        return got

    assert scenario() == ["t1", "t1", "t2", "t2"]
    assert len(endpoint.calls) == 2


def test_installations_have_their_own_tokens() -> None:
    endpoint = FakeTokenEndpoint("a", "b")
    tokens = tokens_with(endpoint, Clock())

    def scenario() -> list[str]:
        return [tokens.get(1), tokens.get(2), tokens.get(1)]

    assert scenario() == ["a", "b", "a"]


@pytest.mark.parametrize("token", ["abc", "x" * 300, "ghs_" + "Z" * 36, "v1.0123456789abcdef"])
def test_tokens_of_any_length_and_shape_are_used_as_given(token: str) -> None:
    endpoint = FakeTokenEndpoint(token)
    assert tokens_with(endpoint, Clock()).get(1) == token


def test_concurrent_callers_share_one_request() -> None:
    endpoint = FakeTokenEndpoint("only", delay=0.01)
    tokens = tokens_with(endpoint, Clock())

    def scenario() -> list[str]:
        return together(*(lambda: tokens.get(5) for _ in range(20)))

    assert scenario() == ["only"] * 20
    assert len(endpoint.calls) == 1


def test_an_unreadable_expiry_means_the_token_is_used_once() -> None:
    endpoint = FakeTokenEndpoint("t1", "t2", expires_at="soon")
    tokens = tokens_with(endpoint, Clock())

    def scenario() -> list[str]:
        return [tokens.get(1), tokens.get(1)]

    assert scenario() == ["t1", "t2"]


@pytest.mark.parametrize("body", [{}, {"token": ""}, {"token": 5}, ["token"], None])
def test_a_response_without_a_token_is_an_error(body: Any) -> None:
    def request(path: str, bearer: str) -> Any:
        return body

    tokens = InstallationTokens(app_id="1", private_key_pem=pem(), request=request, clock=Clock())
    with pytest.raises(PermanentForgeError, match="no token"):
        tokens.get(3)


def test_invalidate_forgets_only_the_refused_token() -> None:
    endpoint = FakeTokenEndpoint("t1", "t2", "t3")
    tokens = tokens_with(endpoint, Clock())

    def scenario() -> list[str]:
        first = tokens.get(1)
        tokens.invalidate(1, "some older token")  # a late report: t1 stays
        kept = tokens.get(1)
        tokens.invalidate(1, first)
        return [first, kept, tokens.get(1)]

    assert scenario() == ["t1", "t1", "t2"]
