"""The root ``.gittargetignore``: git's ignore semantics over target-relative paths.

Patterns are compiled with ``pathspec``'s ``GitIgnoreSpec`` one line at a time, so every match
can name the line and pattern that decided it. Directory exclusion is applied here, the way git
applies it: once a directory is ignored nothing below it is looked at, so a later ``!pattern``
cannot re-include a file inside it. Where ``pathspec`` and git disagree the line is rewritten
before compiling (see ``docs/ignore-semantics.md``); git is the reference.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

from pathspec import GitIgnoreSpec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

IGNORE_FILE = ".gittargetignore"

# DESIGN 3.1: patterns that would hide every managed file. Refused at parse time.
DENIED_PATTERNS = frozenset({"*", "**", "/", "*.yaml", "*.yml", "**/*", "**/*.yaml", "**/*.yml"})

# Generic names no real pattern singles out. A pattern that hides every probe of one family
# hides the whole space of managed files, however it is spelled (``/*``, ``*/``, ``*.y?ml`` ...).
_PROBE_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("a.yaml", "zq-7.yaml", "M_x9.yaml"),
    ("a.yml", "zq-7.yml", "M_x9.yml"),
    ("d/a.yaml", "zq-7/p/M_x9.yaml", "M_x9/v1/k.yaml"),
    ("d/a.yml", "zq-7/p/M_x9.yml", "M_x9/v1/k.yml"),
)

_UTF8_BOM = "\ufeff"
_TRAILING_SPACES = re.compile(r"(?<!\\)((?:\\\\)*) +$")


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One effective pattern line of the ignore file (1-based ``line``)."""

    line: int
    pattern: str
    negated: bool


@dataclass(frozen=True, slots=True)
class DeniedPattern:
    line: int
    pattern: str


class IgnoreMatcher:
    """Answers "is this target-relative path ignored?" with git's semantics."""

    def __init__(self, rules: Iterable[IgnoreRule]) -> None:
        self.rules: tuple[IgnoreRule, ...] = ()
        compiled: list[GitIgnoreSpecPattern] = []
        kept: list[IgnoreRule] = []
        for rule in rules:
            pattern = _compile(rule.pattern)
            if pattern is not None:
                compiled.append(pattern)
                kept.append(rule)
        self.rules = tuple(kept)
        self._spec = GitIgnoreSpec(compiled)
        self._dirs: dict[str, IgnoreRule | None] = {}

    @classmethod
    def empty(cls) -> IgnoreMatcher:
        return cls(())

    def __bool__(self) -> bool:
        return bool(self.rules)

    def _decide(self, path: str) -> IgnoreRule | None:
        """The rule that ignores ``path`` (a directory when it ends in ``/``), if any."""
        result = self._spec.check_file(path)
        if result.include and result.index is not None:
            return self.rules[result.index]
        return None

    def _directory(self, rel_dir: str) -> IgnoreRule | None:
        if rel_dir not in self._dirs:
            parent, _, _ = rel_dir.rpartition("/")
            inherited = self._directory(parent) if parent else None
            self._dirs[rel_dir] = inherited or self._decide(rel_dir + "/")
        return self._dirs[rel_dir]

    def rule_for(self, rel_path: str) -> IgnoreRule | None:
        """The rule that ignores ``rel_path`` or one of its directories; ``None`` if not ignored."""
        if not self.rules:
            return None
        parent, _, _ = rel_path.rpartition("/")
        if parent:
            by_dir = self._directory(parent)
            if by_dir is not None:
                return by_dir
        return self._decide(rel_path)

    def is_ignored(self, rel_path: str) -> bool:
        return self.rule_for(rel_path) is not None


@dataclass(frozen=True, slots=True)
class ParsedIgnoreFile:
    matcher: IgnoreMatcher
    denied: tuple[DeniedPattern, ...]


def parse_ignore_file(text: str) -> ParsedIgnoreFile:
    """Split the file into effective rules and denied patterns (which are not applied)."""
    rules: list[IgnoreRule] = []
    denied: list[DeniedPattern] = []
    text = text.removeprefix(_UTF8_BOM)
    for number, raw in enumerate(text.split("\n"), start=1):
        line = _TRAILING_SPACES.sub(r"\1", raw)
        if not line or line.startswith("#"):
            continue
        rule = IgnoreRule(number, line, negated=line.startswith("!"))
        if is_denied(rule):
            denied.append(DeniedPattern(number, line))
        else:
            rules.append(rule)
    return ParsedIgnoreFile(IgnoreMatcher(rules), tuple(denied))


def is_denied(rule: IgnoreRule) -> bool:
    if rule.negated:
        return False
    if rule.pattern in DENIED_PATTERNS:
        return True
    alone = IgnoreMatcher((rule,))
    return any(all(alone.is_ignored(p) for p in family) for family in _PROBE_FAMILIES)


def _compile(pattern: str) -> GitIgnoreSpecPattern | None:
    """Compile one line; a line git would never match (e.g. a lone ``\\``) yields ``None``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            compiled = GitIgnoreSpecPattern(pattern)
    except (ValueError, re.error):
        return None
    return compiled if compiled.include is not None else None
