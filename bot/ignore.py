"""The root ``.gittargetignore``: git's ignore semantics over target-relative paths.

Every pattern line is read the way git reads it (``dir.c``) and rewritten into a canonical
``pathspec`` pattern, one or two per line, that ``GitIgnoreSpecPattern`` compiles to exactly
git's ``wildmatch`` language; ``GitIgnoreSpec`` then finds the last matching line, so every
match can name the line and pattern that decided it. Directory exclusion is applied here, the
way git applies it: once a directory is ignored nothing below it is looked at, so a later
``!pattern`` cannot re-include a file inside it. Git is the reference; every place where
``pathspec`` alone would disagree with it is listed in ``docs/ignore-semantics.md`` and pinned
by ``tests/test_ignore_differential.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pathspec import GitIgnoreSpec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

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
_SLASH, _BACKSLASH, _STAR, _QUESTION, _OPEN, _CLOSE, _DASH, _COLON = b"/\\*?[]-:"

# Git matches raw bytes, pathspec matches ``str``. Both sides are fed the raw bytes as one
# character each in U+0100..U+01FF (``/`` kept): ``?`` and ``[...]`` then see one *byte* as
# git does (``é`` is two), and no byte can be special to pathspec or to ``re``: no glob or
# regex metacharacter, no whitespace for ``str.rstrip`` to eat, no ``\n`` that ``.`` skips,
# no leading ``#``, ``!`` or ``./``.
_SHIFT = {byte: 0x100 + byte for byte in range(256) if byte != _SLASH}


def _shifted(raw: bytes) -> str:
    return raw.decode("latin-1").translate(_SHIFT)


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
        kept: list[IgnoreRule] = []
        # Directories see every rule; files do not see ``dir/`` rules (git's MUSTBEDIR).
        for_dirs: list[tuple[GitIgnoreSpecPattern, IgnoreRule]] = []
        for_files: list[tuple[GitIgnoreSpecPattern, IgnoreRule]] = []
        for rule in rules:
            texts, dir_only = _translate(rule)
            if not texts:
                continue  # a line git can never match (``\\`` at the end, ``[`` unclosed ...)
            kept.append(rule)
            for text in texts:
                compiled = GitIgnoreSpecPattern(("!" if rule.negated else "") + text)
                for_dirs.append((compiled, rule))
                if not dir_only:
                    for_files.append((compiled, rule))
        self.rules: tuple[IgnoreRule, ...] = tuple(kept)
        self._for_dirs = _Spec(for_dirs)
        self._for_files = _Spec(for_files)
        self._dirs: dict[str, IgnoreRule | None] = {}

    @classmethod
    def empty(cls) -> IgnoreMatcher:
        return cls(())

    def __bool__(self) -> bool:
        return bool(self.rules)

    def _directory(self, rel_dir: str) -> IgnoreRule | None:
        """The rule that ignores directory ``rel_dir`` or one above it, if any."""
        if rel_dir not in self._dirs:
            parent, _, _ = rel_dir.rpartition("/")
            inherited = self._directory(parent) if parent else None
            self._dirs[rel_dir] = inherited or self._for_dirs.decide(rel_dir)
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
        return self._for_files.decide(rel_path)

    def is_ignored(self, rel_path: str) -> bool:
        return self.rule_for(rel_path) is not None


class _Spec:
    """A ``GitIgnoreSpec`` that answers for the path itself, never for its directories."""

    # pathspec lets a pattern that matches a *parent* directory of the path decide when no
    # pattern matches the path itself (a "priority 1" match, e.g. ``b`` for ``a/b/c``). Git
    # looks only at the path itself here; parents are walked by IgnoreMatcher. The trailing
    # ``!**/`` matches every parent directory with priority 1 and wins over the other
    # priority 1 matches (it is last), so only a match on the path itself can ignore it.
    _PARENTS = GitIgnoreSpecPattern("!**/")

    def __init__(self, patterns: list[tuple[GitIgnoreSpecPattern, IgnoreRule]]) -> None:
        self._rules = [rule for _, rule in patterns]
        # The "simple" backend is the one whose priority rules the sentinel above relies on.
        compiled = [pattern for pattern, _ in patterns] + [self._PARENTS]
        self._spec = GitIgnoreSpec(compiled, backend="simple")

    def decide(self, rel_path: str) -> IgnoreRule | None:
        result = self._spec.check_file(_shifted(encode_path(rel_path)))
        if result.include and result.index is not None:
            return self._rules[result.index]
        return None


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


def _translate(rule: IgnoreRule) -> tuple[list[str], bool]:
    """The canonical pathspec patterns whose union is the line, and whether it is ``dir/``."""
    raw = encode_path(rule.pattern[1:] if rule.negated else rule.pattern)
    dir_only = raw.endswith(b"/")
    if dir_only:
        raw = raw[:-1]  # only one: ``a//`` keeps ``a/``, which never matches
    if b"/" not in raw:
        # git matches a pattern without ``/`` against the basename at any depth, with ``**``
        # no different from ``*``; pathspec does the same for a single segment.
        pieces = _pieces(raw, pathname=False)
        text = "".join(pieces[0]) if pieces else ""
        return ([text] if text else []), dir_only
    raw = raw.removeprefix(b"/")  # only one: ``//a`` never matches
    texts = []
    for variant in _pieces(raw, pathname=True):
        text = "".join(variant)
        # Paths have no empty segment: a leading, trailing or doubled separator never matches.
        if text and not text.startswith("/") and not text.endswith("/") and "//" not in text:
            texts.append("/" + text)  # always anchored, like git's pathname match
    return texts, dir_only


def _pieces(raw: bytes, *, pathname: bool) -> list[list[str]]:
    """Tokenize like git's ``wildmatch``: one or two variants of pathspec glob pieces."""
    # match_pathname() compares the literal prefix (up to the first of ``*?[\``) itself and
    # hands only the rest to wildmatch, so ``**`` right after that prefix counts as being at
    # the start of the pattern: ``foo**/bar`` matches ``foobar``, ``foo/bar``, ``fooX/Y/bar``.
    prefix = next((i for i, c in enumerate(raw) if c in b"*?[\\"), len(raw))
    out: list[str] = []
    quirk: int | None = None  # index in ``out`` of the ``**`` right after the prefix
    zero_dir = False
    i, end = 0, len(raw)
    while i < end:
        c = raw[i]
        if c == _BACKSLASH:
            if i + 1 == end:
                return []  # a trailing lone ``\`` never matches
            out.append("/" if raw[i + 1] == _SLASH else _shifted(raw[i + 1 : i + 2]))
            i += 2
        elif c == _SLASH:
            out.append("/")
            i += 1
        elif c == _QUESTION:
            out.append("?")
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
                out.append("*")  # ``**`` inside a name is ``*``
            elif i > 0 and raw[i - 1] != _SLASH:
                quirk, zero_dir = len(out), after[:1] == b"/"
                out.append("**")
            elif after == b"\\/":
                # ``**\/`` is special but skips git's "zero directories" shortcut: it needs at
                # least one directory, which pathspec spells ``*/**/``.
                out += ["*", "/", "**"]
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
            out.append(_set(members))
        else:
            out.append(_shifted(raw[i : i + 1]))
            i += 1
    if quirk is None:
        return [out]
    head, rest = out[:quirk], out[quirk + 1 :]
    # The quirky ``**`` matches any text, ``/`` included, from the end of the prefix on.
    variants = [[*head, "*", "/", "**", *rest]]
    if not rest:
        variants.append([*head, "*"])
    elif zero_dir:
        variants.append([*head, *rest[1:]])  # wildmatch's shortcut: ``**/`` matching nothing
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


def _set(members: frozenset[int]) -> str:
    """A bracket expression of shifted characters (never negated, never special)."""
    codes = sorted(members)
    if len(codes) == 1:
        return _shifted(bytes(codes))
    runs: list[list[int]] = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    parts = []
    for first, last in runs:
        low, high = chr(0x100 + first), chr(0x100 + last)
        parts.append(low if first == last else f"{low}-{high}")
    return "[" + "".join(parts) + "]"
