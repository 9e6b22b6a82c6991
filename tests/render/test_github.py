"""``--format github``: workflow commands as the Actions runner parses them.

The decoder below follows the documented syntax, ``::command key=value,key=value::message``:
the runner splits properties on ``,`` and at the first ``=``, then turns ``%25``, ``%0D``,
``%0A`` (and, in property values only, ``%3A`` and ``%2C``) back into characters.
"""

from __future__ import annotations

import re

from bot.gate.codes import IssueCode
from bot.gate.report import ConfigIssue, Issue, Report, TargetReport, empty_counts
from bot.render.github import escape_data, escape_property, report_to_github
from tests.conftest import MakeRepo, RunCli

_COMMAND = re.compile(r"^::(?P<command>[a-z-]+)(?: (?P<properties>[^:]*))?::(?P<message>.*)$")
_DATA = {"%0D": "\r", "%0A": "\n", "%25": "%"}
_PROPERTY = {**_DATA, "%3A": ":", "%2C": ","}


def _unescape(text: str, table: dict[str, str]) -> str:
    return re.sub("%(?:0D|0A|25|3A|2C)", lambda m: table.get(m.group(0), m.group(0)), text)


def parse(line: str) -> tuple[str, dict[str, str], str]:
    match = _COMMAND.match(line)
    assert match is not None, line
    properties: dict[str, str] = {}
    for pair in (match["properties"] or "").split(","):
        if pair:
            key, _, value = pair.partition("=")
            properties[key] = _unescape(value, _PROPERTY)
    return match["command"], properties, _unescape(match["message"], _DATA)


def test_escaping_is_the_documented_one() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("a:b,c") == "a:b,c"  # ':' and ',' are only special in properties


def test_annotations_round_trip_through_the_runner_syntax() -> None:
    hostile = "t/a,b:c%d\nx.yaml"
    issues = (
        Issue.of(IssueCode.FOREIGN_FILE, hostile, "not YAML, 100%\nreally"),
        Issue.of(IssueCode.INVALID_YAML, "t/y.yaml", "line 3: bad: indent", line=3),
        Issue.of(IssueCode.IGNORED_MANAGED_OBJECT, "t/old/z.yaml", "ignored, but managed"),
    )
    target = TargetReport("prod", "t", issues, empty_counts())
    config = ConfigIssue("unknown-key", "targetz: unknown key", line=2)
    lines = report_to_github(Report(None, (config,), (target,))).splitlines()
    assert parse(lines[0]) == (
        "error",
        {"file": ".ichor.yaml", "line": "2", "title": "ichor unknown-key"},
        "targetz: unknown key",
    )
    # Plain log text, not a command, in the text report's words.
    assert lines[1] == "REFUSED  prod (t): 2 errors, 1 warning"
    commands = [parse(line) for line in lines[2:]]
    by_file = {props["file"]: (command, props, message) for command, props, message in commands}
    assert by_file[hostile] == (
        "error",
        {"file": hostile, "title": "ichor foreign-file (target prod)"},
        "not YAML, 100%\nreally",
    )
    assert by_file["t/y.yaml"][1]["line"] == "3"
    assert by_file["t/y.yaml"][2] == "line 3: bad: indent"
    assert by_file["t/old/z.yaml"][0] == "warning"
    for line in lines[2:]:
        assert "\n" not in line and "\r" not in line
        # Nothing in a property can end the property list or the command early.
        assert line.count("::") == 2


def test_cli_github_format(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo(
        {"t/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", "t/x.txt": "x"}
    )
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", "github")
    assert result.code == 1
    annotations = [parse(line) for line in result.out.splitlines() if line.startswith("::")]
    assert annotations == [
        (
            "error",
            {"file": "t/x.txt", "title": "ichor foreign-file (target t)"},
            annotations[0][2],
        )
    ]
