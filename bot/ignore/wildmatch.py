"""git's ``wildmatch`` language, compiled into a matcher whose time is linear in the name.

A pattern is split at ``/`` into *segment globs* and ``**`` (any number of whole segments).
A segment glob is fixed-length chunks of one-byte sets separated by ``*``: between two stars
only the *leftmost* place where the next chunk fits is ever tried, and once a star is passed
nothing before it is revisited. That is exact (every chunk has a fixed length, so its
leftmost fit leaves the most room for what follows) and never backtracks. Segments are
matched by an automaton whose states are positions in the pattern, simulated with state
sets. Either way a pattern costs O(len(path) × len(pattern)), where a backtracking regex
for ``a*a*a*...b`` costs O(len(path) ** stars).

Nothing here reads files, the clock or the environment; ``bot.ignore.rules`` reads the lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

# One position of a segment: the set of bytes it may hold, or ``STAR`` (any run of bytes).
STAR = None
Item = frozenset[int] | None


# A one-byte set and its byte: a pattern of thousands of lines is mostly literal bytes.
_ONE_BYTE = {frozenset((byte,)): byte for byte in range(256)}
ONE_BYTE_SETS = tuple(frozenset((byte,)) for byte in range(256))


class _Chunk:
    """A fixed-length run of one-byte sets: compared as bytes when every set is one byte."""

    __slots__ = ("literal", "regex", "runs", "size")

    def __init__(self, sets: Sequence[frozenset[int]]) -> None:
        self.size = len(sets)
        self.literal: bytes | None = None
        self.regex: re.Pattern[bytes] | None = None
        codes = [_ONE_BYTE.get(members) for members in sets]
        if None not in codes:
            self.literal = bytes(code for code in codes if code is not None)
            self.runs = [self.literal]
        else:
            self.regex = re.compile(b"".join(_byte_class(members) for members in sets), re.DOTALL)
            # The runs of one-byte sets, the first and last at the chunk's ends (empty when a
            # set of several bytes is there).
            runs = [bytearray()]
            for code in codes:
                if code is None:
                    runs.append(bytearray())
                else:
                    runs[-1].append(code)
            self.runs = [bytes(run) for run in runs]

    def at(self, name: bytes, pos: int) -> bool:
        """Whether the chunk holds at ``name[pos:pos + size]`` (the caller checks the length)."""
        if self.literal is not None:
            return name.startswith(self.literal, pos)
        assert self.regex is not None
        return self.regex.match(name, pos) is not None

    def find(self, name: bytes, pos: int, end: int) -> int:
        """The leftmost start ``>= pos`` where the chunk fits before ``end``, or -1."""
        if self.literal is not None:
            return name.find(self.literal, pos, end)
        assert self.regex is not None
        found = self.regex.search(name, pos, end)
        return -1 if found is None else found.start()


def _byte_class(members: frozenset[int]) -> bytes:
    if len(members) == 1:
        return re.escape(bytes(members))
    # Every byte as ``\xNN``: nothing inside the class can be special to ``re``.
    return b"[" + b"".join(b"\\x%02x" % byte for byte in sorted(members)) + b"]"


class SegmentGlob:
    """One path segment's glob (or a whole basename's): chunks of byte sets between stars."""

    __slots__ = (
        "_first",
        "_last",
        "_middle",
        "_minimum",
        "_starred",
        "exact",
        "infix",
        "matches",
        "prefix",
        "suffix",
    )

    def __init__(self, items: Sequence[Item]) -> None:
        chunks: list[list[frozenset[int]]] = [[]]
        for item in items:
            if item is STAR:
                chunks.append([])
            else:
                chunks[-1].append(item)
        compiled = [_Chunk(chunk) for chunk in chunks]
        self._first = compiled[0]
        self._last = compiled[-1]
        # ``a**b`` is ``a*b``: empty chunks between stars change nothing.
        self._middle = tuple(chunk for chunk in compiled[1:-1] if chunk.size)
        self._starred = len(chunks) > 1
        chunk_sizes = [chunk.size for chunk in self._middle]
        self._minimum = sum(chunk_sizes) + self._first.size + (self._last.size * self._starred)
        self.matches: Callable[[bytes], bool] = self._general
        # What every name it matches is, starts with, ends with or holds: keys to look it up
        # by (the literal runs of its chunks; ``b""`` when there is none).
        self.exact: bytes | None = None if self._starred else self._first.literal
        self.prefix: bytes = self._first.runs[0]
        self.suffix: bytes = self._last.runs[-1]
        self.infix: bytes = max((run for chunk in compiled for run in chunk.runs), key=len)
        # The usual shapes as one call: ``name``, ``*.ext``, ``prefix*``, ``*infix*``.
        first, last = self._first.literal, self._last.literal
        if len(chunks) == 1 and first is not None:
            self.matches = first.__eq__
        elif len(chunks) == 2 and first == b"" and last is not None:
            self.matches = partial(_ends_with, last)
        elif len(chunks) == 2 and last == b"" and first is not None:
            self.matches = partial(_starts_with, first)
        elif len(chunks) == 3 and first == last == b"" and len(self._middle) == 1:
            # ``*chunk*``: found anywhere (a chunk is fixed-length sets: a search that
            # cannot backtrack).
            middle = self._middle[0]
            if middle.literal is not None:
                self.matches = partial(_contains, middle.literal)
            elif middle.regex is not None:
                self.matches = partial(_found, middle.regex.search)

    def _general(self, name: bytes) -> bool:
        size = len(name)
        first, last = self._first, self._last
        if size < self._minimum or not first.at(name, 0):
            return False
        if not self._starred:
            return size == first.size
        end = size - last.size
        if not last.at(name, end):
            return False
        pos = first.size
        for chunk in self._middle:  # leftmost fit of each, never revisited
            found = chunk.find(name, pos, end)
            if found < 0:
                return False
            pos = found + chunk.size
        return True


def _contains(infix: bytes, name: bytes) -> bool:
    return infix in name


def _found(search: Callable[[bytes], re.Match[bytes] | None], name: bytes) -> bool:
    return search(name) is not None


def _ends_with(suffix: bytes, name: bytes) -> bool:
    return name.endswith(suffix)


def _starts_with(prefix: bytes, name: bytes) -> bool:
    return name.startswith(prefix)


class _AnySegments:
    """``**`` as a whole segment: any number of whole segments, none included."""

    def __repr__(self) -> str:
        return "**"


ANY_SEGMENTS = _AnySegments()
Segment = SegmentGlob | _AnySegments


class PathGlob:
    """A pathname pattern: segment globs and ``**`` over the ``/``-separated segments.

    Matched as an automaton over whole segments whose states are positions in the pattern:
    a set of states after each segment, so a walk down a path's directories reuses the set
    of the parent (each directory costs one step, however deep it is).
    """

    __slots__ = ("_closure", "_final", "first", "floating", "one_segment", "segments", "start")

    def __init__(self, segments: Sequence[Segment]) -> None:
        self.segments = tuple(segments)
        self._final = len(self.segments)
        # Each position with the ones a ``**`` there may skip to without taking a segment.
        closure: list[frozenset[int]] = []
        for p in range(self._final + 1):
            q = p
            while q < self._final and self.segments[q] is ANY_SEGMENTS:
                q += 1
            closure.append(frozenset(range(p, q + 1)))
        self._closure = tuple(closure)
        self.start: frozenset[int] = self._closure[0]
        # ``**/`` first: the start states hold at any depth, and only a segment matching
        # ``first`` (the first segment glob) takes the glob beyond them.
        self.floating = self.segments[0] is ANY_SEGMENTS
        at = next(p for p, seg in enumerate(self.segments) if isinstance(seg, SegmentGlob))
        first = self.segments[at]
        assert isinstance(first, SegmentGlob)  # a trailing ``**`` has a ``*`` before it
        self.first = first
        self.one_segment = self._final in self._closure[at + 1]  # ``first`` may end it

    def step(self, states: frozenset[int], segment: bytes) -> frozenset[int]:
        """The states after one more segment."""
        after: set[int] = set()
        for p in states:
            if p == self._final:
                continue
            current = self.segments[p]
            if current is ANY_SEGMENTS:
                after |= self._closure[p]  # ``**`` takes it, and may take more
            elif isinstance(current, SegmentGlob) and current.matches(segment):
                after |= self._closure[p + 1]
        return frozenset(after)

    def ends_after(self, states: frozenset[int], segment: bytes) -> bool:
        """Whether one more segment can end the pattern: ``accepts(step(...))``, quicker."""
        final = self._final
        for p in states:
            if p == final:
                continue
            current = self.segments[p]
            if current is ANY_SEGMENTS:
                if final in self._closure[p]:
                    return True
            elif (
                final in self._closure[p + 1]
                and isinstance(current, SegmentGlob)
                and current.matches(segment)
            ):
                return True
        return False

    def accepts(self, states: frozenset[int]) -> bool:
        return self._final in states

    def literal_next(self, states: frozenset[int]) -> bytes | None:
        """The one name the next segment must be for anything to follow these states, if
        there is such a name (a single state before a literal segment)."""
        if len(states) != 1:
            return None
        (p,) = states
        current = self.segments[p] if p < self._final else None
        return current.exact if isinstance(current, SegmentGlob) else None

    def matches(self, segments: Sequence[bytes]) -> bool:
        states = self.start
        for segment in segments:
            states = self.step(states, segment)
            if not states:
                return False
        return self.accepts(states)


@dataclass(frozen=True, slots=True)
class Pattern:
    """One line's pattern: a basename glob, or the pathname globs whose union it is."""

    basename: SegmentGlob | None
    pathname: tuple[PathGlob, ...]

    def matches(self, segments: Sequence[bytes]) -> bool:
        """``segments``: the path split at ``/`` (never empty, no empty segment)."""
        if self.basename is not None:
            return self.basename.matches(segments[-1])
        return any(glob.matches(segments) for glob in self.pathname)


def path_glob(items: Sequence[Item | str]) -> PathGlob | None:
    """A pathname glob from items where ``"/"`` separates and ``"**"`` is a ``**`` segment.

    ``None`` when it can never match a path: an empty segment (``a//b``, a leading or
    trailing ``/``). A trailing ``**`` needs at least one segment (``foo/**`` does not match
    ``foo``); elsewhere it may match none (``a/**/b`` matches ``a/b``).
    """
    segments: list[Segment] = []
    current: list[Item] = []
    pending_any = False
    for item in [*items, "/"]:
        if item == "/":
            if pending_any and not current:
                segments.append(ANY_SEGMENTS)
            elif not current:
                return None
            else:
                segments.append(SegmentGlob(current))
            current, pending_any = [], False
        elif item == "**":
            pending_any = True
        elif isinstance(item, str):
            raise ValueError(f"unknown glob item {item!r}")
        else:
            if pending_any:
                raise ValueError("'**' must be a whole segment")
            current.append(item)
    if segments and segments[-1] is ANY_SEGMENTS:
        segments.insert(len(segments) - 1, SegmentGlob([STAR]))
    return PathGlob(segments)
