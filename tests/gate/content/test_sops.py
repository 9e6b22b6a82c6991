"""When a document with a sops key counts as encrypted (issue 21 item 1)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from bot.gate.content.sops import is_encrypted_value, sops_problem
from tests.conftest import FIXTURES

ENC = "ENC[AES256_GCM,data:YQ==,iv:aXY=,tag:dGFn,type:str]"
KEY = {"recipient": "age1x", "enc": "-----BEGIN AGE ENCRYPTED FILE-----\n..."}


def envelope(**extra: Any) -> dict[str, Any]:
    return {"age": [KEY], "lastmodified": "2025-12-22T01:41:08Z", "mac": ENC, **extra}


def problem(doc: dict[str, Any]) -> str | None:
    found = sops_problem(doc, {}, 1)
    return None if found is None else found[1]


def test_real_sops_output_counts() -> None:
    doc = yaml.safe_load((FIXTURES / "gate/sops/github-auth.enc.age.yaml").read_text())
    assert problem(doc) is None


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"version": "3.8.1"}, "has no mac"),
        (envelope(mac="x"), "has no mac"),
        (envelope(lastmodified="yesterday"), "no lastmodified"),
        (envelope(age=[]), "no encrypted data key"),
        (envelope(age=[{"recipient": "age1x"}]), "no encrypted data key"),
        (envelope(encrypted_regex="^data$", unencrypted_suffix="_u"), "at most one"),
    ],
)
def test_an_envelope_sops_did_not_write(env: dict[str, Any], why: str) -> None:
    assert why in (problem({"data": {"a": ENC}, "sops": env}) or "")


def test_key_groups_hold_the_keys_when_no_top_level_list_does() -> None:
    env = envelope(age=[], key_groups=[{"pgp": [{"fp": "F", "enc": "x"}]}])
    assert problem({"data": {"a": ENC}, "sops": env}) is None


@pytest.mark.parametrize(
    ("env", "data", "clear"),
    [
        (envelope(), {"password": "hunter2"}, False),  # the default rule encrypts it
        (envelope(), {"password_unencrypted": "x", "b": ENC}, True),
        (envelope(encrypted_regex="^(data|stringData)$"), {"p": "x", "q": ENC}, False),
        (envelope(encrypted_regex="^userKey$"), {"userID": "a", "userKey": ENC}, True),
        (envelope(encrypted_suffix="_enc"), {"a_enc": ENC, "b": "x"}, True),
        (envelope(unencrypted_regex="^b$"), {"a": ENC, "b": "x"}, True),
        (envelope(encrypted_regex="^nothing$"), {"p": "x"}, False),  # nothing encrypted
        (envelope(encrypted_comment_regex="sops"), {"p": "x", "q": ENC}, False),  # no comments
        (envelope(encrypted_regex="\\pL"), {"p": "x", "q": ENC}, False),  # cannot tell
        (envelope(), {"p": "", "q": None, "r": ENC}, True),  # SOPS leaves these
    ],
)
def test_values_by_the_envelope_rule(
    env: dict[str, Any], data: dict[str, Any], clear: bool
) -> None:
    assert (problem({"stringData": data, "sops": env}) is None) is clear


def test_encrypted_values_are_as_sops_parses_them() -> None:
    assert is_encrypted_value(ENC)
    assert not is_encrypted_value("ENC[AES256_GCM,data:abc,type:str]")  # no iv, no tag
    assert not is_encrypted_value("ENC[AES256_GCM,data:a,iv:b,tag:c,type:str")
    assert not is_encrypted_value(3)
