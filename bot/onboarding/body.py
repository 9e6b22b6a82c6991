"""The onboarding pull request's title and body (design.md 6.6). Pure.

The body shows, for each proposed target, the gate's verdict and role counts on the tree as
it would be after merging, the refused files grouped by issue code with each code's fix, and
how to make ``ichor/acceptance`` a required check on the forge at hand. Every path and message
comes from the repository, so it is escaped (:mod:`bot.checks.markdown_text`); the body stays
within a forge's size limit by listing fewer files, never by cutting markdown in the middle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.checks.markdown_text import inline_path, inline_text
from bot.forges.base import CHECK_NAME, ForgeKind
from bot.gate.codes import CODES, IssueCode, Severity
from bot.gate.fixes import ignore_pattern_for
from bot.gate.report import Issue, Role, TargetReport, Verdict
from bot.ignore.rules import IGNORE_FILE
from bot.onboarding.detect import Candidate
from bot.paths import join, relative_to

BRANCH = "ichor/bootstrap"
TITLE = "ichor: guard this repository's GitTarget paths"
MARKER = "<!-- ichor:onboarding -->"  # tells the bot's onboarding pull request from people's
# GitHub refuses a body over 65,536 characters; the rest is room for what the forge section
# and the closing lines need.
MAX_BODY = 60_000
SHOWN_PER_CODE = 20
_MESSAGE_SHOWN = 300
# Codes whose files can be kept by a line in the target's ignore file (the text renderer's set).
_IGNORABLE = frozenset(
    {IssueCode.FOREIGN_FILE, IssueCode.FOREIGN_SYMLINK, IssueCode.FOREIGN_SUBMODULE}
)

_GITHUB = f"""\
**GitHub**: in the repository's *Settings*, either
- *Rules* → *Rulesets* → *New branch ruleset*: target the default branch, turn on *Require
  status checks to pass*, and add the check `{CHECK_NAME}`; or
- *Branches* → *Add branch protection rule* for the default branch: turn on *Require status
  checks to pass before merging* and search for `{CHECK_NAME}`.

