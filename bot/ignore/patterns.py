"""A pattern line's text compiled into globs, tokenized the way git's ``wildmatch`` reads it.

``compile_rule`` turns a line (an ``IgnoreRule``) into a ``CompiledRule``: the basename glob
or the pathname globs of ``bot.ignore.wildmatch`` of its pattern, reproducing git's quirks:
``**`` only as a whole segment, the literal-prefix quirk of ``match_pathname()``, ``[...]``
sets of bytes with git's ASCII ctype classes, and the lines git can never match (``None``).
``docs/ignore-semantics.md`` lists the corner cases; ``tests/ignore/test_differential.py``
holds them against git.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.ignore.wildmatch import ONE_BYTE_SETS, STAR, Item, Pattern, SegmentGlob, path_glob
from bot.paths import encode_path


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One effective pattern line of the ignore file (1-based ``line``)."""

    line: int
    pattern: str
    negated: bool


_SLASH, _BACKSLASH, _STAR, _QUESTION, _OPEN, _CLOSE, _DASH, _COLON = b"/\\*?[]-:"


def _span(first: int, last: int) -> frozenset[int]:
    return frozenset(range(first, last + 1))


_DIGIT, _UPPER, _LOWER = _span(0x30, 0x39), _span(0x41, 0x5A), _span(0x61, 0x7A)
_GRAPH = _span(0x21, 0x7E)
# wildmatch's [:class:] sets: git's own ctype, ASCII only (measured against git 2.39).
_CLASSES: dict[bytes, frozenset[int]] = {
    b"alnum": _DIGIT | _UPPER | _LOWER,
    b"alpha": _UPPER | _LOWER,
    b"blank": frozenset(b"\t "),
    b"cntrl": _span(0x01, 0x1F) | {0x7F},
    b"digit": _DIGIT,
    b"graph": _GRAPH,
    b"lower": _LOWER,
    b"print": _GRAPH | {0x20},
    b"punct": _GRAPH - _DIGIT - _UPPER - _LOWER,
    b"space": frozenset(b"\t\n\r "),
    b"upper": _UPPER,
    b"xdigit": _DIGIT | frozenset(b"ABCDEFabcdef"),
}
_ANY_BYTE = _span(0x01, 0xFF) - {_SLASH}


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """A rule with its pattern compiled (``None``: git never matches the line)."""

    rule: IgnoreRule
    pattern: Pattern | None
    dir_only: bool

    def alone_ignores(self, segments: Sequence[bytes]) -> bool:
        """Whether the line on its own matches a path (split at ``/``) or one of its
        directories."""
        pattern = self.pattern
        if pattern is None:
            return False
        *directories, name = segments
        if pattern.basename is not None:
            glob = pattern.basename
            return any(map(glob.matches, directories)) or (not self.dir_only and glob.matches(name))
        for path in pattern.pathname:
            states = path.start
            for directory in directories:
                states = path.step(states, directory)
                if path.accepts(states):
                    return True
            if not self.dir_only and path.ends_after(states, name):
                return True  # ``dir/`` matches directories only
        return False


def compile_rule(rule: IgnoreRule) -> CompiledRule:
    return CompiledRule(rule, *compile_pattern(rule.pattern[int(rule.negated) :]))


def compile_pattern(pattern: str) -> tuple[Pattern | None, bool]:
    """The pattern (a line without its ``!``), ``None`` if it can never match, and whether it
    is ``dir/``."""
    raw = encode_path(pattern)
    dir_only = raw.endswith(b"/")
    if dir_only:
        raw = raw[:-1]  # only one: ``a//`` keeps ``a/``, which never matches
    if b"/" not in raw:
        # git matches a pattern without ``/`` against the basename at any depth, with ``**``
        # no different from ``*``.
        variants = _pieces(raw, pathname=False)
        if not variants:
            return None, dir_only
        items = [item for item in variants[0] if not isinstance(item, str)]
        return Pattern(SegmentGlob(items), ()), dir_only
    raw = raw.removeprefix(b"/")  # only one: ``//a`` never matches
    # Paths have no empty segment: a leading, trailing or doubled separator never matches.
    globs = tuple(glob for v in _pieces(raw, pathname=True) if (glob := path_glob(v)) is not None)
    return (Pattern(None, globs) if globs else None), dir_only


# A token of ``_pieces``: a position's byte set, ``STAR``, ``"/"`` or a whole-segment ``"**"``.
_Token = Item | str


