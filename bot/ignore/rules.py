"""The root ``.gittargetignore``: its lines read as git reads them, and the denied patterns.

Every pattern line is read the way git reads it (``dir.c``), tokenized the way git's
``wildmatch`` reads it (``bot.ignore.patterns``) into the globs of ``bot.ignore.wildmatch``,
which match in time linear in the path's length whatever the pattern (a pull request writes
this file), and applied by ``bot.ignore.matcher`` with git's semantics (the last matching line
decides; nothing below an ignored directory is re-included). Git is the reference; the
semantics are described in ``docs/ignore-semantics.md`` and pinned by
``tests/ignore/test_differential.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.ignore.matcher import IgnoreMatcher, Survey
from bot.ignore.patterns import CompiledRule, IgnoreRule, compile_rule
from bot.paths import encode_path

__all__ = [
    "DENIED_PATTERNS",
    "IGNORE_FILE",
    "DeniedPattern",
    "IgnoreMatcher",
    "IgnoreRule",
    "ParsedIgnoreFile",
    "Survey",
    "is_denied",
    "parse_ignore_file",
    "read_rules",
]

IGNORE_FILE = ".gittargetignore"

# design.md 3.1: patterns that would hide every managed file. Refused at parse time.
DENIED_PATTERNS = frozenset({"*", "**", "/", "*.yaml", "*.yml", "**/*", "**/*.yaml", "**/*.yml"})

# Generic names no real pattern singles out. A pattern that hides every probe of one family
# hides the whole space of managed files, however it is spelled (``/*``, ``*/``, ``*.y?ml`` ...).
_PROBE_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("a.yaml", "zq-7.yaml", "M_x9.yaml"),
    ("a.yml", "zq-7.yml", "M_x9.yml"),
    ("d/a.yaml", "zq-7/p/M_x9.yaml", "M_x9/v1/k.yaml"),
    ("d/a.yml", "zq-7/p/M_x9.yml", "M_x9/v1/k.yml"),
)

_PROBES = tuple(tuple(encode_path(path).split(b"/") for path in f) for f in _PROBE_FAMILIES)

_UTF8_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class DeniedPattern:
    line: int
    pattern: str


@dataclass(frozen=True, slots=True)
class ParsedIgnoreFile:
    matcher: IgnoreMatcher
    denied: tuple[DeniedPattern, ...]
    # Every pattern line applied (not denied), those git never matches included.
    applied: tuple[IgnoreRule, ...]


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
    rules: list[CompiledRule] = []
    denied: list[DeniedPattern] = []
    for rule in read_rules(text):
        compiled = compile_rule(rule)  # once, for the denied check and the matcher
        if is_denied(compiled):
            denied.append(DeniedPattern(rule.line, rule.pattern))
        else:
            rules.append(compiled)
    applied = tuple(compiled.rule for compiled in rules)
    return ParsedIgnoreFile(IgnoreMatcher(rules), tuple(denied), applied)


def is_denied(rule: IgnoreRule | CompiledRule) -> bool:
    compiled = rule if isinstance(rule, CompiledRule) else compile_rule(rule)
    if compiled.rule.negated:
        return False
    if compiled.rule.pattern in DENIED_PATTERNS:
        return True
    return any(all(map(compiled.alone_ignores, family)) for family in _PROBES)


def _trim_trailing_spaces(line: str) -> str:
    """git's ``trim_trailing_spaces``: unescaped trailing spaces go, tabs and ``\\ `` stay."""
    if not line.endswith(" "):
        return line  # the usual line, read in one call
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
