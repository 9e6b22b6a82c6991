"""One proposed target's section of the onboarding body (design.md 6.6). Pure.

Its verdict and role counts on the tree as it would be after merging; the types its capabilities
file lists, each with where its entry came from (a CRD of the repository, the catalog's project
and version) or, for a type no source knows, the fix that records it; then the refused files
grouped by issue code, each code with its fix and each file with its own (a command, or the
``.gittargetignore`` line that keeps it). Every path and message comes from the repository, so
it is escaped (:mod:`bot.checks.markdown_text`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from bot.checks.markdown_text import escape, inline_fix, inline_path, inline_text, printable
from bot.gate.codes import CODES, IssueCode, Severity
from bot.gate.fixes import append_lines_command, ignore_pattern_for, shell_word
from bot.gate.report import Issue, Role, TargetReport, Verdict
from bot.ignore.rules import IGNORE_FILE
from bot.onboarding.proposal import ProposedTarget
from bot.paths import join, relative_to
from bot.registry.suggest import Origin, SuggestedType

SHOWN_PER_CODE: Final = 20
SHOWN_PER_SOURCE: Final = 12
_MESSAGE_SHOWN: Final = 300
# Codes whose files a line in the target's ignore file keeps (their fix says so).
_IGNORABLE: Final = frozenset(
    {
        IssueCode.FOREIGN_FILE,
        IssueCode.FOREIGN_SYMLINK,
        IssueCode.FOREIGN_SUBMODULE,
        IssueCode.NON_KRM_YAML,
        IssueCode.INVALID_YAML,
        IssueCode.FILE_TOO_LARGE,
    }
)
RECORDING: Final = "api-resources.txt"
# kustomize's own plugin configurations (a kustomization's transformers or generators read
# them); no cluster serves them.
_KUSTOMIZE_BUILTIN: Final = "builtin"


@dataclass(frozen=True, slots=True)
class CodeLines:
    """The issues of one code in one target: the code's line and fix, a line per file shown."""

    head: tuple[str, ...]
    items: tuple[str, ...]
    total: int
    compact: str


def verdict_text(report: TargetReport | None) -> str:
    if report is None:
        return "not checked"
    if report.verdict is Verdict.ACCEPTED:
        return "accepted"
    errors = sum(1 for i in report.issues if i.severity is Severity.ERROR)
    return f"**refused** ({errors} error{'s' * (errors != 1)})"


def target_parts(target: ProposedTarget) -> tuple[list[str], list[CodeLines]]:
    """The fixed lines of one target's section, and its issues by code (errors first)."""
    candidate, report = target.candidate, target.report
    lines = ["", f"### `{candidate.name}`: {inline_path(candidate.path or '.')}", ""]
    if report is None:
        lines.append("The gate did not check this target.")
        return lines, []
    roles = list(Role)
    lines += [
        "| verdict | " + " | ".join(r.value for r in roles) + " |",
        "| --- |" + " ---: |" * len(roles),
        f"| {verdict_text(report)} | "
        + " | ".join(str(report.counts.get(r, 0)) for r in roles)
        + " |",
    ]
    lines += type_lines(target)
    grouped: dict[IssueCode, list[Issue]] = defaultdict(list)
    for issue in sorted(report.issues, key=Issue.sort_key):
        grouped[issue.kind].append(issue)
    errors = sorted((c for c in grouped if CODES[c].severity is Severity.ERROR), key=str)
    warnings = sorted((c for c in grouped if c not in errors), key=str)
    if errors:
        lines += ["", "Refused files, by issue code:"]
    return lines, [code_lines(c, grouped[c], report.path) for c in [*errors, *warnings]]


def type_lines(target: ProposedTarget) -> list[str]:
    """Which types the capabilities file lists and where each entry came from; the types no
    source knows, with the fix for each."""
    suggestion = target.suggestion
    if suggestion is None or not suggestion.types:
        return []
    where = inline_path(target.capabilities) if target.capabilities else "its capabilities file"
    found = len(suggestion.written)
    lines = [
        "",
        f"Its objects use {_count(len(suggestion.types), 'type')} that Kubernetes itself does "
        f"not serve; {where} lists {found}, each from the first source that knows it:",
    ]
    by_source: dict[str, list[SuggestedType]] = defaultdict(list)
    for t in suggestion.written:
        by_source[t.source].append(t)
    for _, types in sorted(by_source.items()):
        shown = ", ".join(_type(t) for t in types[:SHOWN_PER_SOURCE])
        hidden = len(types) - SHOWN_PER_SOURCE
        more = f" and {hidden} more" if hidden > 0 else ""
        lines.append(f"- {_source(types[0])}: {shown}{more}")
    missing = suggestion.missing
    if missing:
        lines += ["", f"**Not found** in the repository or the catalog ({len(missing)}):"]
        lines += [_missing_line(t) for t in missing]
        lines += _missing_fix(target, missing)
    return lines


