"""A forge's CODEOWNERS file: who owns a path (design.md 5.1). Pure; bounded.

Each line is a pattern and its owners (``@user``, ``@org/team``, ``@group/subgroup``); the last
line whose pattern matches a path names its owners, a line with no owners leaves the path
unowned. Patterns are matched as git matches ``.gitignore`` lines, by the same linear matcher
(:mod:`bot.ignore`): no backtracking on a pull request's own text. GitLab's ``[Section]``
headings split the file: each section's last match counts, and a path's owners are those of
every section. Owners given as e-mail addresses are not logins and are left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot.ignore.matcher import IgnoreMatcher
from bot.ignore.patterns import IgnoreRule

# Where each forge reads it; the bot reads it from the base branch, as the forge does.
PATHS: Mapping[str, str] = {
    "github": ".github/CODEOWNERS",
    "gitlab": ".gitlab/CODEOWNERS",
    "gitea": ".gitea/CODEOWNERS",
    "forgejo": ".gitea/CODEOWNERS",
}
MAX_BYTES = 3 << 20  # GitHub ignores a larger CODEOWNERS file; so does the bot
MAX_RULES = 5_000  # each path is matched against every line, last first
MAX_OWNERS = 50  # per line
_SECTION = re.compile(r"^\^?\[[^\]]{1,200}\](\[\d{1,4}\])?(\s.*)?$")
_OWNER = re.compile(r"^@([A-Za-z0-9][A-Za-z0-9._-]{0,99}(/[A-Za-z0-9][A-Za-z0-9._-]{0,99}){0,20})$")


@dataclass(frozen=True, slots=True)
class OwnedPattern:
    """One line: its pattern (matching a path, or a directory above it) and its owners."""

    matcher: IgnoreMatcher
    owners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CodeOwners:
    """The parsed file: each section's lines, in file order."""

    sections: tuple[tuple[OwnedPattern, ...], ...]
    path: str
    problem: str | None = None  # why the file could not be used (then nobody owns anything)

    def owners_of(self, path: str) -> tuple[str, ...]:
        """The owners of repository path ``path``, as logins or ``org/team`` (no ``@``)."""
        found: list[str] = []
        for lines in self.sections:
            # The last line that matches decides, even when an earlier one matched a directory
            # above the path (unlike .gitignore, where an ignored directory ends the search).
            last = next((line for line in reversed(lines) if line.matcher.is_ignored(path)), None)
            if last is not None:
                found.extend(last.owners)
        return tuple(dict.fromkeys(found))


def unreadable(path: str, problem: str) -> CodeOwners:
    return CodeOwners((), path, problem)


def parse_codeowners(data: bytes, path: str) -> CodeOwners:
    if len(data) > MAX_BYTES:
        return unreadable(path, f"it is over {MAX_BYTES >> 20} MB")
    text = data.decode("utf-8", "replace")
    sections: list[list[OwnedPattern]] = [[]]
    count = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _SECTION.match(line):
            sections.append([])
            continue
        count += 1
        if count > MAX_RULES:
            return unreadable(path, f"it has more than {MAX_RULES:,} rules")
        pattern, *words = line.split()
        if pattern.startswith("!"):
            continue  # negation is not CODEOWNERS syntax: the line is ignored, as GitHub does
        owners = tuple(m.group(1) for w in words[:MAX_OWNERS] if (m := _OWNER.match(w)) is not None)
        matcher = IgnoreMatcher([IgnoreRule(number, pattern, negated=False)])
        sections[-1].append(OwnedPattern(matcher, owners))
    return CodeOwners(tuple(tuple(lines) for lines in sections if lines), path)
