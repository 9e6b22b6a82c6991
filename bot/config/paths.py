"""Validation of repository-relative paths named in configuration and on the command line."""

from __future__ import annotations

import string

PLACEHOLDERS = frozenset({"group", "version", "resource", "namespace", "name"})


def normalize_repo_path(value: str) -> str:
    """A repo-relative POSIX directory path, normalised; ``""`` is the repository root.

    Raises ``ValueError`` with the reason when the path is absolute, escapes the repository,
    enters ``.git`` or is malformed.
    """
    if value == "":
        raise ValueError("must not be empty (use '.' for the repository root)")
    if value.startswith("/"):
        raise ValueError("must be relative to the repository root (no leading '/')")
    if "\\" in value:
        raise ValueError("must use '/' as the separator, not '\\'")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError("must not contain control characters")
    trimmed = value.rstrip("/")
    if trimmed in ("", "."):
        return ""
    for segment in trimmed.split("/"):
        if segment == "":
            raise ValueError("has an empty segment ('//')")
        if segment == "..":
            raise ValueError("escapes the repository ('..' segment)")
        if segment == ".":
            raise ValueError("has a '.' segment; write the path without it")
        if segment.casefold() == ".git":
            raise ValueError("enters '.git', which is the repository's own storage")
    return trimmed


def check_placement(template: str) -> str:
    """A placement template uses only the known placeholders, names ``{name}``, ends ``.yaml``."""
    try:
        fields = [
            (literal, name, spec, conv)
            for literal, name, spec, conv in string.Formatter().parse(template)
        ]
    except ValueError as exc:
        raise ValueError(f"is not a valid template ({exc})") from None
    used: set[str] = set()
    for _, name, spec, conv in fields:
        if name is None:
            continue
        if name not in PLACEHOLDERS or spec or conv:
            allowed = ", ".join("{" + p + "}" for p in sorted(PLACEHOLDERS))
            raise ValueError(f"uses an unknown placeholder {{{name}}} (allowed: {allowed})")
        used.add(name)
    if "name" not in used:
        raise ValueError("must contain {name}, or two objects would share one file")
    if not template.endswith(".yaml"):
        raise ValueError("must end in '.yaml'")
    if template.startswith("/") or ".." in template.split("/"):
        raise ValueError("must stay inside the target (no leading '/', no '..')")
    return template
