"""What the forge shows for a :class:`CheckComparison`: check run output and the summary comment.

Pure: a comparison in, strings and :class:`CheckOutput` out; no I/O, no clock, no environment,
and the same comparison always gives byte-identical output. Every untrusted name and message
goes through :mod:`bot.checks.markdown_text`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from bot.checks.approval_summary import approvals_section
from bot.checks.compare import CheckComparison
from bot.checks.headline import check_title, enforce_lines
from bot.checks.headline import counted as _n
from bot.checks.markdown_text import inline_fix as _fix
from bot.checks.markdown_text import inline_path as _code
from bot.checks.markdown_text import inline_text as _md
from bot.checks.markdown_text import printable as _printable
from bot.checks.markdown_text import short_sha as _sha
from bot.checks.markdown_text import shorten as _shorten
from bot.forges.base import CHECK_NAME as CHECK_NAME  # defined once, beside the adapters
from bot.forges.base import (
    SUMMARY_MARKER,
    Annotation,
    AnnotationLevel,
    CheckAction,
    CheckOutput,
    Conclusion,
)
from bot.gate.codes import CODES, IssueCode, Severity
from bot.gate.report import Issue, Verdict

MAX_OUTPUT_CHARS = 65535  # GitHub's limit for output.summary and output.text
MAX_COMMENT_CHARS = 60000  # under GitHub's 65,536 and GitLab's 1,000,000; Gitea has none
ERROR_TITLE = "The check could not be completed"

# One hostile name or message must not eat the budget the rest of the list needs.
_MAX_REASON_SHOWN = 2000
_MAX_ANNOTATION_MESSAGE = 4000  # GitHub takes 64 KB; a screenful is what a reviewer reads
_MAX_NAMES_SHOWN = 50
_MAX_FIXES_PER_KIND = 5

_LEVEL: dict[Severity, AnnotationLevel] = {Severity.ERROR: "failure", Severity.WARNING: "warning"}
_VERDICT = {Verdict.ACCEPTED: "✅ accepted", Verdict.REFUSED: "❌ refused"}
_CLIP_NOTE = "\n\n… (cut here to stay within the forge's size limit)"
_ICON = {Conclusion.SUCCESS: "✅", Conclusion.ACTION_REQUIRED: "⏳"}

# Buttons of a finished check (GitHub); the identifiers come back as the requested action.
APPROVE_ACTION = CheckAction("Approve", "Approve the new objects", "approve")
RECHECK_ACTION = CheckAction("Recheck", "Check this head again", "recheck")


@dataclass(frozen=True, slots=True)
class _Entry:
    issue: Issue
    new: bool
    target: int  # the target's position, so equal issues in two targets keep one order

    def key(self) -> tuple[bool, bytes, int, str, int, str]:
        path, line, kind = self.issue.sort_key()
        return (not self.new, path, line, kind, self.target, self.issue.message)


# --- counting and sizing -------------------------------------------------------------------


def _entries(comparison: CheckComparison) -> list[_Entry]:
    entries = [
        _Entry(marked.issue, marked.new, n)
        for n, target in enumerate(comparison.targets)
        for marked in target.issues
    ]
    return sorted(entries, key=_Entry.key)


def _size(lines: Sequence[str]) -> int:
    return sum(len(line) for line in lines) + max(len(lines) - 1, 0)


def _clip(text: str, limit: int) -> str:
    """The last resort when even the fixed parts are too long: cut at a line boundary."""
    if len(text) <= limit:
        return text
    room = limit - len(_CLIP_NOTE)
    cut = text.rfind("\n", 0, room + 1)
    if cut <= 0:
        cut = room
        amp = text.rfind("&", 0, cut)
        if amp > text.rfind(";", 0, cut):  # never leave half a character reference
            cut = amp
    return text[:cut] + _CLIP_NOTE


# A line as it is shown, or how to render it (an issue's line is rendered only when it can
# still be shown: a check with thousands of issues shows what fits in the forge's limit), and
# whether it counts as an issue.
Line = tuple[str | Callable[[], str], bool]


def _fit(
    fixed: Sequence[str],
    items: Sequence[Line],
    limit: int,
    note: Callable[[int], str],
    tail: Sequence[str] = (),
) -> str:
    """``fixed``, then as many ``items`` lines as fit in ``limit`` characters, then a ``note``
    counting the issue lines (flag True) left out, then ``tail``."""
    shown: list[str] = []
    chars = sum(len(text) for text in (*fixed, *tail))
    pieces = len(fixed) + len(tail)
    for line, _ in items:
        text = line if isinstance(line, str) else line()
        shown.append(text)
        chars, pieces = chars + len(text), pieces + 1
        if chars + pieces - 1 > limit:  # the lines and the newlines between them
            break
    if chars + max(pieces - 1, 0) <= limit:
        return "\n".join([*fixed, *shown, *tail])
    total = sum(1 for _, is_issue in items if is_issue)
    # The note for the full count is the longest it can get, so reserving it is always enough.
    budget = limit - _size(tail) - len(note(total)) - 2
    out = list(fixed)
    size = _size(out)
    count = 0
    for text, (_, is_issue) in zip(shown, items, strict=False):
        grown = size + len(text) + (1 if out else 0)
        if grown > budget:
            break
        out.append(text)
        size = grown
        count += is_issue
    if count < total:
        out.append(note(total - count))
    return _clip("\n".join([*out, *tail]), limit)


# --- shared pieces -------------------------------------------------------------------------


def _config_section(comparison: CheckComparison) -> list[str]:
    if not comparison.config_issues:
        return []
    lines = ["### The configuration is not valid", "", "Nothing is checked until it is fixed:", ""]
    for issue in comparison.config_issues:
        lines.append(f"- {_code(issue.path)} — {_md(issue.kind, 100)} — {_md(issue.message)}")
    return [*lines, ""]


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(_md(name, 100) for name in names[:_MAX_NAMES_SHOWN])
    more = len(names) - _MAX_NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _overview(comparison: CheckComparison, entries: Sequence[_Entry]) -> list[str]:
    """Configuration issues, the table of touched targets, the revisions, the approvals of
    strict targets' new objects, the fixes."""
    lines = _config_section(comparison)
    if comparison.targets:
        lines += [
            "| Target | Path | At head | At base | New issues | On base |",
            "| --- | --- | --- | --- | ---: | ---: |",
        ]
        for t in comparison.targets:
            base = _VERDICT[t.base_verdict] if t.base_verdict is not None else "—"
            lines.append(
                f"| {_md(t.name, 100)} | {_code(t.path or '.')} "
                f"| {_VERDICT[t.verdict]} | {base} | {len(t.new_issues)} "
                f"| {len(t.existing_issues)} |"
            )
        lines += ["", *enforce_lines(comparison)]
    elif not comparison.config_issues:
        lines += ["This change touches no GitTarget path, so there is nothing to check.", ""]
    if comparison.base_sha:
        lines.append(
            f"Checked {_sha(comparison.head_sha)} against base {_sha(comparison.base_sha)}."
        )
    else:
        lines.append(f"Checked {_sha(comparison.head_sha)}; with no base, every issue is new.")
    if comparison.queued is not None:
        lines += ["", _queued_line(comparison.queued)]
    if comparison.untouched:
        lines += ["", f"Not touched by this change: {_names(comparison.untouched)}."]
    approvals = approvals_section(comparison.approvals, merge_group=comparison.merge_group)
    return lines + approvals + _fixes(entries)


