"""Lines looked up by a path segment: only those that could match it are tried.

A segment glob is filed by a literal every name it matches has: the whole name
(``build``), or else the longest of its literal start (``tmp*``), end (``*.bak``) or run
anywhere (``*cache*``, ``[Tt]humbs.db``). A segment is looked up by itself, by its
prefixes and suffixes of the lengths filed, and by its substrings of the lengths filed
anywhere. A glob with no literal byte (``*``, ``?*``, ``[ab]*``) is in ``rest``, tried on
every segment. A lookup only narrows what is tried: every candidate is still matched, so
the index cannot change an answer. Its cost is bounded by what trying the lines filed
would cost: at most one lookup per prefix or suffix length filed, and when the substrings
would outnumber the globs filed anywhere, those globs are all put forward instead.
"""

from __future__ import annotations

from bot.ignore.wildmatch import SegmentGlob


class SegmentIndex:
    """Items (line or glob numbers) filed by a literal every name their glob matches has."""

    __slots__ = ("_exact", "_filed", "_infixes", "_prefixes", "_suffixes", "_within", "rest")

    def __init__(self) -> None:
        self._exact: dict[bytes, list[int]] = {}
        self._prefixes: dict[int, dict[bytes, list[int]]] = {}
        self._suffixes: dict[int, dict[bytes, list[int]]] = {}
        self._infixes: dict[int, dict[bytes, list[int]]] = {}
        self._within: list[int] = []  # every item filed by an infix
        self.rest: list[int] = []  # in the order filed
        self._filed = False  # anything outside ``rest``: a lookup is one test otherwise

    def add(self, glob: SegmentGlob, item: int) -> None:
        if glob.exact is not None:
            self._exact.setdefault(glob.exact, []).append(item)
            self._filed = True
            return
        # The longest literal singles out the fewest names; an end is cheaper to look up.
        key, by_length = glob.prefix, self._prefixes
        if len(glob.suffix) > len(key):
            key, by_length = glob.suffix, self._suffixes
        if len(glob.infix) > len(key):
            key, by_length = glob.infix, self._infixes
        if not key:
            self.rest.append(item)
            return
        by_length.setdefault(len(key), {}).setdefault(key, []).append(item)
        self._filed = True
        if by_length is self._infixes:
            self._within.append(item)

    def lookup(self, name: bytes) -> list[int]:
        """The items filed under ``name``, a prefix, suffix or substring of it, each once
        (``rest`` not included)."""
        if not self._filed:
            return []
        found = list(self._exact.get(name, ()))
        size = len(name)
        for length, filed in self._prefixes.items():
            if length <= size and (items := filed.get(name[:length])):
                found += items
        for length, filed in self._suffixes.items():
            if length <= size and (items := filed.get(name[size - length :])):
                found += items
        if self._infixes:
            substrings = sum(size - length + 1 for length in self._infixes if length <= size)
            if substrings > len(self._within):
                return found + self._within
            for length, filed in self._infixes.items():
                # Each substring once: a literal twice in the name is one match.
                for key in {name[start : start + length] for start in range(size - length + 1)}:
                    if items := filed.get(key):
                        found += items
        return found