The check is offered once it has run on a commit, as it does on this pull request."""

_GITLAB = f"""\
**GitLab** cannot require a commit status by name, and the bot posts `{CHECK_NAME}` as one. It
shows in an external stage of the commit's pipeline, but *Pipelines must succeed* does not
apply to it reliably: a newer CI pipeline of the same commit does not carry it. On GitLab
Ultimate, *Settings* → *Merge requests* → *Merge checks*: *Status checks must succeed* blocks
merging on external status checks (*Settings* → *Merge requests* → *Status checks*); an
external status check is answered through GitLab's status check API, which this version of the
bot does not call yet. On every tier, an approval rule (*Settings* → *Merge requests*, or the
merge request approvals API) makes a merge wait for a reviewer, who approves once
`{CHECK_NAME}` passed."""

_GITEA = f"""\
**Gitea and Forgejo**: in the repository's *Settings* → *Branches*, add a branch protection
rule for the default branch, turn on *Enable status check*, enter `{CHECK_NAME}` as a status
check pattern, and save."""

_FORGE_STEPS = {ForgeKind.GITHUB: _GITHUB, ForgeKind.GITLAB: _GITLAB, ForgeKind.GITEA: _GITEA}


def forge_steps(forge: str) -> str:
    """How to require the check on ``forge`` (``github``, ``gitlab``, ``gitea``; Forgejo is
    ``gitea``); for any other forge, the steps of all three."""
    kind = {"forgejo": ForgeKind.GITEA}.get(forge)
    try:
        kind = kind or ForgeKind(forge)
    except ValueError:
        return "\n\n".join(_FORGE_STEPS.values())
    return _FORGE_STEPS[kind]


def onboarding_body(
    candidates: Sequence[Candidate], reports: Mapping[str, TargetReport], forge: str
) -> str:
    """The body; ``reports`` maps a target's name to the gate's report on the proposed tree
    (the repository with this pull request's files added)."""
    head = [
        MARKER,
        "Ichor Bot proposes to guard this repository. This pull request adds `.ichor.yaml` "
        f"with {len(candidates)} target{'s' * (len(candidates) != 1)}, the folders whose YAML "
        "is mostly Kubernetes objects, and a README.md and a commented `.gittargetignore` in "
        "each target that has none. Nothing is checked until it is merged.",
        "",
    ]
    tail = [
        "",
        f"### Make `{CHECK_NAME}` a required check",
        "",
        "After merging, each push and pull request gets the check; to stop a refused change "
        "from being merged, require it:",
        "",
        forge_steps(forge),
        "",
        "### Before merging",
        "",
        "Rename, remove or add targets, or set `mode: strict` where new objects should wait for "
        "an `/approve`: the file explains each key. If you close this pull request, the bot does "
        "not propose it again; `ichor-bot onboard` proposes it anew.",
    ]
    overview = _overview(candidates, reports)
    parts = [_target_parts(c, reports.get(c.name)) for c in candidates]
    # What every section needs whatever the files: when even that does not fit, each code is
    # said in one line, without its files and fix.
    fixed = sum(
        _length(lines) + sum(_length(code.head) + _MORE_ROOM for code in codes)
        for lines, codes in parts
    )
    room = MAX_BODY - _length(head) - _length(tail) - _length(overview) - fixed
    sections = list(overview)
    for lines, codes in parts:
        sections += lines
        for code in codes:
            if room < 0:
                sections.append(code.compact)
                continue
            sections += code.head
            shown = 0
            for item in code.items:
                if len(item) + 1 > room:
                    break
                sections.append(item)
                room -= len(item) + 1
                shown += 1
            if shown < code.total:
                sections.append(
                    f"  - … and {code.total - shown} more: `ichor-bot check` at the repository "
                    "root lists every one"
                )
    if room < 0:
        sections += [
            "",
            "The files and their fixes do not fit here: `ichor-bot check` at the "
            "repository root lists every one.",
        ]
    return "\n".join(head + sections + tail)


def _length(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _overview(candidates: Sequence[Candidate], reports: Mapping[str, TargetReport]) -> list[str]:
    lines = ["| target | path | verdict | objects found |", "| --- | --- | --- | --- |"]
    for c in candidates:
        report = reports.get(c.name)
        lines.append(
            f"| `{c.name}` | {inline_path(c.path or '.')} | {_verdict(report)} | "
            f"{c.objects} of {c.documents} documents |"
        )
    return lines


def _verdict(report: TargetReport | None) -> str:
    if report is None:
        return "not checked"
    if report.verdict is Verdict.ACCEPTED:
        return "accepted"
    errors = sum(1 for i in report.issues if i.severity is Severity.ERROR)
    return f"**refused** ({errors} error{'s' * (errors != 1)})"


@dataclass(frozen=True, slots=True)
class _Code:
    """The issues of one code in one target: the code's line and fix, a line per file shown."""

    head: tuple[str, ...]
    items: tuple[str, ...]
    total: int
    compact: str


_MORE_ROOM = 120  # the "... and N more" line a code may need


def _target_parts(
    candidate: Candidate, report: TargetReport | None
) -> tuple[list[str], list[_Code]]:
    """The fixed lines of one target's section, and its issues by code (errors first)."""
    lines = ["", f"### `{candidate.name}`: {inline_path(candidate.path or '.')}", ""]
    if report is None:
        lines.append("The gate did not check this target.")
        return lines, []
    roles = list(Role)
    lines += [
        "| verdict | " + " | ".join(r.value for r in roles) + " |",
        "| --- |" + " ---: |" * len(roles),
        f"| {_verdict(report)} | " + " | ".join(str(report.counts.get(r, 0)) for r in roles) + " |",
    ]
    grouped: dict[IssueCode, list[Issue]] = defaultdict(list)
    for issue in sorted(report.issues, key=Issue.sort_key):
        grouped[issue.kind].append(issue)
    errors = sorted((c for c in grouped if CODES[c].severity is Severity.ERROR), key=str)
    warnings = sorted((c for c in grouped if c not in errors), key=str)
    if errors:
        lines += ["", "Refused files, by issue code:"]
    return lines, [_code(c, grouped[c], report.path) for c in [*errors, *warnings]]


def _code(code: IssueCode, issues: list[Issue], target: str) -> _Code:
    info = CODES[code]
    warning = " (a warning; it refuses nothing)" if info.severity is Severity.WARNING else ""
    said = f"- `{code.value}` ({len(issues)}){warning}"
    ignorable = code in _IGNORABLE
    return _Code(
        head=("", f"{said}: {info.summary}", f"  **Fix**: {info.fix}"),
        items=tuple(
            "  - " + _issue_text(issue, target, ignorable) for issue in issues[:SHOWN_PER_CODE]
        ),
        total=len(issues),
        compact=said,
    )


def _issue_text(issue: Issue, target: str, ignorable: bool) -> str:
    where = inline_path(issue.path) + (f" line {issue.line}" if issue.line else "")
    text = f"{where}: {inline_text(issue.message, _MESSAGE_SHOWN)}"
    if ignorable and issue.path != target:
        pattern = ignore_pattern_for(relative_to(issue.path, target))
        text += (
            f"; to keep it, add {inline_path(pattern)} to {inline_path(join(target, IGNORE_FILE))}"
        )
    return text
