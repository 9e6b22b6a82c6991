"""The linear-time glob matcher under ``.gittargetignore``; git's semantics are tested there."""

from __future__ import annotations

import pytest

from bot.ignore.wildmatch import ANY_SEGMENTS, STAR, Item, SegmentGlob, path_glob


def glob(text: bytes) -> list[Item]:
    """``*`` is a star, ``?`` any byte, anything else that byte (enough for these tests)."""
    out: list[Item] = []
    for byte in text:
        if byte == ord("*"):
            out.append(STAR)
        elif byte == ord("?"):
            out.append(frozenset(range(1, 256)))
        else:
            out.append(frozenset({byte}))
    return out


@pytest.mark.parametrize(
    ("pattern", "name", "expected"),
    [
        (b"abc", b"abc", True),
        (b"abc", b"abcd", False),
        (b"", b"", True),
        (b"", b"a", False),
        (b"*", b"", True),
        (b"*", b"anything", True),
        (b"a*", b"a", True),
        (b"*a", b"ba", True),
        (b"*a", b"ab", False),
        (b"a*b*c", b"abc", True),
        (b"a*b*c", b"axxbyyc", True),
        (b"a*b*c", b"acb", False),
        (b"a*ab", b"aab", True),  # first and last chunks must not overlap
        (b"a*a", b"a", False),
        (b"*aa*aa*", b"aaa", False),
        (b"*aa*aa*", b"aaaa", True),
        (b"*?b?*", b"xbx", True),
        (b"a**b", b"axyb", True),
        (b"*ab*", b"xaby", True),
        (b"*ab*", b"ab", True),
        (b"*ab*", b"axb", False),
        (b"**ab", b"xab", True),
        (b"*a?b*", b"xxaxbyy", True),
        (b"*a?b*", b"xxabyy", False),
        (b"a*a*a*a*a*a*a*a*b", b"a" * 4096, False),
        (b"a*a*a*a*a*a*a*a*b", b"a" * 4096 + b"b", True),
    ],
)
def test_segment_glob(pattern: bytes, name: bytes, expected: bool) -> None:
    assert SegmentGlob(glob(pattern)).matches(name) is expected


def test_bytes_special_to_re_are_literal() -> None:
    assert SegmentGlob(glob(b".+(")).matches(b".+(")
    assert not SegmentGlob(glob(b".+(")).matches(b"x+(")
    dot_or_bracket = frozenset(b".]\\")
    assert SegmentGlob([STAR, dot_or_bracket, STAR]).matches(b"a]b")
    assert not SegmentGlob([STAR, dot_or_bracket, STAR]).matches(b"a^b")


@pytest.mark.parametrize(
    ("pattern", "exact", "prefix", "suffix", "infix"),
    [
        (b"build", b"build", b"build", b"build", b"build"),
        (b"*.bak", None, b"", b".bak", b".bak"),
        (b"tmp*", None, b"tmp", b"", b"tmp"),
        (b"ab?cde*x", None, b"ab", b"x", b"cde"),
        (b"*cache*", None, b"", b"", b"cache"),
        (b"?humbs.db", None, b"", b"humbs.db", b"humbs.db"),
        (b"*?*", None, b"", b"", b""),
    ],
)
def test_segment_glob_literals(
    pattern: bytes, exact: bytes | None, prefix: bytes, suffix: bytes, infix: bytes
) -> None:
    """What every name a glob matches is, starts with, ends with and holds: its index keys."""
    compiled = SegmentGlob(glob(pattern))
    assert (compiled.exact, compiled.prefix, compiled.suffix, compiled.infix) == (
        exact,
        prefix,
        suffix,
        infix,
    )


def segments(path: bytes) -> list[bytes]:
    return path.split(b"/")


@pytest.mark.parametrize(
    ("items", "path", "expected"),
    [
        (["**", "/", b"a"], b"a", True),
        (["**", "/", b"a"], b"x/y/a", True),
        ([b"a", "/", "**", "/", b"b"], b"a/b", True),
        ([b"a", "/", "**", "/", b"b"], b"a/x/y/b", True),
        ([b"a", "/", "**", "/", b"b"], b"a/x/y/c", False),
        ([b"a", "/", "**"], b"a", False),  # a trailing ``**`` needs one segment
        ([b"a", "/", "**"], b"a/x/y", True),
        ([b"a", "/", b"*"], b"a/x/y", False),
        (["**", "/", b"a", "/", "**", "/", b"b"], b"a/a/a/a/c", False),
        (["**", "/", b"a", "/", "**", "/", b"b"], b"x/a/y/b", True),
    ],
)
def test_path_glob(items: list[bytes | str], path: bytes, expected: bool) -> None:
    tokens: list[Item | str] = []
    for item in items:
        tokens.extend(glob(item) if isinstance(item, bytes) else [item])
    compiled = path_glob(tokens)
    assert compiled is not None
    assert compiled.matches(segments(path)) is expected


@pytest.mark.parametrize(
    "items", [["/", b"a"], [b"a", "/"], [b"a", "/", "/", b"b"], [b"a", "/", "**", "/"]]
)
def test_empty_segments_never_match(items: list[bytes | str]) -> None:
    tokens: list[Item | str] = []
    for item in items:
        tokens.extend(glob(item) if isinstance(item, bytes) else [item])
    assert path_glob(tokens) is None


def test_double_star_is_a_whole_segment() -> None:
    compiled = path_glob(["**", "/", *glob(b"a")])
    assert compiled is not None
    assert compiled.segments[0] is ANY_SEGMENTS
    with pytest.raises(ValueError, match="whole segment"):
        path_glob(["**", *glob(b"a")])