def _queued_line(pulls: Sequence[int]) -> str:
    if not pulls:
        return (
            "This is a merge group whose branch names no pull request, so no approval carries "
            "over to it."
        )
    named = ", ".join(f"#{n}" for n in pulls[:_MAX_NAMES_SHOWN])
    more = len(pulls) - _MAX_NAMES_SHOWN
    named += f" and {more} more" if more > 0 else ""
    noun = "pull request" if len(pulls) == 1 else "pull requests"
    return f"This is a merge group of {noun} {named}, checked against the queue's base."


def _fixes(entries: Sequence[_Entry]) -> list[str]:
    """Each kind present once, with what it means and how to fix it (its issues' own fixes,
    when they have them, a few of each kind)."""
    counts: dict[IssueCode, list[int]] = {}
    fixes: dict[IssueCode, dict[str, None]] = {}
    for e in entries:
        counts.setdefault(e.issue.kind, [0, 0])[0 if e.new else 1] += 1
        fixes.setdefault(e.issue.kind, {})[_fix(e.issue)] = None
    if not counts:
        return []
    lines = ["", "### How to fix", ""]
    for kind in sorted(counts, key=lambda k: k.value):
        new, old = counts[kind]
        tally = ", ".join(part for part, n in ((f"{new} new", new), (f"{old} on base", old)) if n)
        info = CODES[kind]
        lines.append(f"- **`{kind.value}`** ({tally}): {info.summary}")
        distinct = list(fixes[kind])
        lines.extend(f"  - **Fix:** {fix}" for fix in distinct[:_MAX_FIXES_PER_KIND])
        if len(distinct) > _MAX_FIXES_PER_KIND:
            lines.append(f"  - … and {len(distinct) - _MAX_FIXES_PER_KIND} more fixes like these")
    return lines


