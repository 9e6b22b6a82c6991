"""Go's regexp syntax (RE2), matched in linear time: enough to apply a SOPS envelope's rules.

SOPS decides which values it encrypts with Go regular expressions written in the file
(``encrypted_regex: ^(data|stringData)$``), so the gate must read them as Go does: Python's
``re`` has another syntax (``(?i)`` in mid-pattern is an error there) and backtracks, which a
hostile pattern turns into hours. This compiles a pattern to a small automaton and simulates it
(Thompson's construction, one set of states per character): time is the text's length times the
program's size, both bounded.

The syntax is RE2's common core: literals and escapes, ``.``, classes (``[a-z]``, ``[^...]``,
``\\d \\w \\s`` and their negations, ``[:alpha:]``), groups (plain, ``(?:``, named), flags ``i m
s U`` (set or cleared, for the rest of the group or inside ``(?flags:...)``), alternation,
``* + ?`` and ``{n,m}`` (greedy or lazy: the same for a yes or no answer), and the assertions
``^ $ \\A \\z \\b \\B``. Anything else (Unicode classes, ``\\Q...\\E``, ...) raises
:class:`Unsupported`, and the caller says it cannot tell: never a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_PATTERN = 1000
MAX_PROGRAM = 2000
MAX_REPEAT = 1000  # RE2's own limit
MAX_NESTING = 100

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_PERL = {
    "d": ((48, 57),),
    "s": ((9, 10), (12, 13), (32, 32)),
    "w": ((48, 57), (65, 90), (95, 95), (97, 122)),
}
_POSIX = {
    "alnum": ((48, 57), (65, 90), (97, 122)),
    "alpha": ((65, 90), (97, 122)),
    "digit": ((48, 57),),
    "lower": ((97, 122),),
    "upper": ((65, 90),),
    "space": ((9, 13), (32, 32)),
    "word": _PERL["w"],
    "xdigit": ((48, 57), (65, 70), (97, 102)),
}
_ESCAPES = {"t": 9, "n": 10, "v": 11, "f": 12, "r": 13, "a": 7}
_SPECIAL = "\\.+*?()|[]{}^$"


class Unsupported(ValueError):
    """A pattern outside the syntax read here, or over its limits."""


@dataclass(frozen=True, slots=True)
class _Chars:
    ranges: tuple[tuple[int, int], ...]
    negated: bool = False
    fold: bool = False

    def matches(self, ch: str) -> bool:
        candidates = {ch, ch.lower(), ch.upper()} if self.fold else (ch,)
        hit = any(lo <= ord(c) <= hi for c in candidates for lo, hi in self.ranges)
        return hit != self.negated


@dataclass(slots=True)
class _Flags:
    fold: bool = False
    multiline: bool = False
    dotall: bool = False


@dataclass(slots=True)
class _Parser:
    text: str
    pos: int = 0

    def peek(self, ahead: int = 0) -> str:
        at = self.pos + ahead
        return self.text[at] if at < len(self.text) else ""


# An instruction: (kind, a, b, chars). "char" reads a character of ``chars``; "any" reads any
# (a newline only when a is 1); "split" goes on at both offsets a and b, "jmp" at offset a;
# "begin", "end", "bol", "eol", "word", "nonword" go on when the assertion holds; "match" ends.
_Op = tuple[str, int, int, _Chars | None]
_Node = list[_Op]
Program = tuple[_Op, ...]
_ASSERTIONS = frozenset({"begin", "end", "bol", "eol", "word", "nonword"})


def compile_pattern(pattern: str) -> Program:
    if len(pattern) > MAX_PATTERN:
        raise Unsupported(f"longer than {MAX_PATTERN} characters")
    parser = _Parser(pattern)
    node = _alternation(parser, _Flags(), 0)
    if parser.pos != len(pattern):
        raise Unsupported(f"unexpected {parser.peek()!r} at {parser.pos}")
    return (*node, ("match", 0, 0, None))


@dataclass(slots=True)
class Budget:
    """States a caller lets its searches visit, all together: past it, :class:`Unsupported`."""

    left: int


def search(program: Program, text: str, budget: Budget | None = None) -> bool:
    """Does the pattern match anywhere in ``text`` (Go's ``regexp.MatchString``)?"""
    current: list[int] = []
    for at in range(len(text) + 1):
        if budget is not None:
            budget.left -= len(current) + 1
            if budget.left < 0:
                raise Unsupported("the search budget is spent")
        seen: set[int] = set()
        following: list[int] = []
        for pc in [*current, 0]:
            if _follow(program, pc, text, at, seen, following):
                return True
        if at == len(text):
            return False
        ch = text[at]
        current = []
        for pc in following:
            kind, dotall, _, chars = program[pc]
            if (chars is not None and chars.matches(ch)) or (
                kind == "any" and (dotall or ch != "\n")
            ):
                current.append(pc + 1)
    return False


def _follow(
    program: Program,
    start: int,
    text: str,
    at: int,
    seen: set[int],
    out: list[int],
) -> bool:
    """Add the states reachable from ``start`` without reading; True when one is the match."""
    stack = [start]
    while stack:
        pc = stack.pop()
        if pc in seen:
            continue
        seen.add(pc)
        kind, a, b, _ = program[pc]
        if kind == "match":
            return True
        if kind == "jmp":
            stack.append(pc + a)
        elif kind == "split":
            stack.append(pc + b)
            stack.append(pc + a)
        elif kind in _ASSERTIONS:
            if _holds(kind, text, at):
                stack.append(pc + 1)
        else:
            out.append(pc)
    return False


def _holds(kind: str, text: str, at: int) -> bool:
    before = text[at - 1] if at > 0 else ""
    after = text[at] if at < len(text) else ""
    if kind == "begin":
        return at == 0
    if kind == "end":
        return at == len(text)
    if kind == "bol":
        return at == 0 or before == "\n"
    if kind == "eol":
        return at == len(text) or after == "\n"
    boundary = (before in _WORD and before != "") != (after in _WORD and after != "")
    return boundary if kind == "word" else not boundary


def _alternation(p: _Parser, flags: _Flags, depth: int) -> _Node:
    if depth > MAX_NESTING:
        raise Unsupported(f"groups nested deeper than {MAX_NESTING}")
    branches = [_sequence(p, flags, depth)]
    while p.peek() == "|":
        p.pos += 1
        branches.append(_sequence(p, flags, depth))
    node = branches[-1]
    for branch in reversed(branches[:-1]):
        # split to this branch or the rest; the branch jumps over the rest when done
        node = [
            ("split", 1, len(branch) + 2, None),
            *branch,
            ("jmp", len(node) + 1, 0, None),
            *node,
        ]
    return _bounded(node)


def _sequence(p: _Parser, flags: _Flags, depth: int) -> _Node:
    node: _Node = []
    while p.peek() not in ("", "|", ")"):
        atom = _atom(p, flags, depth)
        if atom is None:
            continue  # a flag group: it changed ``flags`` and matches nothing itself
        node.extend(_bounded(_repeat(p, atom)))
        _bounded(node)
    return node


def _atom(p: _Parser, flags: _Flags, depth: int) -> _Node | None:
    ch = p.peek()
    p.pos += 1
    if ch == "(":
        return _group(p, flags, depth)
    if ch == "[":
        return [("char", 0, 0, _class(p, flags))]
    if ch == ".":
        return [("any", int(flags.dotall), 0, None)]
    if ch == "^":
        return [("bol" if flags.multiline else "begin", 0, 0, None)]
    if ch == "$":
        return [("eol" if flags.multiline else "end", 0, 0, None)]
    if ch in "*+?":
        raise Unsupported(f"{ch!r} repeats nothing at {p.pos - 1}")
    if ch == "\\":
        escaped = p.peek()
        p.pos += 1
        if escaped in ("A", "z", "b", "B"):
            kind = {"A": "begin", "z": "end", "b": "word", "B": "nonword"}[escaped]
            return [(kind, 0, 0, None)]
        chars = _Chars(_escape(p, escaped), negated=escaped in "DSW", fold=flags.fold)
        return [("char", 0, 0, chars)]
    return [("char", 0, 0, _Chars(((ord(ch), ord(ch)),), fold=flags.fold))]


def _group(p: _Parser, flags: _Flags, depth: int) -> _Node | None:
    inner = _Flags(flags.fold, flags.multiline, flags.dotall)
    if p.peek() == "?":
        p.pos += 1
        if p.peek() == "P" or (p.peek() == "<" and p.peek(1) not in ("=", "!")):
            close = p.text.find(">", p.pos)
            if close < 0:
                raise Unsupported("unterminated group name")
            p.pos = close + 1
        else:
            setting = True
            while p.peek() not in (":", ")"):
                letter = p.peek()
                p.pos += 1
                if letter == "-":
                    setting = False
                elif letter in "imsU":
                    if letter != "U":
                        attr = {"i": "fold", "m": "multiline", "s": "dotall"}[letter]
                        setattr(inner, attr, setting)
                else:
                    raise Unsupported(f"group flag {letter!r}")
            if p.peek() == ")":  # (?i): the flags hold for the rest of the enclosing group
                p.pos += 1
                flags.fold, flags.multiline, flags.dotall = (
                    inner.fold,
                    inner.multiline,
                    inner.dotall,
                )
                return None
            p.pos += 1  # ':'
    node = _alternation(p, inner, depth + 1)
    if p.peek() != ")":
        raise Unsupported("a group is not closed")
    p.pos += 1
    return node


def _repeat(p: _Parser, atom: _Node) -> _Node:
    ch = p.peek()
    if ch not in ("*", "+", "?", "{"):
        return atom
    low, high = 0, -1
    if ch == "{":
        close = p.text.find("}", p.pos)
        body = p.text[p.pos + 1 : close] if close > 0 else ""
        low_text, comma, high_text = body.partition(",")
        if not low_text.isdigit() or (high_text and not high_text.isdigit()):
            return atom  # not a repeat: RE2 reads '{' as a literal then
        low = int(low_text)
        high = low if not comma else (int(high_text) if high_text else -1)
        if low > MAX_REPEAT or high > MAX_REPEAT or (high != -1 and high < low):
            raise Unsupported(f"bad repeat {{{body}}}")
        p.pos = close + 1
    else:
        p.pos += 1
        low, high = {"*": (0, -1), "+": (1, -1), "?": (0, 1)}[ch]
    if p.peek() == "?":
        p.pos += 1  # lazy: the same answer to "does it match"
    if p.peek() in ("*", "+", "{"):
        raise Unsupported("nested repetition")
    node: _Node = []
    for _ in range(low):
        node.extend(_bounded(atom))
    if high == -1:
        # x*: split into x and back, or on
        node.extend([("split", 1, len(atom) + 2, None), *atom, ("jmp", -len(atom) - 1, 0, None)])
    else:
        optional: _Node = []
        for _ in range(high - low):
            optional = [("split", 1, len(atom) + len(optional) + 1, None), *atom, *optional]
            _bounded(optional)
        node.extend(optional)
    return _bounded(node)


def _bounded(node: _Node) -> _Node:
    if len(node) > MAX_PROGRAM:
        raise Unsupported(f"compiles to over {MAX_PROGRAM} states")
    return node


def _escape(p: _Parser, escaped: str) -> tuple[tuple[int, int], ...]:
    if escaped.lower() in _PERL:
        return _PERL[escaped.lower()]
    if escaped in _ESCAPES:
        code = _ESCAPES[escaped]
        return ((code, code),)
    if escaped == "x":
        if p.peek() == "{":
            close = p.text.find("}", p.pos)
            digits = p.text[p.pos + 1 : close] if close > 0 else ""
            p.pos = close + 1
        else:
            digits = p.text[p.pos : p.pos + 2]
            p.pos += 2
        try:
            code = int(digits, 16)
        except ValueError:
            raise Unsupported(f"bad \\x escape {digits!r}") from None
        return ((code, code),)
    if escaped and not escaped.isalnum():
        return ((ord(escaped), ord(escaped)),)
    raise Unsupported(f"escape \\{escaped}")


def _class(p: _Parser, flags: _Flags) -> _Chars:
    negated = p.peek() == "^"
    if negated:
        p.pos += 1
    ranges: list[tuple[int, int]] = []
    first = True
    while True:
        ch = p.peek()
        if ch == "":
            raise Unsupported("a class is not closed")
        if ch == "]" and not first:
            p.pos += 1
            break
        first = False
        if ch == "[" and p.peek(1) == ":":
            close = p.text.find(":]", p.pos + 2)
            name = p.text[p.pos + 2 : close] if close > 0 else ""
            if name not in _POSIX:
                raise Unsupported(f"class [:{name}:]")
            ranges.extend(_POSIX[name])
            p.pos = close + 2
            continue
        low = _class_char(p)
        if isinstance(low, tuple):
            ranges.extend(low)
            continue
        if p.peek() == "-" and p.peek(1) not in ("]", ""):
            p.pos += 1
            high = _class_char(p)
            if isinstance(high, tuple) or high < low:
                raise Unsupported("bad range in a class")
            ranges.append((low, high))
        else:
            ranges.append((low, low))
    return _Chars(tuple(ranges), negated=negated, fold=flags.fold)


def _class_char(p: _Parser) -> int | tuple[tuple[int, int], ...]:
    ch = p.peek()
    p.pos += 1
    if ch != "\\":
        return ord(ch)
    escaped = p.peek()
    p.pos += 1
    if escaped in "DSW":
        raise Unsupported(f"\\{escaped} inside a class")
    found = _escape(p, escaped)
    return found if len(found) > 1 or found[0][0] != found[0][1] else found[0][0]
