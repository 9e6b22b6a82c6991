"""``approval.reasonField``, ``approval.fields`` and ``commands.allow_author_approval``, and the
target's mode on its way to the check."""

from __future__ import annotations

import pytest

from bot.config.schema import parse_config


def config(approval: str = "", commands: str = "") -> bytes:
    lines = ["version: 1", "targets:", "  - name: prod", "    path: clusters/prod"]
    lines += ["    mode: strict"]
    if approval:
        lines.append(f"    approval: {{kind: TalosMachine, field: spec.approvalState, {approval}}}")
    if commands:
        lines.append(f"commands: {{{commands}}}")
    return ("\n".join(lines) + "\n").encode()


def test_the_new_keys_are_read() -> None:
    result = parse_config(
        config(
            "reasonField: spec.approvalDecision, "
            "fields: [spec.role, spec.host_name, node-labels.x9]",
            "allow_author_approval: true",
        )
    )
    assert result.issues == () and result.config is not None
    (prod,) = result.config.targets
    assert prod.approval is not None
    assert prod.approval.reasonField == "spec.approvalDecision"
    assert prod.approval.fields == ["spec.role", "spec.host_name", "node-labels.x9"]
    assert result.config.commands.allow_author_approval is True


def test_the_defaults() -> None:
    result = parse_config(config("newFilePath: clusters/prod/machines"))
    assert result.config is not None
    (prod,) = result.config.targets
    assert prod.approval is not None
    assert (prod.approval.reasonField, prod.approval.fields) == (None, None)
    assert result.config.commands.allow_author_approval is False


def test_the_mode_reaches_the_gate_policy() -> None:
    doc = config() + b"  - {name: dev, path: clusters/dev}\n"
    result = parse_config(doc)
    assert result.config is not None
    modes = [(t.name, t.mode) for t in result.config.gate_policy().targets]
    assert modes == [("prod", "strict"), ("dev", "relaxed")]


CASES = [
    # (approval keys, commands, kind, text the message must contain, line)
    ("reasonField: 'spec approval'", "", "invalid-field-path", "reasonField: 'spec approval'", 6),
    ("reasonField: spec.", "", "invalid-field-path", "must be a dotted field path", 6),
    ("reasonField: ''", "", "invalid-value", "reasonField: '' must not be empty", 6),
    ("reasonField: 3", "", "invalid-value", "reasonField: 3 must be text", 6),
    ("fields: [spec.a, .b]", "", "invalid-field-path", "fields[1]: '.b' must be a dotted", 6),
    ("fields: spec.a", "", "invalid-value", "fields: 'spec.a' must be a list", 6),
    (
        "reasonField: spec.approvalState",
        "",
        "duplicate-approval-field",
        "targets[0].approval.reasonField: 'spec.approvalState' is the approval field itself",
        6,
    ),
    (
        "fields: [spec.role, spec.approvalState]",
        "",
        "duplicate-approval-field",
        "fields[1]: 'spec.approvalState' is the approval field itself",
        6,
    ),
    (
        "fields: [spec.role, spec.host, spec.role]",
        "",
        "duplicate-approval-field",
        "fields[2]: 'spec.role' is already targets[0].approval.fields[0]",
        6,
    ),
    ("reasonfield: spec.x", "", "unknown-key", "did you mean 'reasonField'?", 6),
    ("field_s: [spec.x]", "", "unknown-key", "did you mean 'fields'?", 6),
    ("", "allow_author_aproval: true", "unknown-key", "did you mean 'allow_author_approval'?", 7),
    ("", "allow_author_approval: 'yes'", "invalid-value", "must be true or false", 7),
]


@pytest.mark.parametrize(("approval", "commands", "kind", "text", "line"), CASES)
def test_config_issue(approval: str, commands: str, kind: str, text: str, line: int) -> None:
    result = parse_config(config(approval or "newFilePath: m", commands))
    assert result.config is None
    found = [i for i in result.issues if i.kind == kind]
    assert found, result.issues
    assert any(text in i.message for i in found), found
    assert found[0].line == line


def test_the_approval_field_itself_is_a_field_path() -> None:
    doc = config().replace(b"mode: strict", b"approval: {kind: K, field: 'spec/state'}")
    (issue,) = parse_config(doc).issues
    assert issue.kind == "invalid-field-path" and "approval.field: 'spec/state'" in issue.message
