"""Branch names: deterministic, short, valid refs, never shared by two different requests."""

from __future__ import annotations

import hashlib
import re

import pytest

from bot.changes.branch import MAX_BRANCH_BYTES, change_branch, ignore_branch

VALID = re.compile(r"^ichor/[a-z0-9_-]+$")


def test_plain_names_are_kept() -> None:
    assert change_branch("approve", "web", "frontend") == "ichor/approve-web-frontend"
    assert change_branch("delete", None, "prod") == "ichor/delete-_cluster-prod"
    assert ignore_branch("prod", 12) == "ichor/ignore-prod-pr12"


def test_characters_outside_the_alphabet_add_a_hash_of_the_full_name() -> None:
    got = change_branch("approve", "web", "front.end")
    digest = hashlib.sha256(b"ichor/approve-web-front.end").hexdigest()[:8]
    assert got == f"ichor/approve-web-front-end-{digest}"
    # Sanitizing alone would make these two the same branch; the hash keeps them apart.
    assert change_branch("approve", "web", "front-end") == "ichor/approve-web-front-end"
    assert got != change_branch("approve", "web", "front-end")


def test_a_long_name_is_cut_to_100_bytes_with_its_hash() -> None:
    name = "n" * 253
    got = change_branch("reject", "web", name)
    assert len(got.encode()) <= MAX_BRANCH_BYTES
    assert got.startswith("ichor/reject-web-nnn") and re.search(r"-[0-9a-f]{8}$", got)
    assert got != change_branch("reject", "web", "n" * 252)


@pytest.mark.parametrize(
    ("namespace", "name"),
    [
        ("Web", "API"),
        ("web", "a..b"),
        ("web", "x@{y}"),
        ("web", "-lead-"),
        ("web", "ü"),
        ("web", "a/b"),
        ("web", "\udcff"),
        ("", ""),
    ],
)
def test_every_branch_is_a_valid_short_ref(namespace: str, name: str) -> None:
    got = change_branch("approve", namespace, name)
    assert VALID.match(got), got
    assert len(got.encode()) <= MAX_BRANCH_BYTES
    assert ".." not in got and not got.endswith(("-", "/", ".lock"))


def test_ignore_branches_sanitize_the_target_only() -> None:
    got = ignore_branch("Prod", 3)
    assert VALID.match(got) and got.endswith(got[-8:]) and "pr3" in got
