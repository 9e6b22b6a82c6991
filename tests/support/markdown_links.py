"""Links and anchors of the repository's markdown, as GitHub and the documentation site
(mkdocs, Python-Markdown) see them: the docs are read in both places, so a link must work in
both."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import markdown  # type: ignore[import-untyped]

# [text](target) and ![alt](target), outside code: the target up to a space or ')'.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+).*?\1")


def github_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as
    '-', and '-1', '-2' ... after a repeated one; headings inside code fences are none."""
    anchors: set[str] = set()
    seen: Counter[str] = Counter()
    for line in _outside_fences(text):
        heading = re.match(r"#{1,6} (.+?)\s*$", line)
        if heading is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading[1].lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return anchors


def site_anchors(text: str) -> set[str]:
    """The ids the documentation site gives the same headings (mkdocs.yml's extensions)."""
    md = markdown.Markdown(extensions=["tables", "fenced_code", "toc"])
    md.convert(text)

    def walk(tokens: list[dict[str, Any]]) -> Iterator[str]:
        for token in tokens:
            yield str(token["id"])
            yield from walk(token["children"])

    return set(walk(md.toc_tokens))


def _outside_fences(text: str) -> Iterator[str]:
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def links(text: str) -> list[str]:
    """Every link target in the text, outside code fences and code spans."""
    return [
        target
        for line in _outside_fences(text)
        for target in _LINK.findall(_CODE_SPAN.sub("", line))
    ]


def broken_links(document: Path, root: Path) -> list[str]:
    """The relative links of a markdown file that lead nowhere: to no file of the repository,
    outside it, or to an anchor the target's headings do not make, on GitHub or on the site."""
    root = root.resolve()
    document = document.resolve()
    broken: list[str] = []
    for target in links(document.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto: ...: not a file of the repository
        path, _, anchor = target.partition("#")
        file = (document.parent / path).resolve() if path else document
        if not file.is_relative_to(root) or not file.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and file.suffix == ".md":
            text = file.read_text(encoding="utf-8")
            if anchor not in github_anchors(text) & site_anchors(text):
                broken.append(f"{target}: no such heading in {file.relative_to(root)}")
    return broken
