"""``.ichor.yaml``: every configuration issue names the key and the value."""

from __future__ import annotations

import pytest

from bot.config.schema import parse_config

VALID = b"""
version: 1
targets:
  - name: prod
    path: clusters/prod/
    mode: strict
    placement: "{namespace}/{group}/{resource}/{name}.yaml"
    capabilities: clusters/prod.capabilities.yaml
    approval: {kind: TalosMachine, field: spec.approvalState, newFilePath: clusters/prod/machines}
  - name: dev-2
    path: clusters/dev
commands: {min_permission: maintain}
"""


def test_valid_config() -> None:
    result = parse_config(VALID)
    assert result.issues == ()
    assert result.config is not None
    prod, dev = result.config.targets
    assert prod.path == "clusters/prod"  # trailing '/' normalised
    assert prod.mode == "strict"
    assert prod.approval is not None and prod.approval.newFilePath == "clusters/prod/machines"
    assert dev.mode == "relaxed"
    assert dev.placement == "{group}/{version}/{resource}/{namespace}/{name}.yaml"
    assert result.config.commands.min_permission == "maintain"
    policy = result.config.gate_policy()
    assert [(t.name, t.path) for t in policy.targets] == [
        ("prod", "clusters/prod"),
        ("dev-2", "clusters/dev"),
    ]


def target(extra: str) -> bytes:
    return f"version: 1\ntargets:\n  - {{name: t, path: t{extra}}}\n".encode()


CASES = [
    # (document, kind, text the message must contain)
    (b"version: 1\ntargets:\n  - {name: t, path: t, nmae: x}\n", "unknown-key", "targets[0].nmae"),
    (b"version: 1\ntargets: [{name: t, path: t}]\nextra: 1\n", "unknown-key", "extra: unknown key"),
    (
        target(", approval: {kind: K, field: f, other: 1}"),
        "unknown-key",
        "targets[0].approval.other",
    ),
    (
        b"version: 1\ntargets: [{name: t, path: t}]\ncommands: {who: me}\n",
        "unknown-key",
        "commands.who",
    ),
    (b"targets: [{name: t, path: t}]\n", "missing-key", "version: required key"),
    (b"version: 1\ntargets: [{path: t}]\n", "missing-key", "targets[0].name"),
    (b"version: 2\ntargets: [{name: t, path: t}]\n", "invalid-value", "version: 2"),
    (b"version: '1'\ntargets: [{name: t, path: t}]\n", "invalid-value", "version: '1'"),
    (b"version: 1\ntargets: []\n", "invalid-value", "targets: []"),
    (
        b"version: 1\ntargets: [{name: Prod, path: t}]\n",
        "invalid-target-name",
        "targets[0].name: 'Prod'",
    ),
    (b"version: 1\ntargets: [{name: a_b, path: t}]\n", "invalid-target-name", "'a_b'"),
    (b"version: 1\ntargets: [{name: -a, path: t}]\n", "invalid-target-name", "'-a'"),
    (b"version: 1\ntargets: [{name: 7, path: t}]\n", "invalid-value", "targets[0].name: 7"),
    (b"version: 1\ntargets: [{name: t, path: ../x}]\n", "invalid-path", "'../x' escapes"),
    (b"version: 1\ntargets: [{name: t, path: a/../../x}]\n", "invalid-path", "escapes"),
    (b"version: 1\ntargets: [{name: t, path: /etc}]\n", "invalid-path", "'/etc' must be relative"),
    (
        b"version: 1\ntargets: [{name: t, path: .git/hooks}]\n",
        "invalid-path",
        "'.git/hooks' enters",
    ),
    (b"version: 1\ntargets: [{name: t, path: a/.GIT}]\n", "invalid-path", "enters '.git'"),
    (b"version: 1\ntargets: [{name: t, path: 'a//b'}]\n", "invalid-path", "empty segment"),
    (b"version: 1\ntargets: [{name: t, path: 'a\\\\b'}]\n", "invalid-path", "separator"),
    (b"version: 1\ntargets: [{name: t, path: ''}]\n", "invalid-path", "must not be empty"),
    (target(", mode: lax"), "invalid-value", "targets[0].mode: 'lax'"),
    (
        target(", placement: '{kind}/{name}.yaml'"),
        "invalid-placement",
        "unknown placeholder {kind}",
    ),
    (target(", placement: '{namespace}.yaml'"), "invalid-placement", "must contain {name}"),
    (target(", placement: '{name}.json'"), "invalid-placement", "must end in '.yaml'"),
    (
        target(", capabilities: ../caps.yaml"),
        "invalid-path",
        "targets[0].capabilities: '../caps.yaml'",
    ),
    (
        b"version: 1\ntargets: [{name: a, path: x}, {name: a, path: y}]\n",
        "duplicate-target-name",
        "targets[1].name: 'a' is already the name of targets[0]",
    ),
    (
        b"version: 1\ntargets: [{name: a, path: clusters/prod}, {name: b, path: clusters/prod/}]\n",
        "overlapping-target-paths",
        "is the same path as",
    ),
    (
        b"version: 1\ntargets: [{name: a, path: clusters}, {name: b, path: clusters/prod}]\n",
        "overlapping-target-paths",
        "targets[1].path: 'clusters/prod' (target 'b') is inside targets[0].path 'clusters'",
    ),
    (
        b"version: 1\ntargets: [{name: a, path: clusters/prod}, {name: b, path: clusters}]\n",
        "overlapping-target-paths",
        "'clusters' (target 'b') contains targets[0].path 'clusters/prod'",
    ),
    (
        b"version: 1\ntargets: [{name: a, path: .}, {name: b, path: x}]\n",
        "overlapping-target-paths",
        "is inside targets[0].path '.'",
    ),
    (
        b"version: 1\ntargets: [{name: a, path: c/prod, capabilities: c/prod/caps.yaml}]\n",
        "capabilities-inside-target",
        "'c/prod/caps.yaml' is inside the path 'c/prod' of target 'a'",
    ),
    (b"version: 1\nversion: 1\n", "invalid-yaml", "line 2: key 'version' appears twice"),
    (b"version: [1\n", "invalid-yaml", "line"),
    (b"- just a list\n", "invalid-value", "must be a mapping"),
    (b"", "invalid-value", "must be a mapping"),
]


