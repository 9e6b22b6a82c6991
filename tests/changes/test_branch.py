"""Branch names: deterministic, short, valid refs; the hashed name never shared by two
different objects, and the readable one tried first only where it is written as it is."""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter

import pytest

from bot.changes.branch import (
    MAX_BRANCH_BYTES,
    change_branch,
    identity_key,
    ignore_branch,
    readable_branch,
)
from bot.gate.content.identity import Identity

VALID = re.compile(r"^ichor/[a-z0-9_-]+$")
KINDS = (
    ("", "ConfigMap"),
    ("", "Service"),
    ("", "Secret"),
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("example.com", "Widget"),
    ("other.example.com", "Widget"),
    ("talos.dev", "TalosMachine"),
)


def digest(identity: Identity) -> str:
    return hashlib.sha256(identity_key("prod", identity).encode()).hexdigest()[:8]


def test_the_readable_part_then_the_hash_of_the_whole_identity() -> None:
    settings = ("", "ConfigMap", "web", "settings")
    assert identity_key("prod", settings) == '["prod","","ConfigMap","web","settings"]'
    assert (
        change_branch("approve", "prod", settings)
        == f"ichor/approve-web-settings-{digest(settings)}"
    )
    node = ("talos.dev", "TalosMachine", "", "node-1")
    assert change_branch("delete", "prod", node) == f"ichor/delete-_cluster-node-1-{digest(node)}"
    # One object keeps its hash across verbs: the branches of its changes read alike.
    assert change_branch("reject", "prod", settings).endswith("-" + digest(settings))


def test_names_whose_parts_join_alike_get_different_branches() -> None:
    one, other = ("", "ConfigMap", "web-a", "b"), ("", "ConfigMap", "web", "a-b")
    assert change_branch("approve", "prod", one) == f"ichor/approve-web-a-b-{digest(one)}"
    assert change_branch("approve", "prod", other) == f"ichor/approve-web-a-b-{digest(other)}"
    assert change_branch("approve", "prod", one) != change_branch("approve", "prod", other)


def test_two_kinds_of_one_name_get_different_branches() -> None:
    deployment = ("apps", "Deployment", "web", "frontend")
    service = ("", "Service", "web", "frontend")
    assert change_branch("delete", "prod", deployment) != change_branch("delete", "prod", service)
    widgets = [("example.com", "Widget", "web", "w"), ("other.example.com", "Widget", "web", "w")]
    assert len({change_branch("delete", "prod", w) for w in widgets}) == 2


def test_characters_outside_the_alphabet_are_sanitized_and_the_hash_keeps_them_apart() -> None:
    dotted, dashed = ("", "ConfigMap", "web", "front.end"), ("", "ConfigMap", "web", "front-end")
    assert (
        change_branch("approve", "prod", dotted) == f"ichor/approve-web-front-end-{digest(dotted)}"
    )
    assert change_branch("approve", "prod", dotted) != change_branch("approve", "prod", dashed)


def test_a_long_name_is_cut_to_100_bytes_with_its_hash() -> None:
    long = ("", "ConfigMap", "web", "n" * 253)
    got = change_branch("reject", "prod", long)
    assert len(got.encode()) == MAX_BRANCH_BYTES
    assert got.startswith("ichor/reject-web-nnn") and got.endswith("-" + digest(long))
    assert got != change_branch("reject", "prod", ("", "ConfigMap", "web", "n" * 252))


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
        ("web", '"]'),
    ],
)
def test_every_branch_is_a_valid_short_ref(namespace: str, name: str) -> None:
    got = change_branch("approve", "prod", ("", "ConfigMap", namespace, name))
    assert VALID.match(got), got
    assert len(got.encode()) <= MAX_BRANCH_BYTES
    assert ".." not in got and not got.endswith(("-", "/", ".lock"))


def _part(rng: random.Random) -> str:
    """A namespace or name part, dashes and dots likely, now and then a long or odd one."""
    alphabet = "ab-" if rng.random() < 0.7 else "ab-.Z_ü"
    size = rng.choice((1, 2, 3, 4, 5, 110))
    return "".join(rng.choice(alphabet) for _ in range(size))


