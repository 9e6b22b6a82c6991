"""A target's ``enforce`` (issue 22, item 5): ``all`` (the default) or ``new``, validated like
every value, with the value meant when one is close; and how a choice among fixed values is
checked for every key that has them."""

from __future__ import annotations

import pytest

from bot.config.schema import parse_config


def config(extra: str = "") -> bytes:
    return f"version: 1\ntargets:\n  - name: prod\n    path: clusters/prod\n{extra}".encode()


def issues(document: bytes) -> list[tuple[int | None, str, str]]:
    result = parse_config(document)
    assert result.config is None
    return [(i.line, i.kind, i.message) for i in result.issues]


def test_the_default_is_all() -> None:
    result = parse_config(config())
    assert result.config is not None
    (prod,) = result.config.targets
    assert prod.enforce == "all"
    assert result.config.gate_policy().targets[0].enforce == "all"


def test_new_reaches_the_gate_policy() -> None:
    doc = config("    enforce: new\n    mode: strict\n  - {name: dev, path: clusters/dev}\n")
    result = parse_config(doc)
    assert result.issues == () and result.config is not None
    policy = result.config.gate_policy()
    assert [(t.name, t.enforce, t.mode) for t in policy.targets] == [
        ("prod", "new", "strict"),
        ("dev", "all", "relaxed"),
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("neww", "targets[0].enforce: 'neww' must be 'all' or 'new'; did you mean 'new'?"),
        ("New", "targets[0].enforce: 'New' must be 'all' or 'new'; did you mean 'new'?"),
        ("al", "targets[0].enforce: 'al' must be 'all' or 'new'; did you mean 'all'?"),
        ("none", "targets[0].enforce: 'none' must be 'all' or 'new'"),
        ("true", "targets[0].enforce: True must be 'all' or 'new'"),
        ("[new]", "targets[0].enforce: ['new'] must be 'all' or 'new'"),
        ("''", "targets[0].enforce: '' must be 'all' or 'new'"),
    ],
)
def test_a_wrong_value_is_an_invalid_value_with_its_line(value: str, message: str) -> None:
    assert issues(config(f"    enforce: {value}\n")) == [(5, "invalid-value", message)]


def test_a_misspelled_key_is_pointed_at() -> None:
    ((line, kind, message),) = issues(config("    enfroce: new\n"))
    assert (line, kind) == (5, "unknown-key")
    assert "targets[0].enfroce: unknown key; did you mean 'enforce'?" in message
    assert "enforce" in message.partition("allowed keys:")[2]


def test_a_wrong_enforce_hides_no_other_problem() -> None:
    document = config("    enforce: old\n    mode: lax\n  - {name: prod, path: clusters/prod/a}\n")
    assert [kind for _, kind, _ in issues(document)] == [
        "invalid-value",
        "invalid-value",
        "duplicate-target-name",
        "overlapping-target-paths",
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "    mode: strcit\n",
            "targets[0].mode: 'strcit' must be 'relaxed' or 'strict'; did you mean 'strict'?",
        ),
        (
            "commands: {min_permission: Write}\n",
            "commands.min_permission: 'Write' must be 'read', 'triage', 'write', 'maintain' or "
            "'admin'; did you mean 'write'?",
        ),
    ],
)
def test_every_choice_among_fixed_values_points_at_the_one_meant(extra: str, message: str) -> None:
    ((_, kind, text),) = issues(config(extra))
    assert (kind, text) == ("invalid-value", message)


def test_version_is_a_number_and_gets_no_guess() -> None:
    document = b"version: 'l'\ntargets: [{name: t, path: t}]\n"
    assert issues(document) == [(1, "invalid-value", "version: 'l' must be 1")]
