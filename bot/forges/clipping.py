"""Cutting text to a forge's size limit, saying so at the end when something was cut.

Pure. Every limit the adapters meet (a title, a status description, a comment body, an error
detail) goes through :func:`clip`; only the limit, the note and the unit differ by forge.
"""

from __future__ import annotations

ELLIPSIS = "…"


def clip(text: str, limit: int, *, note: str = ELLIPSIS, utf8: bool = False) -> str:
    """``text`` within ``limit`` characters (UTF-8 bytes with ``utf8``), ending in ``note``
    when something was cut. A cut never splits a character."""
    if utf8:
        data = text.encode("utf-8")
        if len(data) <= limit:
            return text
        keep = max(0, limit - len(note.encode("utf-8")))
        return data[:keep].decode("utf-8", "ignore") + note
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(note))] + note


def one_line(text: str, limit: int) -> str:
    """``text`` with its whitespace runs folded to single spaces, within ``limit`` characters."""
    return clip(" ".join(text.split()), limit)