def test_branches_are_injective_on_targets_and_identities_per_verb() -> None:
    """Property-style over identities built to collide: short parts of ``a``, ``b`` and
    ``-`` (so many join alike), several kinds and groups, cluster-scoped ones, long ones."""
    rng = random.Random(20)
    subjects: set[tuple[str, Identity]] = set()
    while len(subjects) < 20_000:
        group, kind = rng.choice(KINDS)
        namespace = "" if rng.random() < 0.1 else _part(rng)
        subjects.add((rng.choice(("prod", "staging")), (group, kind, namespace, _part(rng))))
    for verb in ("approve", "delete"):
        seen: dict[str, tuple[str, Identity]] = {}
        for subject in subjects:
            branch = change_branch(verb, *subject)
            assert seen.setdefault(branch, subject) == subject, (branch, subject)
            assert VALID.match(branch) and len(branch.encode()) <= MAX_BRANCH_BYTES, branch
        # The generator made them collide where the hash does not: the readable parts alone
        # would have given many of them one branch.
        readable = Counter(branch.rpartition("-")[0] for branch in seen)
        shared = sum(count for count in readable.values() if count > 1)
        assert shared > len(subjects) / 2, shared


def test_the_same_object_gets_the_same_branch_in_every_process() -> None:
    """Pinned: a branch is a name other processes, hosts and releases must find again."""
    assert change_branch("approve", "prod", ("", "ConfigMap", "web", "settings")) == (
        "ichor/approve-web-settings-00e2e604"
    )
    assert change_branch("delete", "prod", ("apps", "Deployment", "web", "frontend")) == (
        "ichor/delete-web-frontend-722fc79e"
    )
    assert change_branch("delete", "prod", ("", "Service", "web", "frontend")) == (
        "ichor/delete-web-frontend-441692b2"
    )


def test_ignore_branches_sanitize_the_target_only() -> None:
    assert ignore_branch("prod", 12) == "ichor/ignore-prod-pr12"
    got = ignore_branch("Prod", 3)
    full = hashlib.sha256(b"ichor/ignore-Prod-pr3").hexdigest()[:8]
    assert got == f"ichor/ignore-prod-pr3-{full}" and VALID.match(got)


@pytest.mark.parametrize(
    ("identity", "readable"),
    [
        (("", "ConfigMap", "web", "frontend"), "ichor/approve-web-frontend"),
        (("apps", "Deployment", "web-a", "b"), "ichor/approve-web-a-b"),
        (("", "Namespace", "", "prod"), "ichor/approve-_cluster-prod"),
        (("", "ConfigMap", "web", "settings-2"), "ichor/approve-web-settings-2"),
        (("", "ConfigMap", "web", "a.b"), None),  # a dot: sanitized, so hashed
        (("", "ConfigMap", "Web", "a"), None),
        (("", "ConfigMap", "web", "a--b"), None),  # cleaning would change it
        (("", "ConfigMap", "web", "x-1a2b3c4d"), None),  # would look like a hashed name
        (("", "ConfigMap", "web", "a" * 90), None),  # over 100 bytes
    ],
)
def test_the_readable_name_only_where_it_is_written_as_it_is(
    identity: Identity, readable: str | None
) -> None:
    assert readable_branch("approve", identity) == readable


def test_a_readable_name_is_never_another_objects_hashed_name() -> None:
    """A readable name never ends like a hash, and every hashed name does: the two sets of
    names cannot meet, so a readable branch is never another object's hashed one."""
    rng = random.Random(20)
    for _ in range(5000):
        identity = (*rng.choice(KINDS), _part(rng), _part(rng))
        readable = readable_branch("approve", identity)
        hashed = change_branch("approve", "prod", identity)
        assert re.search(r"-[0-9a-f]{8}$", hashed)
        assert readable is None or not re.search(r"-[0-9a-f]{8}$", readable)
        assert readable is None or VALID.match(readable)
