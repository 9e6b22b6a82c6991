"""GitHub Actions workflow commands: an annotation per issue, at its file and line.

``::error file=F,line=L,title=T::MESSAGE``. The runner decodes ``%25``, ``%0D`` and ``%0A`` in
the message, and additionally ``%3A`` and ``%2C`` in property values, so those characters are
encoded there; a file name or message can then never end the command early or forge another.
"""

from __future__ import annotations

from bot.gate.codes import Severity
from bot.gate.report import ConfigIssue, Issue, Report, TargetReport
from bot.render.text import verdict_line

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(command: str, properties: dict[str, str], message: str) -> str:
    listed = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return (
        f"::{command} {listed}::{escape_data(message)}"
        if listed
        else f"::{command}::{escape_data(message)}"
    )


def _file(path: str) -> str:
    # A name that is not UTF-8 cannot be written as is; its escapes at least say which it is.
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") or "."


def _issue(issue: Issue, target: TargetReport) -> str:
    properties = {"file": _file(issue.path)}
    if issue.line:
        properties["line"] = str(issue.line)
    properties["title"] = f"ichor {issue.kind.value} (target {target.name})"
    return workflow_command(_COMMAND[issue.severity], properties, issue.message)


def _config_issue(issue: ConfigIssue) -> str:
    properties = {"file": issue.path}
    if issue.line:
        properties["line"] = str(issue.line)
    properties["title"] = f"ichor {issue.kind}"
    return workflow_command("error", properties, issue.message)


def report_to_github(report: Report) -> str:
    """A plain verdict line per target (the log, as the text report words it), then an
    annotation per issue."""
    lines = [_config_issue(i) for i in report.config_issues]
    for target in report.targets:
        lines.append(verdict_line(target))
        lines.extend(_issue(i, target) for i in sorted(target.issues, key=Issue.sort_key))
    return "".join(f"{line}\n" for line in lines)
