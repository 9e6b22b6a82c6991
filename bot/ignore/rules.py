"""The root ``.gittargetignore``: git's ignore semantics over target-relative paths.

Every pattern line is read the way git reads it (``dir.c``) and tokenized the way git's
``wildmatch`` reads it (``bot.ignore.patterns``), into the globs of ``bot.ignore.wildmatch``,
which match in time linear in the path's length whatever the pattern (a pull request writes
this file). The last matching
line decides, so every match can name the line and pattern that decided it. Directory
exclusion is applied the way git applies it: once a directory is ignored nothing below it is
looked at, so a later ``!pattern`` cannot re-include a file inside it. Git is the reference;
the semantics are described in ``docs/ignore-semantics.md`` and pinned by
``tests/ignore/test_differential.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.ignore.patterns import compile_pattern
from bot.ignore.wildmatch import PathGlob, SegmentGlob
from bot.paths import encode_path

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


@dataclass(frozen=True, slots=True)
class _Line:
    """A compiled rule: its basename glob, or the indexes of its pathname globs."""

    rule: IgnoreRule
    basename: SegmentGlob | None
    globs: tuple[tuple[int, PathGlob], ...]
    dir_only: bool


class _Node:
    """A directory walked: the rule ignoring it (or an ancestor), else each glob's states.

    ``decided_at`` says how far the matcher went down ``_for_dirs`` on it: up to the line that
    decided it, or ``-1`` through every line without a match, or ``None`` (not at all) below
    an ignored directory, whose states are only stepped when a survey asks for them.
    """

    __slots__ = ("decided_at", "name", "parent", "rule", "states")

    def __init__(
        self,
        rule: IgnoreRule | None,
        states: tuple[frozenset[int], ...] | None,
        name: bytes = b"",
        decided_at: int | None = None,
        parent: _Node | None = None,
    ) -> None:
        self.rule = rule
        self.states = states
        self.name = name
        self.decided_at = decided_at
        self.parent = parent


@dataclass(frozen=True, slots=True)
class Survey:
    """One pass of the matcher over a target's paths.

    ``rules``: the rule deciding each path (``rule_for``). ``in_use``: the line numbers whose
    pattern (without its ``!``) matches a path or one of its directories, that is the lines
    that on their own would ignore something, whatever later lines decide.
    """

    rules: dict[str, IgnoreRule | None]
    in_use: frozenset[int]


class IgnoreMatcher:
    """Answers "is this target-relative path ignored?" with git's semantics."""

    def __init__(self, rules: Iterable[IgnoreRule]) -> None:
        kept: list[IgnoreRule] = []
        lines: list[_Line] = []
        globs: list[PathGlob] = []
        for rule in rules:
            pattern, dir_only = compile_pattern(rule.pattern[int(rule.negated) :])
            if pattern is None:
                continue  # a line git can never match (``\\`` at the end, ``[`` unclosed ...)
            kept.append(rule)
            indexed = tuple(enumerate(pattern.pathname, start=len(globs)))
            globs.extend(pattern.pathname)
            lines.append(_Line(rule, pattern.basename, indexed, dir_only))
        self.rules: tuple[IgnoreRule, ...] = tuple(kept)
        self._globs = tuple(globs)
        # Last line first: the last matching line decides, as in git. Directories see every
        # line; files do not see ``dir/`` lines (git's MUSTBEDIR).
        self._for_dirs = tuple(reversed(lines))
        self._for_files = tuple(line for line in self._for_dirs if not line.dir_only)
        self._root = _Node(None, tuple(glob.start for glob in globs), decided_at=-1)
        self._dirs: dict[bytes, _Node] = {}

    @classmethod
    def empty(cls) -> IgnoreMatcher:
        return cls(())

    def __bool__(self) -> bool:
        return bool(self.rules)

    def rule_for(self, rel_path: str) -> IgnoreRule | None:
        """The rule that ignores ``rel_path`` or one of its directories; ``None`` if not ignored."""
        if not self.rules:
            return None
        raw = encode_path(rel_path)
        segments = raw.split(b"/")
        parent = self._directory(raw, segments)
        if parent.rule is not None:
            return parent.rule
        index = self._file_decider(parent, segments[-1])
        return None if index < 0 else _decision(self._for_files[index])

    def is_ignored(self, rel_path: str) -> bool:
        return self.rule_for(rel_path) is not None

    def survey(self, rel_paths: Iterable[str]) -> Survey:
        """``rule_for`` of every path, and the lines in use, in one pass.

        Each line is tried at most once on each path and directory: where the matcher
        stopped at the deciding line, only the lines below it not yet known to be in use are
        tried further, so lines that match nothing cost what matching alone costs.
        """
        rules: dict[str, IgnoreRule | None] = {}
        used: set[int] = set()
        surveyed: set[bytes] = set()
        for rel in rel_paths:
            if not self.rules:
                rules[rel] = None
                continue
            raw = encode_path(rel)
            segments = raw.split(b"/")
            parent = self._directory(raw, segments)
            self._survey_directories(raw, segments, surveyed, used)
            name = segments[-1]
            if parent.rule is not None:
                rules[rel], tried = parent.rule, 0
            elif (index := self._file_decider(parent, name)) < 0:
                rules[rel], tried = None, len(self._for_files)
            else:
                rules[rel], tried = _decision(self._for_files[index]), index + 1
                used.add(self._for_files[index].rule.line)
            states = self._states(parent)
            for line in self._for_files[tried:]:
                if line.rule.line not in used and self._line_matches(line, states, name):
                    used.add(line.rule.line)
        return Survey(rules, frozenset(used))

    def _survey_directories(
        self, raw: bytes, segments: list[bytes], surveyed: set[bytes], used: set[int]
    ) -> None:
        """Add the lines matching the path's directories not surveyed yet, top down."""
        pending: list[_Node] = []
        end = len(raw) - len(segments[-1]) - 1
        for segment in reversed(segments[:-1]):
            key = raw[:end]
            if key in surveyed:
                break
            surveyed.add(key)
            pending.append(self._dirs[key])
            end -= len(segment) + 1
        for node in reversed(pending):
            states = self._states(node)
            if node.decided_at is None:
                tried = 0
            elif node.decided_at < 0:
                continue  # every line was tried on it, and none matched
            else:
                used.add(self._for_dirs[node.decided_at].rule.line)
                tried = node.decided_at + 1
            for line in self._for_dirs[tried:]:
                if line.rule.line not in used and self._dir_line_matches(line, states, node.name):
                    used.add(line.rule.line)

    def _file_decider(self, parent: _Node, name: bytes) -> int:
        """Where in ``_for_files`` the line deciding a file in a directory not ignored is, or
        ``-1`` when no line matches it."""
        states = self._states(parent)
        for index, line in enumerate(self._for_files):
            if self._line_matches(line, states, name):
                return index
        return -1

    @staticmethod
    def _line_matches(line: _Line, states: tuple[frozenset[int], ...], name: bytes) -> bool:
        if line.basename is not None:
            return line.basename.matches(name)
        return any(glob.ends_after(states[index], name) for index, glob in line.globs)

    @staticmethod
    def _dir_line_matches(line: _Line, states: tuple[frozenset[int], ...], name: bytes) -> bool:
        """Whether the line matches a directory named ``name`` whose states are ``states``."""
        if line.basename is not None:
            return line.basename.matches(name)
        return any(glob.accepts(states[index]) for index, glob in line.globs)

    def _directory(self, raw: bytes, segments: list[bytes]) -> _Node:
        """The parent directory of ``raw``, walked down from the nearest one already known.

        No recursion (a path may be thousands of directories deep), and each directory is
        matched once, one automaton step from its parent's states.
        """
        cut = raw.rfind(b"/")
        if cut < 0:
            return self._root
        known_parent = self._dirs.get(raw[:cut])
        if known_parent is not None:
            return known_parent
        ends = [-1]
        for segment in segments[:-1]:
            ends.append(ends[-1] + len(segment) + 1)
        known = len(ends) - 1  # directories above the file
        while known > 0 and raw[: ends[known]] not in self._dirs:
            known -= 1
        node = self._dirs[raw[: ends[known]]] if known else self._root
        for depth in range(known + 1, len(ends)):
            node = self._child(node, segments[depth - 1])
            self._dirs[raw[: ends[depth]]] = node
        return node

    def _child(self, parent: _Node, name: bytes) -> _Node:
        if parent.rule is not None:
            # Ignored above: nothing below is looked at (its states wait for a survey).
            return _Node(parent.rule, None, name, parent=parent)
        assert parent.states is not None  # a directory not ignored is always stepped
        states = self._step(parent.states, name)
        for index, line in enumerate(self._for_dirs):
            if self._dir_line_matches(line, states, name):
                return _Node(_decision(line), states, name, index)
        return _Node(None, states, name, -1)

    def _step(self, states: tuple[frozenset[int], ...], name: bytes) -> tuple[frozenset[int], ...]:
        return tuple(
            glob.step(state, name) for glob, state in zip(self._globs, states, strict=True)
        )

    def _states(self, node: _Node) -> tuple[frozenset[int], ...]:
        """The node's states, stepped down from the nearest ancestor that has them."""
        pending: list[_Node] = []
        while node.states is None:
            pending.append(node)
            assert node.parent is not None  # the root always has its states
            node = node.parent
        states = node.states
        for below in reversed(pending):
            states = below.states = self._step(states, below.name)
        return states


