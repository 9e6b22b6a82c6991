"""What the matcher tries on a path: the globs awake at a directory, and candidate lines.

A pathname glob is *awake* at a directory when it has states there beyond those it has at
any depth: the anchored ones until they cannot match below, the ``**/`` ones while a
segment took them past their start. Candidate lines are line positions, last first (the
last matching line decides), each once; ``first_match`` stops at the deciding line and
leaves the rest to ``note_matches``, which the survey uses to find the lines in use.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from itertools import dropwhile

from bot.ignore.wildmatch import PathGlob


class Awake:
    """The pathname globs with states at a directory beyond those they have everywhere."""

    __slots__ = ("accepting", "others", "states", "waiting")

    def __init__(self, states: dict[int, frozenset[int]], globs: Sequence[PathGlob]) -> None:
        self.states = states
        self.waiting: dict[bytes, list[int]] = {}  # one state before a literal: filed by it
        self.others: list[int] = []  # stepped on every child
        self.accepting: list[int] = []  # matching the directory itself
        for number, state in states.items():
            glob = globs[number]
            literal = glob.literal_next(state)
            if literal is not None:
                self.waiting.setdefault(literal, []).append(number)
                continue
            if glob.accepts(state):
                self.accepting.append(number)
                if len(state) == 1:
                    continue  # matched, and nothing more below
            self.others.append(number)


def descending(filed: list[int], rests: tuple[Sequence[int], ...]) -> Iterator[int]:
    """Line positions, last first and each once: ``filed`` and the (descending) ``rests``."""
    ordered = sorted(set(filed), reverse=True)
    live = [rest for rest in rests if rest]
    if not live:
        return iter(ordered)
    if not ordered and len(live) == 1:
        return iter(live[0])
    return _once(heapq.merge(ordered, *live, reverse=True))


def _once(positions: Iterator[int]) -> Iterator[int]:
    last = -1
    for position in positions:
        if position != last:
            yield position
            last = position


def below(order: Iterator[int], decided: int) -> Iterator[int]:
    """The positions of ``order`` below ``decided`` (those above it were tried already)."""
    return dropwhile(lambda position: position >= decided, order)


def first_match(order: Iterator[int], test: Callable[[int], bool]) -> int:
    """The first position of ``order`` whose line matches, or -1; ``order`` goes on after it."""
    for position in order:
        if test(position):
            return position
    return -1


def note_matches(order: Iterator[int], test: Callable[[int], bool], used: set[int]) -> None:
    """Add to ``used`` the positions of ``order`` that match, trying none already there."""
    for position in order:
        if position not in used and test(position):
            used.add(position)
