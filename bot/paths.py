"""Repository-relative POSIX paths: decoding raw names, showing them, testing containment.

Paths are kept as ``str`` decoded from their raw bytes with ``surrogateescape``, so a name
that is not UTF-8 survives the round trip exactly. Anything shown to a person or written to
JSON goes through :func:`display_path`, which never fails and never emits a lone surrogate.
"""

from __future__ import annotations

import unicodedata

_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}
# Control, format (e.g. U+200E LEFT-TO-RIGHT MARK), line/paragraph separators, surrogates.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def decode_path(raw: bytes) -> str:
    """Decode a raw path from git or the filesystem without ever failing."""
    return raw.decode("utf-8", "surrogateescape")


def encode_path(path: str) -> bytes:
    """The exact bytes a decoded path came from."""
    return path.encode("utf-8", "surrogateescape")


def path_sort_key(path: str) -> bytes:
    """Git's order: bytewise on the raw name."""
    return encode_path(path)


def display_path(path: str) -> str:
    """A readable, printable form of a path; identical to ``path`` for ordinary names."""
    if path.isprintable() and "\\" not in path:
        return path
    out: list[str] = []
    for ch in path:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(ch) in _HIDDEN_CATEGORIES:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def basename(path: str) -> str:
    return path.rpartition("/")[2]


def is_within(path: str, root: str) -> bool:
    """True when ``path`` is ``root`` or below it, at a ``/`` boundary. ``""`` is the repo root."""
    if root == "":
        return True
    return path == root or path.startswith(root + "/")


def relative_to(path: str, root: str) -> str:
    """``path`` relative to ``root``; the caller has checked :func:`is_within`."""
    if root == "":
        return path
    return path[len(root) + 1 :]


def join(root: str, rel: str) -> str:
    return rel if root == "" else f"{root}/{rel}"
