"""Every form of a forge credential is found, and cut from text."""

from __future__ import annotations

import base64

from bot.forges.http.redaction import REDACTED, header_forms, scrub, secrets_list, token_forms

TOKEN = "s3cr3t-t0ken-value"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_token_forms_cover_both_halves_of_basic() -> None:
    forms = token_forms(TOKEN)
    for pair in (f"x-access-token:{TOKEN}", f"oauth2:{TOKEN}", f"{TOKEN}:x-oauth-basic"):
        assert b64(pair) in forms
    assert b64(f"{TOKEN}:") in forms and b64(f"{TOKEN}:").rstrip("=") in forms
    assert TOKEN in forms
    assert token_forms("") == set()


def test_a_basic_header_yields_the_token_whichever_half_it_is() -> None:
    for pair in (f"{TOKEN}:x-oauth-basic", f"x-access-token:{TOKEN}", f"{TOKEN}:"):
        forms = header_forms(f"Authorization: Basic {b64(pair)}")
        assert TOKEN in forms and pair in forms
        assert "x-oauth-basic" not in forms and "x-access-token" not in forms


def test_scrub_cuts_longest_first_and_leaves_short_words() -> None:
    secrets = secrets_list({*token_forms(TOKEN), "ab"})
    assert "ab" not in secrets
    text = f"Basic {b64(TOKEN + ':x-oauth-basic')} and {TOKEN} and about"
    assert scrub(text, secrets) == f"Basic {REDACTED} and {REDACTED} and about"
