"""The structural gate: every entry of a target in exactly one role (design.md 3, roles 1–7).

A pure function of the snapshot and the policy. The only content it reads is the root
``.gittargetignore`` (and a symlink's target, for the message); YAML files are collected for
the content gate, not read here.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from bot.errors import IchorError
from bot.gate.codes import IssueCode
from bot.gate.empty_target import empty_target_issue
from bot.gate.policy import CONFIG_FILE, MAX_IGNORE_FILE_BYTES, TargetPolicy
from bot.gate.report import Issue, Role, TargetReport, empty_counts
from bot.gate.unused_ignore import unused_pattern_issues
from bot.git.snapshot import Entry, EntryKind, Snapshot
from bot.ignore.rules import IGNORE_FILE, IgnoreMatcher, IgnoreRule, parse_ignore_file
from bot.paths import basename, decode_path, display_path, join, relative_to

OPERATOR_ARTIFACTS = frozenset({"README.md", ".sops.yaml"})
# Every name kustomize reads a kustomization from (its own order of preference).
BUILD_DIRECTIVES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
BENIGN_PASSENGERS = frozenset(
    {".gitignore", ".gitattributes", ".gitkeep", ".keep"}
    | {
        f"{stem}{ext}"
        for stem in ("LICENSE", "LICENCE", "COPYING", "NOTICE")
        for ext in ("", ".txt")
    }
)
BENIGN_SUFFIXES = (".md", ".markdown")
YAML_SUFFIXES = (".yaml", ".yml")
_MAX_LINK_TARGET_SHOWN = 1024


@dataclass(frozen=True, slots=True)
class StructuralResult:
    """The structural report, plus what the content gate needs next."""

    report: TargetReport
    matcher: IgnoreMatcher
    # YAML files the ignore file hides: read only by the safety scan, never managed.
    ignored_yaml: tuple[str, ...]
    files: tuple[str, ...]  # every regular file under the target, for resolving references


def classify_target(snapshot: Snapshot, target: TargetPolicy) -> StructuralResult:
    path_issues = _path_itself(snapshot, target.path)
    issues: list[Issue] = list(path_issues)
    counts = empty_counts()
    yaml_files: list[str] = []
    directives: list[str] = []
    ignored_yaml: list[str] = []
    files: list[str] = []
    matcher, ignore_issues, applied = _load_ignore_file(snapshot, target.path)
    issues.extend(ignore_issues)
    # The target path itself is not a directory: reported by _path_itself.
    entries = [entry for entry in snapshot.under(target.path) if entry.path != target.path]
    rels = [relative_to(entry.path, target.path) for entry in entries]
    # One pass of the matcher decides every entry and finds the lines in use.
    survey = matcher.survey(rels)

    for entry, rel in zip(entries, rels, strict=True):
        if entry.kind is EntryKind.FILE:
            files.append(entry.path)
        role, issue = _classify(entry, rel, ignored=survey.rules[rel] is not None)
        counts[role] += 1
        if issue is not None:
            issues.append(issue)
        elif role is Role.MANAGED:
            yaml_files.append(entry.path)
        elif role is Role.BUILD_DIRECTIVE:
            directives.append(entry.path)
        elif (
            role is Role.IGNORED
            and entry.kind is EntryKind.FILE
            and entry.path.endswith(YAML_SUFFIXES)
        ):
            ignored_yaml.append(entry.path)

    ignore_file = join(target.path, IGNORE_FILE)
    issues.extend(unused_pattern_issues(ignore_file, applied, survey))
    if not path_issues and not any(counts.values()):
        # A typo in .ichor.yaml would otherwise be accepted with nothing checked.
        issues.append(empty_target_issue(snapshot, target.path))
    issues.sort(key=Issue.sort_key)
    report = TargetReport(
        name=target.name,
        path=target.path,
        issues=tuple(issues),
        counts=counts,
        yaml_files=tuple(yaml_files),
        build_directives=tuple(directives),
    )
    return StructuralResult(report, matcher, tuple(ignored_yaml), tuple(files))


def _classify(entry: Entry, rel: str, *, ignored: bool) -> tuple[Role, Issue | None]:
    """Roles 1–7 in design.md 3's order; the first that applies decides (``ignored``: whether the
    root ignore file matches the entry)."""
    name = basename(rel)
    # 1. links are refused unless ignored: a writer could follow them out of the subtree.
    if entry.kind is EntryKind.SYMLINK:
        if ignored:
            return Role.IGNORED, None
        return Role.FOREIGN, _foreign_symlink(entry)
    if entry.kind is EntryKind.GITLINK:
        if ignored:
            return Role.IGNORED, None
        message = f"git submodule (gitlink at commit {entry.oid})" if entry.oid else "git submodule"
        return Role.FOREIGN, Issue.of(IssueCode.FOREIGN_SUBMODULE, entry.path, message)
    if entry.kind is EntryKind.FILE:
        # 2. the root ignore file is the matcher itself.
        if rel == IGNORE_FILE:
            return Role.OPERATOR_ARTIFACT, None
        # A target at the repository root holds the bot's own configuration too.
        if entry.path == CONFIG_FILE:
            return Role.OPERATOR_ARTIFACT, None
        # 3. the operator's own files and build directives cannot be ignored away.
        if name in OPERATOR_ARTIFACTS:
            return Role.OPERATOR_ARTIFACT, None
        if name in BUILD_DIRECTIVES:
            return Role.BUILD_DIRECTIVE, None
    # 4. the root ignore file: never read.
    if ignored:
        return Role.IGNORED, None
    if entry.kind is EntryKind.SPECIAL:
        return Role.FOREIGN, Issue.of(
            IssueCode.FOREIGN_FILE, entry.path, "not a regular file (a FIFO, socket or device)"
        )
    # 5. YAML: read and parsed by the content gate.
    if name.endswith(YAML_SUFFIXES):
        return Role.MANAGED, None
    # 6. benign passengers, after the ignore filter so they stay suppressible.
    if name in BENIGN_PASSENGERS or name.endswith(BENIGN_SUFFIXES):
        return Role.BENIGN_PASSENGER, None
    # 7. everything else.
    return Role.FOREIGN, Issue.of(IssueCode.FOREIGN_FILE, entry.path, _foreign_file_message(name))


def _foreign_file_message(name: str) -> str:
    base = "not YAML, a build directive, an operator artifact or a benign passenger"
    if name == IGNORE_FILE:
        return (
            "a .gittargetignore below the target root is not honoured (only the one at the "
            "target root is); remove it or merge its patterns into the root file"
        )
    lowered = name.lower()
    if lowered.endswith(YAML_SUFFIXES):
        return f"{base}; YAML is recognised by a lower-case '.yaml' or '.yml' extension"
    shown = display_path(name)
    if shown != name:
        stripped = "".join(ch for ch in name if ch.isprintable())
        if stripped.endswith(YAML_SUFFIXES):
            return f"{base}; the name '{shown}' has an invisible character after its YAML extension"
        return f"{base}; the name contains characters shown escaped: '{shown}'"
    return base


def _foreign_symlink(entry: Entry) -> Issue:
    message = "symbolic link"
    if entry.size <= _MAX_LINK_TARGET_SHOWN:
        # The link's target only decorates the message; an unreadable one is left out.
        with contextlib.suppress(IchorError, OSError):
            message = f"symbolic link to '{display_path(decode_path(entry.read()))}'"
    return Issue.of(IssueCode.FOREIGN_SYMLINK, entry.path, message)


def _path_itself(snapshot: Snapshot, root: str) -> list[Issue]:
    """The target path and its parents must be plain directories, never a link or a file."""
    issues: list[Issue] = []
    if root == "":
        return issues
    parts = root.split("/")
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        entry = snapshot.get(prefix)
        if entry is None:
            continue
        what = "the target path" if prefix == root else f"a parent of the target path {root!r}"
        if entry.kind is EntryKind.SYMLINK:
            issues.append(Issue.of(IssueCode.FOREIGN_SYMLINK, prefix, f"{what} is a symbolic link"))
        elif entry.kind is EntryKind.GITLINK:
            issues.append(Issue.of(IssueCode.FOREIGN_SUBMODULE, prefix, f"{what} is a submodule"))
        else:
            issues.append(Issue.of(IssueCode.FOREIGN_FILE, prefix, f"{what} is a file"))
        break
    return issues


def _load_ignore_file(
    snapshot: Snapshot, root: str
) -> tuple[IgnoreMatcher, list[Issue], tuple[IgnoreRule, ...]]:
    """The matcher, the issues of the file, and every pattern line that is applied."""
    path = join(root, IGNORE_FILE)
    entry = snapshot.get(path)
    if entry is None or entry.kind is not EntryKind.FILE:
        return IgnoreMatcher.empty(), [], ()
    if entry.size > MAX_IGNORE_FILE_BYTES:
        message = (
            f"{entry.size} bytes, over the {MAX_IGNORE_FILE_BYTES} byte limit for an ignore file; "
            "it is not read, so nothing in the target is ignored"
        )
        return IgnoreMatcher.empty(), [Issue.of(IssueCode.FILE_TOO_LARGE, path, message)], ()
    text = decode_path(entry.read())
    parsed = parse_ignore_file(text)
    issues = [
        Issue.of(
            IssueCode.IGNORE_SHADOWS_MANAGED,
            path,
            f"pattern '{display_path(denied.pattern)}' would hide every managed file, the "
            "operator's own writes included; it is not applied",
            line=denied.line,
            pattern=denied.pattern,
        )
        for denied in parsed.denied
    ]
    return parsed.matcher, issues, parsed.applied