def _type(t: SuggestedType) -> str:
    return f"<code>{inline_text(t.name, 200)}</code>"


def _source(t: SuggestedType) -> str:
    if t.origin is Origin.CATALOG and t.project is not None:
        project = inline_text(t.project.label, 200)
        return f"the catalog, {project} ({inline_text(t.project.license, 80)})"
    if t.origin is Origin.REPOSITORY:
        crd, _, path = t.source.removeprefix("CustomResourceDefinition ").partition(" at ")
        return f"the repository's CRD {inline_text(crd, 200)} at {inline_path(path)}"
    return inline_text(t.source, 300)


def _missing_line(t: SuggestedType) -> str:
    note = f": {inline_text(t.note, _MESSAGE_SHOWN)}" if t.note else ""
    if t.version == _KUSTOMIZE_BUILTIN and not t.group:
        note = (
            ": kustomize's own transformer or generator configuration, which no cluster "
            "serves; the fix of the kustomization that reads it (`unsupported-kustomize`, "
            "below) renders it away"
        )
    return f"  - {_type(t)}{note}"


def _missing_fix(target: ProposedTarget, missing: Sequence[SuggestedType]) -> list[str]:
    path = target.candidate.path
    output = target.capabilities or f"{path}.capabilities.txt"
    record = (
        f"kubectl api-resources -o wide > {RECORDING} && ichor-bot types --suggest --path "
        f"{shell_word(path)} --capabilities {RECORDING} --output {shell_word(output)}"
    )
    lines = [
        "",
        "  **Fix**: if the cluster serves them, record what it serves and write the file again "
        "from that recording (run at the repository's root, with the cluster's kubeconfig):",
        f"  <code>{escape(printable(record), code=True)}</code>",
    ]
    served = {t.name for t in missing if t.version != _KUSTOMIZE_BUILTIN or t.group}
    report = target.report
    files = sorted(
        {i.path for i in report.issues if i.subject in served and i.fix is not None}
        if report is not None
        else set()
    )
    if files:
        patterns = [ignore_pattern_for(relative_to(f, path)) for f in files[:SHOWN_PER_CODE]]
        ignore = append_lines_command(join(path, IGNORE_FILE), patterns)
        lines += [
            "  A type no cluster serves (a tool's own configuration, package metadata) is no "
            "object of the cluster: ignore its files instead:",
            f"  <code>{escape(printable(ignore), code=True)}</code>",
        ]
    return lines


def code_lines(code: IssueCode, issues: list[Issue], target: str) -> CodeLines:
    info = CODES[code]
    warning = " (a warning; it refuses nothing)" if info.severity is Severity.WARNING else ""
    said = f"- `{code.value}` ({len(issues)}){warning}"
    return CodeLines(
        head=("", f"{said}: {info.summary}", f"  **Fix**: {info.fix}"),
        items=tuple("  - " + issue_text(issue, target) for issue in issues[:SHOWN_PER_CODE]),
        total=len(issues),
        compact=said,
    )


def issue_text(issue: Issue, target: str) -> str:
    """A file's line: where, the message, and its own fix: the issue's (a command naming the
    file), or the ignore line that keeps it."""
    where = inline_path(issue.path) + (f" line {issue.line}" if issue.line else "")
    text = f"{where}: {inline_text(issue.message, _MESSAGE_SHOWN)}"
    if issue.fix is not None:
        return f"{text}; fix: {inline_fix(issue)}"
    if issue.kind in _IGNORABLE and issue.path != target:
        pattern = ignore_pattern_for(relative_to(issue.path, target))
        text += (
            f"; to keep it, add {inline_path(pattern)} to {inline_path(join(target, IGNORE_FILE))}"
        )
    return text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"
