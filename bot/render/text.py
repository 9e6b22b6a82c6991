"""The report as text a person reads in a terminal: a verdict per target, issues by code, fixes."""

from __future__ import annotations

import shlex
from collections import defaultdict

from bot.gate.codes import CODES, IssueCode
from bot.gate.report import ConfigIssue, Issue, Report, Role, TargetReport, Verdict
from bot.ignore import IGNORE_FILE
from bot.paths import display_path, encode_path, join, relative_to

_GLOB_SPECIALS = frozenset("*?[\\")
# Codes whose entries can be kept by naming them in the ignore file.
_IGNORABLE = frozenset(
    {IssueCode.FOREIGN_FILE, IssueCode.FOREIGN_SYMLINK, IssueCode.FOREIGN_SUBMODULE}
)


def ignore_pattern_for(rel_path: str) -> str:
    """An anchored ``.gittargetignore`` line that matches ``rel_path`` and can be typed.

    Glob characters are escaped. A byte that is not UTF-8 or an ASCII control character becomes
    ``?`` (one byte, for git and for the matcher alike); a run of other invisible characters
    becomes ``*``, since a line of the file cannot show them.
    """
    out: list[str] = []
    for ch in rel_path:
        code = ord(ch)
        if ch in _GLOB_SPECIALS:
            out.append("\\" + ch)
        elif 0xDC80 <= code <= 0xDCFF or code < 0x20 or code == 0x7F:
            out.append("?")
        elif not ch.isprintable() and ch != " ":
            if not out or out[-1] != "*":
                out.append("*")
        else:
            out.append(ch)
    escaped = "".join(out)
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return "/" + escaped


def _shell(path: str) -> str:
    """A shell word for ``path``; names that are not UTF-8 are shown with ``$'...'`` escapes."""
    raw = encode_path(path)
    if raw.isascii() and raw.decode().isprintable():
        return shlex.quote(path)
    return "$'" + "".join(_shell_char(b) for b in raw) + "'"


def _shell_char(byte: int) -> str:
    ch = chr(byte)
    if 0x20 <= byte < 0x7F and ch not in "'\\":
        return ch
    return f"\\x{byte:02x}"


def _counts(target: TargetReport) -> str:
    return ", ".join(f"{role.value} {target.counts.get(role, 0)}" for role in Role)


def _fixes(code: IssueCode, target: TargetReport, issues: list[Issue]) -> list[str]:
    lines: list[str] = []
    ignore_file = display_path(join(target.path, IGNORE_FILE))
    if code in _IGNORABLE:
        removable = [i.path for i in issues if i.path != target.path]
        if removable:
            words = " ".join(_shell(p) for p in removable[:10])
            more = " ..." if len(removable) > 10 else ""
            lines.append(f"    fix: git rm -r -- {words}{more}")
            patterns = [ignore_pattern_for(relative_to(p, target.path)) for p in removable[:10]]
            lines.append(f"     or: add to {ignore_file}:")
            lines.extend(f"           {p}" for p in patterns)
            return lines
    lines.append(f"    fix: {CODES[code].fix}")
    return lines


# Locations shown under a message many issues share; the rest are counted (brief lists all).
SHOWN_PER_MESSAGE = 5
_COLOURS = {"accepted": "32", "refused": "31", "code": "33", "config": "31"}


def _paint(text: str, colour: str, on: bool) -> str:
    return f"\x1b[{_COLOURS[colour]}m{text}\x1b[0m" if on else text


def _where(issue: Issue) -> str:
    return display_path(issue.path) + (f":{issue.line}" if issue.line else "")


def _verdict_line(target: TargetReport, colour: bool) -> str:
    accepted = target.verdict is Verdict.ACCEPTED
    verdict = _paint(
        "ACCEPTED" if accepted else "REFUSED", "accepted" if accepted else "refused", colour
    )
    path = display_path(target.path) if target.path else "."
    errors = sum(1 for i in target.issues if i.severity.value == "error")
    warnings = len(target.issues) - errors
    tally = f"{errors} error{'s' * (errors != 1)}"
    if warnings:
        tally += f", {warnings} warning{'s' * (warnings != 1)}"
    return f"{verdict}  {target.name} ({path}): {tally}"


def _issue_lines(issues: list[Issue]) -> list[str]:
    """Issues of one code: those sharing a subject and message (347 Jobs of one refused type)
    are said once with a count and the first few locations, so a screenful reads as one."""
    groups: dict[tuple[str | None, str], list[Issue]] = defaultdict(list)
    for issue in issues:
        groups[(issue.subject, issue.message)].append(issue)
    lines: list[str] = []
    for (subject, message), group in groups.items():
        if len(group) == 1:
            lines.append(f"    {_where(group[0])}  {message}")
            continue
        about = f"{subject}: " if subject and subject not in message else ""
        lines.append(f"    {len(group)} \u00d7 {about}{message}")
        lines.extend(f"      {_where(i)}" for i in group[:SHOWN_PER_MESSAGE])
        if len(group) > SHOWN_PER_MESSAGE:
            lines.append(f"      ... and {len(group) - SHOWN_PER_MESSAGE} more")
    return lines


def _target_text(target: TargetReport, colour: bool) -> list[str]:
    lines = [_verdict_line(target, colour), f"  {_counts(target)}"]
    grouped: dict[IssueCode, list[Issue]] = defaultdict(list)
    for issue in sorted(target.issues, key=Issue.sort_key):
        grouped[issue.kind].append(issue)
    for code in sorted(grouped, key=lambda c: c.value):
        issues = grouped[code]
        name = _paint(code.value, "code", colour)
        lines.append(f"  {name} ({len(issues)}): {CODES[code].summary}")
        lines.extend(_issue_lines(issues))
        lines.extend(_fixes(code, target, issues))
    return lines


def report_to_text(report: Report, *, colour: bool = False, quiet: bool = False) -> str:
    """The report for a terminal; ``quiet`` keeps the verdict lines only."""
    lines: list[str] = []
    if report.revision and not quiet:
        lines.append(f"revision {report.revision}")
    if report.config_issues:
        heading = f"CONFIGURATION ERROR  {len(report.config_issues)} issue(s) in .ichor.yaml"
        lines.append(_paint(heading, "config", colour) + ("" if quiet else ":"))
        if not quiet:
            lines.extend(f"  {config_issue_line(i)}" for i in report.config_issues)
            lines.append("  Nothing was checked; fix the configuration first.")
    for target in report.targets:
        if quiet:
            lines.append(_verdict_line(target, colour))
            continue
        if lines:
            lines.append("")
        lines.extend(_target_text(target, colour))
    if report.targets and not quiet:
        accepted = sum(1 for t in report.targets if t.verdict is Verdict.ACCEPTED)
        lines.append("")
        lines.append(f"{accepted} of {len(report.targets)} target(s) accepted")
    return "\n".join(lines) + "\n"


def config_issue_line(issue: ConfigIssue) -> str:
    """``.ichor.yaml:3: unknown-key: ...``: the shape compilers use, so editors can jump to it."""
    where = issue.path + (f":{issue.line}" if issue.line else "")
    message = issue.message.removeprefix(f"line {issue.line}: ")
    return one_line(f"{where}: {issue.kind}: {message}")


def one_line(text: str) -> str:
    """One issue, one line, whatever a message quotes from a file."""
    return text.replace("\r", "\\r").replace("\n", "\\n")
