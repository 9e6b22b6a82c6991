"""Signature and token verification on raw bytes, with rotation and honest failure reasons."""

from __future__ import annotations

import hmac

import pytest

from bot.webhooks import Verification, verify_gitea, verify_github, verify_gitlab
from tests.webhooks.helpers import hex_hmac, raw, standard_webhooks_signature

BODY = raw("github/pull_request__opened.json")
SECRET = "s3cret-current"
OLD = "s3cret-previous"
# The Standard Webhooks specification's published test vector.
SW_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SW_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SW_TIMESTAMP = "1614265330"
SW_BODY = b'{"test": 2432232314}'
SW_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def assert_fails(result: Verification, *fragments: str) -> None:
    assert not result.ok
    for fragment in fragments:
        assert fragment in result.reason
    # A reason is logged and returned to the sender: never a secret, never a signature.
    for secret in (SECRET, OLD, SW_SECRET, SW_SECRET.removeprefix("whsec_")):
        assert secret not in result.reason
    assert hex_hmac(SECRET, BODY) not in result.reason


# GitHub


def github(signature: str | None) -> dict[str, str]:
    return {} if signature is None else {"x-hub-signature-256": signature}


def test_github_valid_signature_passes() -> None:
    result = verify_github(BODY, github("sha256=" + hex_hmac(SECRET, BODY)), [SECRET])
    assert result == Verification(True, "verified")


def test_spaces_around_a_signature_are_trimmed_at_both_ends() -> None:
    digest = hex_hmac(SECRET, BODY)
    for padded in (f"sha256={digest} ", f" sha256={digest}\t", f"\tsha256={digest}  "):
        assert verify_github(BODY, github(padded), [SECRET]).ok, repr(padded)
        assert verify_gitea(BODY, {"x-gitea-signature": f" {digest}\t"}, [SECRET]).ok
    assert verify_gitlab(BODY, {"x-gitlab-token": f" {SECRET} "}, [SECRET]).ok
    assert not verify_github(BODY, github(f"sha256= {digest}"), [SECRET]).ok  # inside: no


def test_github_accepts_a_bytes_secret_and_upper_case_hex() -> None:
    signature = "sha256=" + hex_hmac(SECRET, BODY).upper()
    assert verify_github(BODY, github(signature), [SECRET.encode()]).ok


def test_github_wrong_secret_fails() -> None:
    result = verify_github(BODY, github("sha256=" + hex_hmac("nope", BODY)), [SECRET])
    assert_fails(result, "does not match any configured secret")


def test_github_tampered_body_fails() -> None:
    signature = "sha256=" + hex_hmac(SECRET, BODY)
    assert_fails(verify_github(BODY + b" ", github(signature), [SECRET]), "does not match")


def test_github_missing_and_empty_signature_fail() -> None:
    assert_fails(verify_github(BODY, github(None), [SECRET]), "missing X-Hub-Signature-256")
    assert_fails(verify_github(BODY, github(""), [SECRET]), "X-Hub-Signature-256 is empty")


@pytest.mark.parametrize(
    "signature",
    [
        hex_hmac(SECRET, BODY),  # no algorithm prefix
        "sha1=" + hex_hmac(SECRET, BODY)[:40],
        "sha256=" + hex_hmac(SECRET, BODY)[:-2],
        "sha256=" + "z" * 64,
        "sha256=" + "é" * 64,  # non-ASCII must not reach compare_digest (it would raise)
        "sha256= " + hex_hmac(SECRET, BODY)[1:],
    ],
)
def test_github_malformed_signature_fails(signature: str) -> None:
    assert_fails(verify_github(BODY, github(signature), [SECRET]), "sha256=<64 hex digits>")


def test_github_rotation_any_configured_secret_passes() -> None:
    old_signature = github("sha256=" + hex_hmac(OLD, BODY))
    assert verify_github(BODY, old_signature, [SECRET, OLD]).ok
    assert verify_github(BODY, old_signature, (OLD, SECRET)).ok
    assert not verify_github(BODY, old_signature, [SECRET]).ok


@pytest.mark.parametrize("secrets", [[], (), [""], ["", b""]])
def test_no_configured_secret_never_passes(secrets: list[str]) -> None:
    unsigned = {"x-hub-signature-256": "sha256=" + hex_hmac("", BODY)}
    assert_fails(verify_github(BODY, unsigned, secrets), "no secret configured for github")
    assert_fails(verify_gitea(BODY, {"x-gitea-signature": ""}, secrets), "no secret configured")
    assert_fails(verify_gitlab(BODY, {"x-gitlab-token": ""}, secrets), "no secret configured")


