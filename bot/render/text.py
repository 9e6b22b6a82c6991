"""The report as text a person reads in a terminal: a verdict per target, issues by code, fixes."""

from __future__ import annotations

from collections import defaultdict

from bot.gate.codes import CODES, IssueCode
from bot.gate.fixes import append_lines_command, ignore_pattern_for, shell_word
from bot.gate.report import Issue, Report, Role, TargetReport, Verdict
from bot.ignore import IGNORE_FILE
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
        removable = [i.path for i in issues if i.path != target.path]
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
            return lines
    # One line per distinct fix, in issue order: a fix naming its path is said for each path.
    fixes = list(dict.fromkeys(i.how_to_fix for i in issues))
    lines = [f"    fix: {fix}" for fix in fixes[:_MAX_FIXES_SHOWN]]
    if len(fixes) > _MAX_FIXES_SHOWN:
        lines.append(f"    ... and {len(fixes) - _MAX_FIXES_SHOWN} more")
    return lines


def _target_text(target: TargetReport) -> list[str]:
    verdict = "ACCEPTED" if target.verdict is Verdict.ACCEPTED else "REFUSED"
    path = display_path(target.path) if target.path else "."
    errors = sum(1 for i in target.issues if i.severity.value == "error")
    warnings = len(target.issues) - errors
    tally = f"{errors} error{'s' * (errors != 1)}"
    if warnings:
        tally += f", {warnings} warning{'s' * (warnings != 1)}"
    lines = [f"{verdict}  {target.name} ({path}): {tally}", f"  {_counts(target)}"]
    grouped: dict[IssueCode, list[Issue]] = defaultdict(list)
    for issue in sorted(target.issues, key=Issue.sort_key):
        grouped[issue.kind].append(issue)
    for code in sorted(grouped, key=lambda c: c.value):
        issues = grouped[code]
        lines.append(f"  {code.value} ({len(issues)}): {CODES[code].summary}")
        # One shared message is said once, not on every line.
        messages = {i.message for i in issues}
        shared = messages.pop() if len(messages) == 1 and len(issues) > 1 else None
        if shared is not None:
            lines.append(f"    ({shared})")
        for issue in issues:
            where = display_path(issue.path) + (f":{issue.line}" if issue.line else "")
            lines.append(f"    {where}" if shared is not None else f"    {where}  {issue.message}")
        lines.extend(_fixes(code, target, issues))
    return lines


def report_to_text(report: Report) -> str:
    lines: list[str] = []
    if report.revision:
        lines.append(f"revision {report.revision}")
    if report.config_issues:
        lines.append(f"CONFIGURATION ERROR  {len(report.config_issues)} issue(s) in .ichor.yaml:")
        lines.extend(f"  {i.kind}: {i.message}" for i in report.config_issues)
        lines.append("  Nothing was checked; fix the configuration first.")
    for target in report.targets:
        if lines:
            lines.append("")
        lines.extend(_target_text(target))
    if report.targets:
        accepted = sum(1 for t in report.targets if t.verdict is Verdict.ACCEPTED)
        lines.append("")
        lines.append(f"{accepted} of {len(report.targets)} target(s) accepted")
    return "\n".join(lines) + "\n"
