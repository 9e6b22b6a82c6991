"""``SegmentIndex``: which globs a name puts forward (each is still matched by the caller)."""

from __future__ import annotations

from bot.ignore.index import SegmentIndex
from bot.ignore.wildmatch import SegmentGlob
from tests.ignore.test_wildmatch import glob

PATTERNS = [b"build", b"*.bak", b"tmp*", b"*cache*", b"?humbs.db", b"*?*", b"a*b"]


def _index(patterns: list[bytes]) -> SegmentIndex:
    index = SegmentIndex()
    for number, pattern in enumerate(patterns):
        index.add(SegmentGlob(glob(pattern)), number)
    return index


def test_a_name_puts_forward_the_globs_filed_under_its_literals() -> None:
    index = _index([b"build", b"*.bak", b"tmp*", b"?humbs.db", b"*?*", b"a*b"])
    assert index.rest == [4]  # ``*?*`` has no literal byte
    assert index.lookup(b"build") == [0]
    assert index.lookup(b"x.bak") == [1]
    assert sorted(index.lookup(b"tmp.bak")) == [1, 2]
    assert index.lookup(b"Thumbs.db") == [3]
    assert index.lookup(b"ab") == [5]  # ``a*b``: by its prefix, the longer on a tie
    assert index.lookup(b"nothing") == []


def test_a_name_puts_forward_the_globs_holding_one_of_its_substrings() -> None:
    index = _index([b"*nosuch-%d*" % n for n in range(50)])
    assert index.lookup(b"x-nosuch-7-nosuch-7") == [7]  # once, though twice in the name
    assert sorted(index.lookup(b"nosuch-12")) == [1, 12]
    assert index.lookup(b"resource-1.yaml") == []
    # Past as many substrings as globs filed by one, every such glob is put forward instead.
    assert sorted(index.lookup(b"x" * 100)) == list(range(50))


def test_every_glob_that_matches_a_name_is_put_forward() -> None:
    names = [b"build", b"b", b"x.bak", b".bak", b"tmp", b"tmpcache", b"cache", b"Thumbs.db"]
    names += [b"humbs.db", b"ab", b"axb", b"ba", b"", b"zz", b"x" * 40 + b"cache"]
    index = _index(PATTERNS)
    for name in names:
        forward = set(index.lookup(name)) | set(index.rest)
        matching = {n for n, p in enumerate(PATTERNS) if SegmentGlob(glob(p)).matches(name)}
        assert matching <= forward, name
