"""The root ``.gittargetignore`` matcher: git's decision for each path, and the lines in use.

The last matching line decides, so every match names the line that decided it. Directories
are walked from the top, once each (their answers are kept): once one is ignored nothing
below it is looked at, so a later ``!pattern`` cannot re-include a file inside it, as in git.

A path is only tried against the lines that could match it, so a file of thousands of lines
that match nothing costs little more than an empty one (its author is the pull request's):

- a basename line (no ``/``) is filed by the literal its names equal, start or end with
  (``bot.ignore.index``); so is a pathname glob starting with ``**/``, by its first segment;
- an anchored pathname glob travels with the directories as *states*, only while it still
  can match below them; one that needs a literal next segment is filed by it.

Whatever the index puts forward is still matched, and each answer is the highest matching
line, so the index cannot change an answer; ``tests/ignore/test_differential.py`` holds
the matcher against git. ``survey`` answers for many paths at once and finds the lines in
use, trying each line at most once on each path and directory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

from bot.ignore.candidates import Awake, below, descending, first_match, note_matches
from bot.ignore.index import SegmentIndex
from bot.ignore.patterns import CompiledRule, IgnoreRule, compile_rule
from bot.ignore.wildmatch import PathGlob, SegmentGlob
from bot.paths import encode_path

_NOWHERE: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class _Line:
    """A compiled rule: its basename glob, or the numbers of its pathname globs."""

    rule: IgnoreRule
    basename: SegmentGlob | None
    globs: tuple[int, ...]
    dir_only: bool


class _Node:
    """A directory walked: the rule ignoring it (or an ancestor) and its globs' states.

    ``decided_at`` is the line that decided it (candidates from the last line down to it were
    tried), ``-1`` when every candidate was tried without a match, ``None`` when none was,
    below an ignored directory, whose states are stepped only when a survey asks for them.
    """

    __slots__ = ("awake", "decided_at", "name", "parent", "rule")

    def __init__(
        self,
        rule: IgnoreRule | None,
        awake: Awake | None,
        name: bytes,
        decided_at: int | None,
        parent: _Node | None,
    ) -> None:
        self.rule = rule
        self.awake = awake
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

    def __init__(self, rules: Iterable[IgnoreRule | CompiledRule]) -> None:
        kept: list[IgnoreRule] = []
        self._lines: list[_Line] = []  # in file order: a line's place is its position
        self._globs: list[PathGlob] = []
        self._glob_line: list[int] = []
        self._everywhere: list[frozenset[int]] = []  # a ``**/`` glob's start, else nothing
        self._dir_names = SegmentIndex()  # basename lines
        self._file_names = SegmentIndex()  # those a file may match (not ``dir/``)
        self._wake = SegmentIndex()  # ``**/`` globs, by their first segment
        self._file_wake = SegmentIndex()  # those whose first segment may end a file's path
        root: dict[int, frozenset[int]] = {}
        for given in rules:
            compiled = given if isinstance(given, CompiledRule) else compile_rule(given)
            rule, pattern, dir_only = compiled.rule, compiled.pattern, compiled.dir_only
            if pattern is None:
                continue  # a line git can never match (``\\`` at the end, ``[`` unclosed ...)
            kept.append(rule)
            position = len(self._lines)
            if pattern.basename is not None:
                self._dir_names.add(pattern.basename, position)
                if not dir_only:
                    self._file_names.add(pattern.basename, position)
            numbers = tuple(range(len(self._globs), len(self._globs) + len(pattern.pathname)))
            for number, glob in zip(numbers, pattern.pathname, strict=True):
                self._globs.append(glob)
                self._glob_line.append(position)
                self._everywhere.append(glob.start if glob.floating else _NOWHERE)
                if not glob.floating:
                    root[number] = glob.start
                    continue
                self._wake.add(glob.first, number)
                if glob.one_segment and not dir_only:
                    self._file_wake.add(glob.first, number)
            self._lines.append(_Line(rule, pattern.basename, numbers, dir_only))
        self.rules: tuple[IgnoreRule, ...] = tuple(kept)
        # Unfiled lines, last first: every name is a candidate for them.
        self._dir_rest = tuple(reversed(self._dir_names.rest))
        self._file_rest = tuple(reversed(self._file_names.rest))
        wake_rest = {self._glob_line[number] for number in self._file_wake.rest}
        self._file_wake_rest = tuple(sorted(wake_rest, reverse=True))
        self._root = _Node(None, Awake(root, self._globs), b"", -1, None)
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
        order, test = self._file_candidates(parent, segments[-1])
        return self._decision(first_match(order, test))

    def is_ignored(self, rel_path: str) -> bool:
        return self.rule_for(rel_path) is not None

    def survey(self, rel_paths: Iterable[str]) -> Survey:
        """``rule_for`` of every path, and the lines in use, in one pass.

        Where the answer was found, only the candidates below the deciding line that are not
        yet known to be in use are tried further: each line is tried at most once on each
        path and directory, and lines that match nothing cost what matching alone costs.
        """
        rules: dict[str, IgnoreRule | None] = {}
        used: set[int] = set()  # line positions
        surveyed: set[bytes] = set()
        for rel in rel_paths:
            if not self.rules:
                rules[rel] = None
                continue
            raw = encode_path(rel)
            segments = raw.split(b"/")
            parent = self._directory(raw, segments)
            settled = len(used) >= len(self._lines)  # every line is in use: only decide
            if not settled:
                self._survey_directories(raw, segments, surveyed, used)
            if parent.rule is not None:
                rules[rel] = parent.rule
                if not settled:
                    note_matches(*self._file_candidates(parent, segments[-1]), used)
                continue
            order, test = self._file_candidates(parent, segments[-1])
            decided = first_match(order, test)
            rules[rel] = self._decision(decided)
            if decided >= 0:
                used.add(decided)
            note_matches(order, test, used)
        return Survey(rules, frozenset(self._lines[position].rule.line for position in used))

    def _survey_directories(
        self, raw: bytes, segments: list[bytes], surveyed: set[bytes], used: set[int]
    ) -> None:
        """Note the lines matching the path's directories not surveyed yet, top down."""
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
            if node.decided_at == -1:
                continue  # every candidate was tried on it, and none matched
            order, test = self._dir_candidates(self._awake(node), node.name)
            if node.decided_at is not None:
                used.add(node.decided_at)
                order = below(order, node.decided_at)
            note_matches(order, test, used)

    def _file_candidates(
        self, parent: _Node, name: bytes
    ) -> tuple[Iterator[int], Callable[[int], bool]]:
        """The lines that could match file ``name`` in ``parent``, last first, and their test."""
        awake = self._awake(parent)
        states, everywhere, globs, lines = awake.states, self._everywhere, self._globs, self._lines
        numbers = chain(awake.others, awake.waiting.get(name, ()), self._file_wake.lookup(name))
        filed = [self._glob_line[number] for number in numbers]
        filed = [position for position in filed if not lines[position].dir_only]
        filed += self._file_names.lookup(name)

        def test(position: int) -> bool:
            line = lines[position]
            if line.basename is not None:
                return line.basename.matches(name)
            for number in line.globs:
                state = states.get(number, everywhere[number])
                if state and globs[number].ends_after(state, name):
                    return True
            return False

        return descending(filed, (self._file_rest, self._file_wake_rest)), test

    def _dir_candidates(
        self, awake: Awake, name: bytes
    ) -> tuple[Iterator[int], Callable[[int], bool]]:
        """The lines that could match directory ``name`` (stepped into ``awake``), and their
        test: a pathname line is put forward only when it matches, from its states."""
        lines = self._lines
        filed = [self._glob_line[number] for number in awake.accepting]
        filed += self._dir_names.lookup(name)

        def test(position: int) -> bool:
            basename = lines[position].basename
            return basename is None or basename.matches(name)

        return descending(filed, (self._dir_rest,)), test

    def _decision(self, position: int) -> IgnoreRule | None:
        """What the matching line decides: ignored by it, or (``!pattern``) not ignored."""
        if position < 0:
            return None
        rule = self._lines[position].rule
        return None if rule.negated else rule

    def _directory(self, raw: bytes, segments: list[bytes]) -> _Node:
        """The parent directory of ``raw``, walked down from the nearest one already known.

        No recursion (a path may be thousands of directories deep), and each directory is
        matched once, one step from its parent's states.
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
            return _Node(parent.rule, None, name, None, parent)
        assert parent.awake is not None  # a directory not ignored is always stepped
        awake = self._step(parent.awake, name)
        decided = first_match(*self._dir_candidates(awake, name))
        return _Node(self._decision(decided), awake, name, decided, parent)

    def _step(self, parent: Awake, name: bytes) -> Awake:
        """The globs awake in a directory ``name`` below one where ``parent`` are."""
        globs, everywhere = self._globs, self._everywhere
        states: dict[int, frozenset[int]] = {}
        for number in chain(parent.others, parent.waiting.get(name, ())):
            after = globs[number].step(parent.states[number], name)
            if after != everywhere[number]:
                states[number] = after
        for number in chain(self._wake.lookup(name), self._wake.rest):
            if number not in parent.states:
                glob = globs[number]
                after = glob.step(glob.start, name)
                if after != glob.start:
                    states[number] = after
        return Awake(states, globs)

    def _awake(self, node: _Node) -> Awake:
        """The node's states, stepped down from the nearest directory that has them."""
        pending: list[_Node] = []
        while node.awake is None:
            pending.append(node)
            assert node.parent is not None  # the root always has its states
            node = node.parent
        awake = node.awake
        for lower in reversed(pending):
            awake = lower.awake = self._step(awake, lower.name)
        return awake
