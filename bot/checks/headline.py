"""The check's title, and what the summary says about a target under ``enforce: new``
(design.md 4): on a pull request, that only the issues it introduces fail the check and how many
already on base are listed without blocking; on a push, that the full verdict applies.

Pure; names go through :mod:`bot.checks.markdown_text`. The title is our own words and
numbers only, so GitLab's and Gitea's status line can show it as it is.
"""

from __future__ import annotations

from bot.checks.approval_summary import waiting_title
from bot.checks.compare import CheckComparison
from bot.checks.markdown_text import inline_text, shorten
from bot.gate.report import Verdict

MAX_TITLE_CHARS = 255


def counted(count: int, noun: str) -> str:
    """``1 issue``, ``2 issues``: the nouns here all take an s."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def check_title(comparison: CheckComparison) -> str:
    if comparison.config_issues:
        return f"Configuration invalid: {counted(len(comparison.config_issues), 'issue')}"
    targets = comparison.targets
    if not targets:
        return "No GitTarget path touched"
    blocking = len(comparison.blocking)
    # Refused at head, yet passing: every error was on base, under enforce: new.
    passed_anyway = not blocking and any(t.verdict is Verdict.REFUSED for t in targets)
    if not blocking and comparison.approvals is not None and comparison.approvals.waiting:
        title = waiting_title(comparison.approvals, merge_group=comparison.merge_group)
        return shorten(title, MAX_TITLE_CHARS)
    if blocking:
        head, noun = f"{counted(blocking, 'target')} refused", "issue"
    elif passed_anyway:  # a new error would have blocked: what is new is warnings
        head, noun = "Passed under enforce: new", "warning"
    else:  # every issue of an accepted target is a warning
        every = "All " if len(targets) > 1 else ""
        head, noun = f"{every}{counted(len(targets), 'touched target')} accepted", "warning"
    new, old = comparison.new_issue_count, comparison.existing_issue_count
    counts = []
    if new:
        counts.append(counted(new, f"new {noun}"))
    elif old:
        counts.append("no new issues" if passed_anyway else f"no new {noun}s")
    if old:
        counts.append(f"{old} already on base" + (", not blocking" if passed_anyway else ""))
    title = head + (" · " + ", ".join(counts) if counts else "")
    return shorten(title, MAX_TITLE_CHARS)


def enforce_lines(comparison: CheckComparison) -> list[str]:
    """A paragraph for each touched target under ``enforce: new``, each followed by a blank
    line; none when no target sets it."""
    lines: list[str] = []
    for t in comparison.targets:
        if t.enforce != "new":
            continue
        name = inline_text(t.name, 100)
        if not comparison.pull_request:
            lines.append(
                f"{name} is under `enforce: new`, which applies to pull requests: this push "
                "gets the full verdict, issues already on base included."
            )
            lines.append("")
            continue
        old = len(t.existing_issues)
        on_base = (
            f"{counted(old, 'issue')} already on base {'is' if old == 1 else 'are'} listed but not "
            "blocking"
            if old
            else "none is on base"
        )
        lines.append(
            f"{name} is under `enforce: new`: only the issues this change introduces fail the "
            f"check; {on_base}."
        )
        lines.append("")
    return lines
