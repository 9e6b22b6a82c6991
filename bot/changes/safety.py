"""Where a change may write (design.md 6, "Safety"), decided before anything is written.

Every written path must be inside the target it acts for, relative, without ``..`` or a
``.git`` segment, and not matched by the target's ignore file: the bot never writes a file
the operator would not own (the shadow invariant, design.md 3.4). A new ``/ignore`` pattern must
not be a denied one (``*``, ``*.yaml`` ...) and must not shadow any managed object's file.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.ignore.rules import IgnoreMatcher, IgnoreRule, is_denied, read_rules
from bot.paths import is_within, relative_to

MAX_PATTERN_CHARS = 1_000


def written_path_problem(path: str, target_root: str, ignore: IgnoreMatcher | None) -> str | None:
    """Why the change may not write ``path`` (repository-relative), or None."""
    if not path or path.startswith("/") or "\\" in path or "\0" in path or "\n" in path:
        return f"{path!r} is not a relative repository path"
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return f"{path!r} has an empty, '.' or '..' segment"
    if any(p.casefold() == ".git" for p in parts):
        return f"{path!r} is inside a .git directory"
    if not is_within(path, target_root):
        return f"{path!r} is outside the target's path {target_root!r}"
    relative = path if target_root in ("", ".") else relative_to(path, target_root)
    if ignore is not None and ignore.is_ignored(relative):
        return (
            f"{path!r} is ignored by the target's .gittargetignore: the operator would not own it"
        )
    return None


def anchored(pattern: str) -> str:
    """The pattern as it is added: anchored at the target's root, so it ignores only what it
    names there (``notes.txt`` would ignore every ``notes.txt`` below too)."""
    return pattern if pattern.startswith("/") or "/" in pattern.rstrip("/") else "/" + pattern


def ignore_pattern_problem(
    pattern: str, existing: str, managed: Iterable[str], target_root: str
) -> str | None:
    """Why ``pattern`` may not be added to a target's ignore file whose text is ``existing``,
    given the repository paths of the target's managed files; None when it may."""
    if not pattern.strip() or len(pattern) > MAX_PATTERN_CHARS:
        return "the pattern is empty or too long"
    if any(not c.isprintable() for c in pattern):
        return "the pattern holds a control character"
    if pattern.startswith(("!", "#")):
        return "a pattern starting with '!' or '#' is not an ignore rule"
    line = anchored(pattern)
    rules = read_rules(line)
    if not rules:
        return "the pattern is not an ignore rule git would read"
    rule = IgnoreRule(1, rules[0].pattern, negated=False)
    if is_denied(rule):
        return f"{pattern!r} would ignore every file of the target"
    matcher = IgnoreMatcher((*read_rules(existing), rule))
    for path in managed:
        relative = path if target_root in ("", ".") else relative_to(path, target_root)
        if matcher.is_ignored(relative):
            return f"{pattern!r} would shadow the managed file {path!r}"
    return None