@pytest.mark.parametrize(("document", "kind", "text"), CASES)
def test_config_issue(document: bytes, kind: str, text: str) -> None:
    result = parse_config(document)
    assert result.config is None
    assert result.present
    kinds = [i.kind for i in result.issues]
    assert kind in kinds, result.issues
    messages = " | ".join(i.message for i in result.issues if i.kind == kind)
    assert text in messages
    assert all(i.path == ".ichor.yaml" for i in result.issues)


def test_prefix_that_is_not_a_directory_boundary_is_no_overlap() -> None:
    doc = (
        b"version: 1\ntargets: [{name: a, path: clusters/prod}, {name: b, path: clusters/prod2}]\n"
    )
    assert parse_config(doc).issues == ()


def test_alias_bomb_is_bounded() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join(f"*{prev}" for _ in range(10)) + "]")
    result = parse_config("\n".join(lines).encode())
    assert [i.kind for i in result.issues] == ["invalid-value"]
    assert "too many values" in result.issues[0].message


def test_deep_nesting_is_an_issue() -> None:
    result = parse_config(b"version: 1\ntargets: " + b"[" * 20000 + b"]" * 20000)
    assert result.config is None and result.issues


def test_all_problems_reported_together() -> None:
    doc = b"version: 1\ntargets:\n  - {name: Bad, path: ../x, nope: 1}\n"
    kinds = sorted(i.kind for i in parse_config(doc).issues)
    assert kinds == ["invalid-path", "invalid-target-name", "unknown-key"]


def test_approvers_are_users_and_teams_or_codeowners() -> None:
    def approvers(value: str) -> object:
        document = f"version: 1\ntargets:\n  - {{name: prod, path: p, approvers: {value}}}\n"
        result = parse_config(document.encode())
        if result.config is None:
            return [issue.message for issue in result.issues]
        return result.config.targets[0].approvers

    assert approvers("codeowners") == "codeowners"
    assert approvers("[alice, '@org/platform', group/sub/team, alice]") == [
        "alice",
        "org/platform",
        "group/sub/team",
    ]
    assert approvers("everyone") == [
        "targets[0].approvers: 'everyone' must be a list of users and teams (org/team), or "
        "codeowners"
    ]
    bad = approvers("['bad name']")
    assert isinstance(bad, list) and "each must be a user or a team" in bad[0]
    assert "bad name" in bad[0]
    empty = approvers("[]")
    assert isinstance(empty, list) and "must name 1 to 100 users or teams" in empty[0]