def _pieces(raw: bytes, *, pathname: bool) -> list[list[_Token]]:
    """Tokenize like git's ``wildmatch``: the one or two token lists whose union is ``raw``."""
    # match_pathname() compares the literal prefix (up to the first of ``*?[\\``) itself and
    # hands only the rest to wildmatch, so ``**`` right after that prefix counts as being at
    # the start of the pattern: ``foo**/bar`` matches ``foobar``, ``foo/bar``, ``fooX/Y/bar``.
    prefix = next((i for i, c in enumerate(raw) if c in b"*?[\\"), len(raw))
    out: list[_Token] = []
    quirk: int | None = None  # index in ``out`` of the ``**`` right after the prefix
    zero_dir = False
    i, end = 0, len(raw)
    while i < end:
        c = raw[i]
        if c == _BACKSLASH:
            if i + 1 == end:
                return []  # a trailing lone ``\`` never matches
            out.append("/" if raw[i + 1] == _SLASH else ONE_BYTE_SETS[raw[i + 1]])
            i += 2
        elif c == _SLASH:
            out.append("/")
            i += 1
        elif c == _QUESTION:
            out.append(_ANY_BYTE)
            i += 1
        elif c == _STAR:
            j = i
            while j < end and raw[j] == _STAR:
                j += 1  # ``***`` is ``**``
            after = raw[j : j + 2]
            special = (
                pathname
                and j - i > 1
                and (i in (0, prefix) or raw[i - 1] == _SLASH)
                and (j == end or after[:1] == b"/" or after == b"\\/")
            )
            if not special:
                out.append(STAR)  # ``**`` inside a name is ``*``
            elif i > 0 and raw[i - 1] != _SLASH:
                quirk, zero_dir = len(out), after[:1] == b"/"
                out.append("**")
            elif after == b"\\/":
                # ``**\/`` is special but skips git's "zero directories" shortcut: it needs
                # at least one directory, ``*/**/``.
                out += [STAR, "/", "**"]
            else:
                out.append("**")
            i = j
        elif c == _OPEN:
            parsed = _bracket(raw, i)
            if parsed is None:
                return []  # unclosed ``[`` or unknown ``[:class:]``: git never matches
            members, i = parsed
            if not members:
                return []
            out.append(members)
        else:
            out.append(ONE_BYTE_SETS[c])
            i += 1
    if quirk is None:
        return [out]
    return _expand_quirk(out[:quirk], out[quirk + 1 :], zero_dir=zero_dir)


def _expand_quirk(head: list[_Token], rest: list[_Token], *, zero_dir: bool) -> list[list[_Token]]:
    """The globs for ``head`` + the quirky ``**`` + ``rest``: it matches any text, ``/``
    included, from the end of the prefix on (``rest`` is empty or starts with ``/``)."""
    variants: list[list[_Token]] = [[*head, STAR, "/", "**", *rest]]
    if not rest:
        variants.append([*head, STAR])
    elif zero_dir:
        # wildmatch's shortcut: ``**/`` matching nothing. What follows is matched as a pattern
        # of its own, so a ``**`` at its start is special again, glued to ``head`` as well.
        after = rest[1:]
        if after[:1] == ["**"]:
            variants += _expand_quirk(head, after[1:], zero_dir=after[1:2] == ["/"])
        else:
            variants.append([*head, *after])
    return variants


def _bracket(raw: bytes, start: int) -> tuple[frozenset[int], int] | None:
    """wildmatch's ``[...]`` at ``raw[start]``: the bytes it matches and the index past it."""
    p, end = start + 1, len(raw)
    negated = raw[p : p + 1] in (b"!", b"^")
    p += negated
    members: set[int] = set()
    prev = 0
    while True:  # wildmatch's do-while: the first member may be ``]``
        if p >= end:
            return None
        c = raw[p]
        if c == _BACKSLASH:
            p += 1
            if p >= end:
                return None
            c = raw[p]
            members.add(c)
        elif c == _DASH and prev and p + 1 < end and raw[p + 1] != _CLOSE:
            p += 1
            if raw[p] == _BACKSLASH:
                p += 1
                if p >= end:
                    return None
            members.update(range(prev, raw[p] + 1))
            c = 0  # a range ends the run: ``a-c-e`` is a-c, ``-``, ``e``
        elif c == _OPEN and raw[p + 1 : p + 2] == b":":
            close = raw.find(b"]", p + 2)
            if close < 0:
                return None
            if close - p - 3 < 0 or raw[close - 1] != _COLON:
                members.add(c)  # no ``:]``: a plain ``[``, and go on after it
            else:
                named = _CLASSES.get(raw[p + 2 : close - 1])
                if named is None:
                    return None
                members |= named
                p, c = close, 0
        else:
            members.add(c)
        prev = c
        p += 1
        if raw[p : p + 1] == b"]":
            break
    return frozenset((_ANY_BYTE - members) if negated else (members & _ANY_BYTE)), p + 1
