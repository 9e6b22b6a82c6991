"""The report as text a person reads in a terminal: a verdict per target, issues by code, fixes."""

from __future__ import annotations

from collections import defaultdict

from bot.gate.codes import CODES, IssueCode, Severity
from bot.gate.fixes import append_lines_command, ignore_pattern_for, shell_word
from bot.gate.report import ConfigIssue, Issue, Report, Role, TargetReport, Verdict
from bot.ignore.rules import IGNORE_FILE
from bot.paths import display_path, join, relative_to

# Codes whose entries can be kept by naming them in the ignore file.
_IGNORABLE = frozenset(
    {IssueCode.FOREIGN_FILE, IssueCode.FOREIGN_SYMLINK, IssueCode.FOREIGN_SUBMODULE}
)
_MAX_FIXES_SHOWN = 10

__all__ = ["ignore_pattern_for", "report_to_text"]


def _counts(target: TargetReport) -> str:
    return ", ".join(f"{role.value} {target.counts.get(role, 0)}" for role in Role)


def _fixes(code: IssueCode, target: TargetReport, issues: list[Issue]) -> list[str]:
    if code in _IGNORABLE:
        # An issue with its own fix (a file a kustomization reads) is not removed with the
        # rest: its fix is said apart.
        removable = [i.path for i in issues if i.path != target.path and i.fix is None]
        if removable:
            shown = removable[:_MAX_FIXES_SHOWN]
            words = " ".join(shell_word(p) for p in shown)
            patterns = [ignore_pattern_for(relative_to(p, target.path)) for p in shown]
            ignore_file = join(target.path, IGNORE_FILE)
            lines = [
                f"    fix: git rm -r -- {words}",
                f"     or: keep {'them' if len(shown) > 1 else 'it'}, ignored:",
                f"         {append_lines_command(ignore_file, patterns)}",
            ]
            if len(removable) > len(shown):  # said apart, so each command still pastes
                lines.append(f"    (these name the first {len(shown)} of {len(removable)})")
            own = [i for i in issues if i.fix is not None]
            return lines + (_distinct_fixes(own) if own else [])
    return _distinct_fixes(issues)


def _distinct_fixes(issues: list[Issue]) -> list[str]:
    """One line per distinct fix, in issue order: a fix naming its path is said for each path."""
    fixes = list(dict.fromkeys(i.how_to_fix for i in issues))
    lines = [f"    fix: {fix}" for fix in fixes[:_MAX_FIXES_SHOWN]]
    if len(fixes) > _MAX_FIXES_SHOWN:
        lines.append(f"    ... and {len(fixes) - _MAX_FIXES_SHOWN} more")
    return lines


# Locations shown under a message many issues share; the rest are counted (brief lists all).
SHOWN_PER_MESSAGE = 5
_COLOURS = {"accepted": "32", "refused": "31", "code": "33", "config": "31"}


def _paint(text: str, colour: str, on: bool) -> str:
    return f"\x1b[{_COLOURS[colour]}m{text}\x1b[0m" if on else text


def _where(issue: Issue) -> str:
    return display_path(issue.path) + (f":{issue.line}" if issue.line else "")


def counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'s' * (count != 1)}"


def verdict_line(target: TargetReport, colour: bool = False) -> str:
    """``REFUSED  prod (clusters/prod): 2 errors, 1 warning``: the words every format a person
    reads uses (text, github), so an error is never called an issue in one and not the other."""
    accepted = target.verdict is Verdict.ACCEPTED
    verdict = _paint(
        "ACCEPTED" if accepted else "REFUSED", "accepted" if accepted else "refused", colour
    )
    path = display_path(target.path) if target.path else "."
    errors = sum(1 for i in target.issues if i.severity is Severity.ERROR)
    warnings = len(target.issues) - errors
    tally = counted(errors, "error")
    if warnings:
        tally += f", {counted(warnings, 'warning')}"
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
    lines = [verdict_line(target, colour), f"  {_counts(target)}"]
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
        # Every configuration problem is an error: it stops the check (exit 2).
        count = counted(len(report.config_issues), "error")
        heading = f"CONFIGURATION ERROR  {count} in .ichor.yaml"
        lines.append(_paint(heading, "config", colour) + ("" if quiet else ":"))
        if not quiet:
            lines.extend(f"  {config_issue_line(i)}" for i in report.config_issues)
            lines.append("  Nothing was checked; fix the configuration first.")
    for target in report.targets:
        if quiet:
            lines.append(verdict_line(target, colour))
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
