"""What finding unused ignore lines costs, counted in glob evaluations, never in seconds.

Issue 20, item 3: a 10,000-line ``.gittargetignore`` cost 635 s per check where matching
alone cost 47 s, because the unused-pattern pass matched every path against every line
again. The ignore file comes from the pull request, so its size is the author's choice.

Every glob evaluation goes through ``SegmentGlob.matches`` (a basename line, or one segment
of a pathname line), so a counting wrapper installed on every glob built during the test
counts the work of the matcher and of anything built beside it, whatever the code path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from bot.gate.policy import TargetPolicy
from bot.gate.structural import classify_target
from bot.git.snapshot import Snapshot
from bot.ignore.rules import parse_ignore_file
from bot.ignore.wildmatch import Item, SegmentGlob

TARGET = TargetPolicy("t", "t")
FILES = [f"d{n % 4}/s{n % 12}/f{n}.txt" for n in range(96)] + [f"top{n}.txt" for n in range(8)]
DIRECTORIES = {f.rpartition("/")[0] for f in FILES if "/" in f} | {f"d{n}" for n in range(4)}
NODES = len(FILES) + 1 + len(DIRECTORIES)  # the entries, the ignore file, their directories
UNUSED = 200


@dataclass
class Counter:
    evaluations: int = 0


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Counter:
    counter = Counter()
    original = SegmentGlob.__init__

    def counting_init(self: SegmentGlob, items: Sequence[Item]) -> None:
        original(self, items)
        inner = self.matches

        def matches(name: bytes) -> bool:
            counter.evaluations += 1
            return inner(name)

        self.matches = matches

    monkeypatch.setattr(SegmentGlob, "__init__", counting_init)
    return counter


def _snapshot(text: str) -> Snapshot:
    files = {f"t/{rel}": b"x" for rel in FILES}
    files["t/.gittargetignore"] = text.encode()
    return Snapshot.from_files(files)


def _parsing(counter: Counter, text: str) -> int:
    before = counter.evaluations
    parse_ignore_file(text)  # the denied-pattern probes evaluate each line a few times
    return counter.evaluations - before


def _matching_alone(counter: Counter, text: str) -> int:
    """What the gate counted before the unused-pattern warning: parse, then match each entry."""
    before = counter.evaluations
    matcher = parse_ignore_file(text).matcher
    for rel in [*FILES, ".gittargetignore"]:
        matcher.is_ignored(rel)
    return counter.evaluations - before


def _structural_pass(counter: Counter, text: str) -> tuple[int, list[int]]:
    before = counter.evaluations
    report = classify_target(_snapshot(text), TARGET).report
    unused = [issue.line for issue in report.issues if issue.kind.value == "unused-ignore-pattern"]
    return counter.evaluations - before, [line for line in unused if line is not None]


def _never_matching(count: int) -> list[str]:
    """Lines with no literal byte (``*[nN][oO]...[1Q][2Q]*``): the matcher's index cannot
    spare a name from trying them, so what is counted is what the passes share."""
    letters = "".join(f"[{c}{c.upper()}]" for c in "nosuch")
    return [f"*{letters}{''.join(f'[{d}Q]' for d in str(n))}*" for n in range(count)]


def test_the_unused_pattern_pass_matches_nothing_twice(counter: Counter) -> None:
    """The issue's shape: lines that never match, and lines that match without deciding
    (``*.txt`` undone by ``!*.txt``). Matching alone already tries every line on every path;
    the unused-pattern pass must reuse that, not match every path against every line again."""
    lines = ["*.txt", "!*.txt", *_never_matching(UNUSED)]
    text = "\n".join(lines) + "\n"
    alone = _matching_alone(counter, text)
    total, unused = _structural_pass(counter, text)
    assert unused == list(range(3, UNUSED + 3))
    extra = total - alone
    assert extra <= NODES, (
        f"the unused-pattern pass cost {extra} glob evaluations on top of matching alone "
        f"({alone}): {extra / alone:.2f} more passes, where at most one evaluation per "
        f"entry or directory ({NODES}) is left to do"
    )


def test_each_line_is_tried_at_most_once_on_each_path(counter: Counter) -> None:
    """Lines above the one that decides each entry: matching stops at ``!*.txt`` for every
    file, but an unused line has to be tried on every path to know it is unused; once, though."""
    lines = [*_never_matching(UNUSED), "*.txt", "!*.txt"]
    text = "\n".join(lines) + "\n"
    alone = _matching_alone(counter, text)
    parse = _parsing(counter, text)
    total, unused = _structural_pass(counter, text)
    assert unused == list(range(1, UNUSED + 1))
    pairs = len(lines) * NODES
    assert total - parse <= pairs, (
        f"{total - parse} glob evaluations for {len(lines)} lines on {NODES} paths "
        f"(matching alone: {alone - parse}): some line was tried twice on a path"
    )


def test_lines_that_cannot_match_a_name_are_not_tried_on_it(counter: Counter) -> None:
    """2,000 lines whose literal names, prefixes, suffixes or first directories are nowhere
    in the tree: matching and finding them unused takes no glob evaluation per line."""
    shapes = (
        "/no-such-{}/",
        "/no-such-{}/x/*.txt",
        "*.nosuch{}",
        "nosuch-{}.bak",
        "build-{}/",
        "**/tmp-{}/*.log",
        "nosuch-{}*",
        "*-nosuch{}.txt",
    )
    lines = [shape.format(n) for n in range(250) for shape in shapes]
    text = "\n".join(lines) + "\n"
    parse = _parsing(counter, text)
    total, unused = _structural_pass(counter, text)
    assert unused == list(range(1, len(lines) + 1))
    assert total - parse <= NODES, (
        f"{total - parse} glob evaluations for {len(lines)} lines on {NODES} paths: lines "
        "that cannot match a name are tried on it"
    )