def _item(e: _Entry, *, marks: bool) -> str:
    """One issue on one line: ``path:line — kind — message``."""
    issue = e.issue
    where = _code(issue.path) + (f":{issue.line}" if issue.line is not None else "")
    line = f"{where} — `{issue.kind.value}` — {_md(issue.message)}"
    if marks:  # the full list marks every entry
        line = f"{'[new]' if e.new else '[on base]'} {line}"
        if issue.pattern is not None:
            line += f" — pattern {_code(issue.pattern)}"
    elif not e.new:
        line += " *(already on base)*"
    return "- " + line


# --- the check run -------------------------------------------------------------------------


def _annotatable(issue: Issue, changed: frozenset[str]) -> bool:
    # A name that is not UTF-8 (surrogateescape) can be neither sent as JSON nor matched.
    return issue.path in changed and not any(0xD800 <= ord(c) <= 0xDFFF for c in issue.path)


def _annotation(e: _Entry, *, counts: bool) -> Annotation:
    """``counts``: False for an issue on base that is listed only (``enforce: new``), which
    must not look like what fails the check."""
    issue = e.issue
    line = max(issue.line or 1, 1)
    on_base = " (already on base)" if counts else " (already on base, not blocking)"
    title = issue.kind.value + ("" if e.new else on_base)
    message = _shorten(_printable(issue.message, newlines=True), _MAX_ANNOTATION_MESSAGE)
    message += "\nFix: " + _printable(issue.how_to_fix)
    level: AnnotationLevel = _LEVEL[issue.severity] if counts else "warning"
    return Annotation(issue.path, line, line, level, title, message)


def _text(comparison: CheckComparison) -> str:
    """Every issue of every touched target, grouped by target, each marked new or on base."""
    fixed = _config_section(comparison)
    if not comparison.targets and not comparison.config_issues:
        fixed.append("No GitTarget path is touched by this change.")
    items: list[Line] = []
    for n, t in enumerate(comparison.targets):
        at_base = "" if t.base_verdict is None else f" (base: {t.base_verdict.value})"
        head = f"### {_md(t.name, 100)} — {_code(t.path or '.')} — {t.verdict.value}"
        if fixed or n:
            items.append(("", False))
        items += [(head + at_base, False), ("", False)]
        entries = sorted((_Entry(m.issue, m.new, n) for m in t.issues), key=_Entry.key)
        if not entries:
            items.append(("No issues.", False))
        items += [(functools.partial(_item, e, marks=True), True) for e in entries]

    def note(left: int) -> str:
        return (
            f"\n… and {_n(left, 'more issue')} not shown: the list is cut to stay within "
            f"{MAX_OUTPUT_CHARS:,} characters."
        )

    return _fit(fixed, items, MAX_OUTPUT_CHARS, note)