def _decision(line: _Line) -> IgnoreRule | None:
    """What a matching line decides: ignored by it, or (``!pattern``) not ignored."""
    return None if line.rule.negated else line.rule


@dataclass(frozen=True, slots=True)
class ParsedIgnoreFile:
    matcher: IgnoreMatcher
    denied: tuple[DeniedPattern, ...]


def read_rules(text: str) -> tuple[IgnoreRule, ...]:
    """Every pattern line of the file, read as git reads it, denied patterns included."""
    rules: list[IgnoreRule] = []
    for number, raw in enumerate(text.removeprefix(_UTF8_BOM).split("\n"), start=1):
        if not raw or raw.startswith("#"):  # git tests these before dropping a CR
            continue
        line = _trim_trailing_spaces(raw.removesuffix("\r"))
        if line:
            rules.append(IgnoreRule(number, line, negated=line.startswith("!")))
    return tuple(rules)


def parse_ignore_file(text: str) -> ParsedIgnoreFile:
    """Split the file into effective rules and denied patterns (which are not applied)."""
    rules: list[IgnoreRule] = []
    denied: list[DeniedPattern] = []
    for rule in read_rules(text):
        if is_denied(rule):
            denied.append(DeniedPattern(rule.line, rule.pattern))
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


def _trim_trailing_spaces(line: str) -> str:
    """git's ``trim_trailing_spaces``: unescaped trailing spaces go, tabs and ``\\ `` stay."""
    cut: int | None = None
    i = 0
    while i < len(line):
        if line[i] == " ":
            cut = i if cut is None else cut
        else:
            cut = None
            if line[i] == "\\":
                i += 1
                if i == len(line):
                    return line  # git leaves a line ending in a lone ``\`` alone
        i += 1
    return line if cut is None else line[:cut]
