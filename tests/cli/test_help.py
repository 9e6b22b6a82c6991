"""``--help``: every subcommand and option is described, with its default, and examples."""

from __future__ import annotations

import argparse

import pytest

from bot.cli.main import build_parser
from tests.conftest import RunCli


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_subcommand_is_listed_with_a_summary(
    run_cli: RunCli, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    for name in _subcommands():
        assert f"    {name} " in text or f"    {name}\n" in text, name
    assert "examples:" in text


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_option_has_help_with_its_default(name: str) -> None:
    sub = _subcommands()[name]
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{name} {action.dest} has no help"
        required = action.required or (not action.option_strings and action.nargs is None)
        if not required:
            assert "default" in action.help, f"{name} {action.dest}: say the default"
    assert sub.epilog and "example" in sub.epilog, f"{name} has no examples"
    assert isinstance(sub.formatter_class, type)
    assert issubclass(sub.formatter_class, argparse.RawDescriptionHelpFormatter)


def test_help_keeps_the_examples_layout(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["check", "--help"])
    text = capsys.readouterr().out
    assert "\n  ichor-bot check . --rev HEAD " in text  # the epilog is not re-wrapped
    words = " ".join(text.split())
    assert "(default: text)" in words and "(default: 4194304)" in words
    assert "DESIGN" not in text
