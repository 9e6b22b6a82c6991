"""Every ``.ichor.yaml`` problem in one run: one bad field hides no other rule (issue 21, 12).

Each target's fields are read on their own, so the rules across targets (unique names,
non-overlapping paths, capabilities outside every target) and the approval fields' rule run
on every value that could be read, whatever else in the file is wrong.
"""

from __future__ import annotations

from bot.config.schema import parse_config


def issues(document: str) -> list[tuple[int | None, str, str]]:
    result = parse_config(document.encode())
    assert result.config is None
    return [(i.line, i.kind, i.message) for i in result.issues]


def kinds(document: str) -> list[str]:
    return [kind for _, kind, _ in issues(document)]


def test_a_bad_mode_hides_neither_duplicate_names_nor_overlapping_paths() -> None:
    document = (
        "version: 1\n"
        "targets:\n"
        "  - {name: prod, path: clusters/prod, mode: lax}\n"
        "  - {name: prod, path: clusters/prod/apps}\n"
    )
    assert issues(document) == [
        (
            3,
            "invalid-value",
            "targets[0].mode: 'lax' must be 'relaxed' or 'strict'; did you mean 'relaxed'?",
        ),
        (4, "duplicate-target-name", "targets[1].name: 'prod' is already the name of targets[0]"),
        (
            4,
            "overlapping-target-paths",
            "targets[1].path: 'clusters/prod/apps' (target 'prod') is inside targets[0].path "
            "'clusters/prod' (target 'prod'); one directory can belong to one target only",
        ),
    ]


def test_a_field_that_cannot_be_read_leaves_the_target_s_other_fields_in_the_rules() -> None:
    document = (
        "version: 1\n"
        "targets:\n"
        "  - {name: a, path: ../up}\n"  # its path is unreadable, its name is not
        "  - {name: a, path: clusters}\n"
        "  - {name: Bad_Name, path: clusters/prod}\n"  # its name is unreadable, its path is not
    )
    found = issues(document)
    assert [(line, kind) for line, kind, _ in found] == [
        (3, "invalid-path"),
        (4, "duplicate-target-name"),
        (5, "invalid-target-name"),
        (5, "overlapping-target-paths"),
    ]
    # A target whose name cannot be read is named by its place in the list only.
    assert found[3][2] == (
        "targets[2].path: 'clusters/prod' is inside targets[1].path 'clusters' (target 'a'); "
        "one directory can belong to one target only"
    )


def test_a_target_that_is_not_a_mapping_leaves_the_others_checked() -> None:
    document = "version: 1\ntargets:\n  - just text\n" + "  - {name: a, path: x}\n" * 2
    assert kinds(document) == [
        "invalid-value",
        "duplicate-target-name",
        "overlapping-target-paths",
    ]


def test_capabilities_inside_a_target_beside_other_problems() -> None:
    document = (
        "version: 1\n"
        "targets:\n"
        "  - {name: a, path: c/prod, placement: '{kind}.json'}\n"
        "  - {name: b, path: c/dev, capabilities: c/prod/caps.yaml, extra: 1}\n"
        "commands: {min_permission: owner}\n"
    )
    assert kinds(document) == [
        "invalid-placement",
        "unknown-key",
        "capabilities-inside-target",
        "invalid-value",
    ]


def test_approval_fields_are_checked_beside_other_problems() -> None:
    document = (
        "version: 2\n"
        "targets:\n"
        "  - name: t\n"
        "    path: t\n"
        "    mode: lax\n"
        "    approval:\n"
        "      kind: K\n"
        "      field: spec.state\n"
        "      reasonField: spec.state\n"
        "      fields: [spec.role, 'bad field', spec.role]\n"
    )
    found = issues(document)
    assert [(line, kind) for line, kind, _ in found] == [
        (1, "invalid-value"),
        (5, "invalid-value"),
        (9, "duplicate-approval-field"),
        (10, "invalid-field-path"),
        (10, "duplicate-approval-field"),
    ]
    # The index of a repeated entry is its place in the list, unreadable entries included.
    assert found[4][2] == "targets[0].approval.fields[2]: 'spec.role' is already " + (
        "targets[0].approval.fields[0]"
    )


def test_a_key_written_twice_hides_no_other_problem() -> None:
    document = "version: 1\ntargets:\n  - {name: t, path: t, mode: lax, path: u}\nversion: 1\n"
    assert issues(document) == [
        (3, "invalid-yaml", "line 3: key 'path' appears twice in one mapping"),
        (
            3,
            "invalid-value",
            "targets[0].mode: 'lax' must be 'relaxed' or 'strict'; did you mean 'relaxed'?",
        ),
        (4, "invalid-yaml", "line 4: key 'version' appears twice in one mapping"),
    ]


def test_issues_are_in_line_order() -> None:
    document = "targets:\n  - {name: a, path: x, mode: lax}\n  - {name: a, path: y}\nversion: 2\n"
    lines = [line for line, _, _ in issues(document)]
    assert lines == sorted(lines)  # type: ignore[type-var]
