"""The /help reply and the usage lines the usage errors end with."""

from __future__ import annotations

import pytest

from bot.commands import VERBS, Verb, help_text, usage


@pytest.mark.parametrize("verb", VERBS)
def test_usage_names_its_verb(verb: Verb) -> None:
    line = usage(verb)
    assert line.startswith(f"/{verb}")
    assert "\n" not in line


def test_usage_of_each_argument_form() -> None:
    assert usage("recheck") == "/recheck"
    assert "/approve cancel" in usage("approve")
    assert usage("delete") == "/delete <kind> <ns>/<name> [in <target>]"
    assert usage("ignore") == "/ignore <pattern> [in <target>]"


def test_help_lists_commands_permissions_and_targets() -> None:
    text = help_text([("prod", "strict"), ("staging", "relaxed")], min_permission="maintain")
    for command in (
        "`/help`",
        "`/recheck`",
        "`/approve`",
        "`/approve cancel`",
        "`/approve <ns>/<name> [field=value …] [in <target>]`",
        "`/reject <ns>/<name> [reason …] [in <target>]`",
        "`/delete <kind> <ns>/<name> [in <target>]`",
        "`/ignore <pattern> [in <target>]`",
    ):
        assert f"| {command} |" in text
    assert "| `/help` | anyone |" in text
    assert "| `/recheck` | `read` |" in text
    assert "| `/approve` | `maintain`, not the PR author |" in text
    assert "| `/approve cancel` | whoever approved |" in text
    assert text.count("| `maintain` |") == 4
    assert "**Targets**: `prod` (strict), `staging` (relaxed)." in text
    assert len(text.splitlines()) < 20  # short: a reply, not a manual


def test_help_without_a_known_permission_names_the_setting() -> None:
    text = help_text([("t", "relaxed")])
    assert "| `/delete <kind> <ns>/<name> [in <target>]` | `commands.min_permission` |" in text


def test_help_with_no_targets() -> None:
    assert help_text([]).endswith("**Targets**: none configured.")