def test_a_single_string_is_refused_as_a_secret_list() -> None:
    # Each character would otherwise be a "secret": one-character keys are guessable.
    with pytest.raises(TypeError):
        verify_github(BODY, github("sha256=" + hex_hmac("s", BODY)), "s3cret")


def test_every_secret_is_compared_even_after_a_match(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append(a)
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    signature = github("sha256=" + hex_hmac(SECRET, BODY))
    assert verify_github(BODY, signature, [SECRET, OLD, "third"]).ok
    assert len(calls) == 3


# Gitea and Forgejo


def test_gitea_valid_signature_passes() -> None:
    assert verify_gitea(BODY, {"x-gitea-signature": hex_hmac(SECRET, BODY)}, [SECRET]).ok


def test_forgejo_signature_is_read_first() -> None:
    good, bad = hex_hmac(SECRET, BODY), hex_hmac("nope", BODY)
    assert verify_gitea(BODY, {"x-forgejo-signature": good, "x-gitea-signature": good}, [SECRET]).ok
    both = {"x-forgejo-signature": bad, "x-gitea-signature": good}
    assert_fails(verify_gitea(BODY, both, [SECRET]), "X-Forgejo-Signature", "does not match")


def test_gitea_empty_signature_is_a_failure_not_a_pass() -> None:
    # Gitea sends the header empty when the hook has no secret: nothing was signed.
    result = verify_gitea(BODY, {"x-gitea-signature": ""}, [SECRET])
    assert_fails(result, "X-Gitea-Signature is empty (no secret set on the hook?)")
    result = verify_gitea(BODY, {"x-forgejo-signature": "", "x-gitea-signature": ""}, [SECRET])
    assert_fails(result, "X-Forgejo-Signature is empty")


def test_gitea_missing_wrong_and_malformed_signatures_fail() -> None:
    assert_fails(verify_gitea(BODY, {}, [SECRET]), "missing X-Gitea-Signature")
    wrong = {"x-gitea-signature": hex_hmac("nope", BODY)}
    assert_fails(verify_gitea(BODY, wrong, [SECRET]), "does not match any configured secret")
    prefixed = {"x-gitea-signature": "sha256=" + hex_hmac(SECRET, BODY)}
    assert_fails(verify_gitea(BODY, prefixed, [SECRET]), "not 64 hex digits")


def test_gitea_rotation() -> None:
    headers = {"x-gitea-signature": hex_hmac(OLD, BODY)}
    assert verify_gitea(BODY, headers, [SECRET, OLD]).ok
    assert not verify_gitea(BODY, headers, [SECRET]).ok


# GitLab secret token


def test_gitlab_token_equal_to_a_secret_passes() -> None:
    assert verify_gitlab(BODY, {"x-gitlab-token": SECRET}, [SECRET]).ok
    assert verify_gitlab(BODY, {"x-gitlab-token": OLD}, [SECRET, OLD]).ok


def test_gitlab_token_failures() -> None:
    assert_fails(verify_gitlab(BODY, {}, [SECRET]), "missing X-Gitlab-Token")
    assert_fails(verify_gitlab(BODY, {"x-gitlab-token": ""}, [SECRET]), "X-Gitlab-Token is empty")
    wrong = {"x-gitlab-token": SECRET + "x"}
    assert_fails(verify_gitlab(BODY, wrong, [SECRET]), "does not match any configured secret")
    prefix = {"x-gitlab-token": SECRET[:-1]}
    assert_fails(verify_gitlab(BODY, prefix, [SECRET]), "does not match")
    assert_fails(verify_gitlab(BODY, {"x-gitlab-token": "\udcff"}, [SECRET]), "does not match")


# GitLab signing token (Standard Webhooks)


def signed(
    signature: str = SW_SIGNATURE, *, token: str | None = None, **overrides: str
) -> dict[str, str]:
    headers = {
        "webhook-id": SW_ID,
        "webhook-timestamp": SW_TIMESTAMP,
        "webhook-signature": signature,
    }
    if token is not None:
        headers["x-gitlab-token"] = token
    headers.update({key.replace("_", "-"): value for key, value in overrides.items()})
    return headers


def test_gitlab_signing_matches_the_standard_webhooks_vector() -> None:
    result = verify_gitlab(SW_BODY, signed(), [], signing_secrets=[SW_SECRET])
    assert result.ok
    # The whsec_ prefix is optional, as in the Standard Webhooks libraries.
    assert verify_gitlab(SW_BODY, signed(), [], [SW_SECRET.removeprefix("whsec_")]).ok


def test_gitlab_token_and_signature_are_both_required_when_both_configured() -> None:
    both = signed(token=SECRET)
    assert verify_gitlab(SW_BODY, both, [SECRET], signing_secrets=[SW_SECRET]).ok
    no_token = signed()
    assert_fails(verify_gitlab(SW_BODY, no_token, [SECRET], [SW_SECRET]), "missing X-Gitlab-Token")
    no_signature = {"x-gitlab-token": SECRET}
    result = verify_gitlab(SW_BODY, no_signature, [SECRET], signing_secrets=[SW_SECRET])
    assert_fails(result, "missing webhook-id, webhook-timestamp, webhook-signature")


def test_gitlab_signature_failures() -> None:
    keys = [SW_SECRET]
    assert_fails(verify_gitlab(SW_BODY + b" ", signed(), [], keys), "does not match")
    other_id = signed(webhook_id="msg_other")
    assert_fails(verify_gitlab(SW_BODY, other_id, [], keys), "does not match")
    assert_fails(verify_gitlab(SW_BODY, signed("v2," + SW_SIGNATURE[3:]), [], keys), "no v1")
    assert_fails(verify_gitlab(SW_BODY, signed("v1,not base64!"), [], keys), "no v1")
    assert_fails(verify_gitlab(SW_BODY, signed("v1,AAAA"), [], keys), "no v1")
    not_seconds = signed(webhook_timestamp="1614265330.5")
    assert_fails(verify_gitlab(SW_BODY, not_seconds, [], keys), "not Unix seconds")
    empty = signed(webhook_signature="")
    assert_fails(verify_gitlab(SW_BODY, empty, [], keys), "missing webhook-signature")


def test_gitlab_signature_list_with_one_valid_entry_passes() -> None:
    other = standard_webhooks_signature(
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", SW_ID, SW_TIMESTAMP, SW_BODY
    )
    entries = f"v2,abc {other} junk {SW_SIGNATURE}"
    assert verify_gitlab(SW_BODY, signed(entries), [], signing_secrets=[SW_SECRET]).ok


def test_gitlab_signing_rotation() -> None:
    fresh = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWY="
    assert verify_gitlab(SW_BODY, signed(), [], signing_secrets=[fresh, SW_SECRET]).ok
    assert not verify_gitlab(SW_BODY, signed(), [], signing_secrets=[fresh]).ok


def test_gitlab_misconfigured_signing_secret_is_reported_without_leaking_it() -> None:
    result = verify_gitlab(SW_BODY, signed(), [], signing_secrets=["whsec_not*base64"])
    assert_fails(result, "not whsec_<base64>")
    assert "not*base64" not in result.reason


def test_gitlab_timestamp_window_only_with_a_clock() -> None:
    ts = int(SW_TIMESTAMP)
    keys = [SW_SECRET]
    assert verify_gitlab(SW_BODY, signed(), [], keys, now=None).ok
    assert verify_gitlab(SW_BODY, signed(), [], keys, now=ts + 299).ok
    assert verify_gitlab(SW_BODY, signed(), [], keys, now=ts - 299).ok
    late = verify_gitlab(SW_BODY, signed(), [], keys, now=ts + 301)
    assert_fails(late, "outside the allowed window")
    assert_fails(verify_gitlab(SW_BODY, signed(), [], keys, now=ts - 301), "outside")
    assert verify_gitlab(SW_BODY, signed(), [], keys, now=ts + 3000, tolerance=3600).ok


def test_gitlab_signing_recomputed_over_a_real_payload() -> None:
    body = raw("gitlab/merge_request__update-woodpecker.json")
    key = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    headers = {
        "x-gitlab-token": SECRET,
        "idempotency-key": "0b7f0d6e-7d0c-4a38-9b84-0b2f6bd9c2a1",
        "webhook-id": "0b7f0d6e-7d0c-4a38-9b84-0b2f6bd9c2a1",
        "webhook-timestamp": "1700000000",
        "webhook-signature": standard_webhooks_signature(
            key, "0b7f0d6e-7d0c-4a38-9b84-0b2f6bd9c2a1", "1700000000", body
        ),
    }
    result = verify_gitlab(body, headers, [SECRET], ["whsec_" + key], now=1_700_000_010.0)
    assert result.ok