def check_output(
    comparison: CheckComparison,
    *,
    details_url: str | None = None,
    max_annotations: int = 1000,
) -> CheckOutput:
    """The finished check run: title, summary table, annotations on changed files, full list."""
    entries = _entries(comparison)
    candidates = [
        n for n, e in enumerate(entries) if _annotatable(e.issue, comparison.changed_paths)
    ]
    annotated = candidates[: max(max_annotations, 0)]
    chosen = set(annotated)
    rest = [e for n, e in enumerate(entries) if n not in chosen]

    fixed = _overview(comparison, entries)
    if rest:
        outside = sum(1 for e in rest if e.issue.path not in comparison.changed_paths)
        why = [f"{outside} in files this change does not modify"] if outside else []
        over = len(candidates) - len(annotated)
        if over:
            why.append(f"{over} over the limit of {_n(max_annotations, 'annotation')}")
        unsendable = len(rest) - outside - over
        if unsendable:
            why.append(f"{unsendable} in files whose names cannot be annotated")
        fixed += ["", f"### Issues without an annotation ({len(rest)})", ""]
        fixed += ["; ".join(why) + ".", ""]

    def note(left: int) -> str:
        return f"- … and {_n(left, 'more issue')}; see the full list below."

    lines: list[Line] = [(functools.partial(_item, e, marks=False), True) for e in rest]
    summary = _fit(fixed, lines, MAX_OUTPUT_CHARS, note)
    conclusion = comparison.conclusion
    waiting = conclusion is Conclusion.ACTION_REQUIRED
    only_new = [t.only_new_count(pull_request=comparison.pull_request) for t in comparison.targets]
    return CheckOutput(
        conclusion=conclusion,
        title=check_title(comparison),
        summary=summary,
        text=_text(comparison),
        annotations=tuple(
            _annotation(entries[n], counts=entries[n].new or not only_new[entries[n].target])
            for n in annotated
        ),
        details_url=details_url,
        actions=_actions(comparison, waiting=waiting),
    )


def _actions(comparison: CheckComparison, *, waiting: bool) -> tuple[CheckAction, ...]:
    """A merge group's check has no buttons: nobody approves a merge group, and a button press
    runs a command on a pull request. GitHub's own re-run checks the group again."""
    if comparison.merge_group:
        return ()
    return (APPROVE_ACTION, RECHECK_ACTION) if waiting else (RECHECK_ACTION,)


# --- the summary comment (GitLab, Gitea; optionally GitHub) ---------------------------------


def _link(details_url: str | None) -> list[str]:
    # Only web links; the URL is ours, but a stray ')' or '<' must not end the link early.
    if not details_url or not details_url.startswith(("https://", "http://")):
        return []
    url = quote(details_url, safe=":/?#[]@!$&'*+,;=%~", errors="surrogatepass")
    return ["", f"[Full report]({url})"]


def summary_comment(comparison: CheckComparison, *, details_url: str | None = None) -> str:
    """The one comment on a PR/MR, edited in place; found again by its first line."""
    entries = _entries(comparison)
    link = _link(details_url)
    approvals = comparison.approvals
    if (
        not comparison.config_issues
        and not entries
        and (approvals is None or not approvals.objects)
    ):
        if comparison.targets:
            clear = f"every touched GitTarget path is accepted at {_sha(comparison.head_sha)}."
        else:
            clear = f"this change touches no GitTarget path (at {_sha(comparison.head_sha)})."
        return "\n".join([SUMMARY_MARKER, f"✅ All clear: {clear}", *link])
    icon = _ICON.get(comparison.conclusion, "❌")
    verdict = f"{icon} **{check_title(comparison)}**"  # our own words and numbers only
    fixed = [SUMMARY_MARKER, verdict, "", *_overview(comparison, entries)]
    if entries:
        fixed += ["", f"### Issues ({len(entries)})", ""]

    def note(left: int) -> str:
        more = "in the full report" if link else "in the check's details"
        return f"- … and {_n(left, 'more issue')}; see the full list {more}."

    items: list[Line] = [(functools.partial(_item, e, marks=False), True) for e in entries]
    return _fit(fixed, items, MAX_COMMENT_CHARS, note, tail=link)


def error_output(reason: str, *, head_sha: str) -> CheckOutput:
    """No verdict: the check itself failed (not the change). Says why and what to do."""
    why = _md(reason.strip(), _MAX_REASON_SHOWN) if reason.strip() else "no reason was recorded."
    summary = "\n".join(
        [
            f"The acceptance check of {_sha(head_sha)} could not be completed, so there is no "
            "verdict yet. This says nothing about the change itself.",
            "",
            f"**Why:** {why}",
            "",
            "**What to do:** comment `/recheck` on the pull request, or re-run the check. "
            "If it fails again the same way, ask whoever runs Ichor Bot to look at its logs.",
        ]
    )
    return CheckOutput(Conclusion.ERROR, ERROR_TITLE, summary, text="", actions=(RECHECK_ACTION,))
