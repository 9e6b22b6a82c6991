"""The pre-check for merge keys: a file that may hold one is measured before its value is built
(flattening copies pairs), so the check must never miss one libyaml would read."""

from __future__ import annotations

import random

import pytest
import yaml

from bot.yaml.source import may_merge

MERGE = "tag:yaml.org,2002:merge"


@pytest.mark.parametrize(
    ("text", "merges"),
    [
        (b"a: &a {x: 1}\nb:\n  <<: *a\n", True),
        (b"b: {<<: *a}", True),
        (b"{a: 1,<<: *b}", True),
        (b"- <<: *a", True),
        (b"? <<\n: *a", True),
        (b"!!merge a: *x", True),
        (b"a: !<tag:yaml.org,2002:merge> x", True),
        (b"x: !!m%65rge y", True),
        (b"%TAG !e! tag:yaml.org,2002:mer\n---\n!e!ge x: y", True),
        (b"x: cat << EOF", True),  # not a key, but a superset is all that matters
        (b"x: |\n  cat <<EOF\n  hi\n  EOF\n", False),  # a heredoc in a script
        (b"x: |\n  cat <<-'EOF'\n", False),
        (b"a: !include_dir_merge_named x", False),  # a local tag of Home Assistant's
        (b'q: up{pod!=""} merge', False),  # PromQL
        (b'a: "<<"', False),  # quoted: a string
        (b"a: !merge x", False),  # a local tag, not the merge tag
    ],
)
def test_may_merge(text: bytes, merges: bool) -> None:
    assert may_merge(text) is merges


def _merge_tagged(node: yaml.Node) -> bool:
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.tag == MERGE:
            return True
        if isinstance(current, yaml.MappingNode):
            stack.extend(n for pair in current.value for n in pair)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
    return False


def test_no_merge_key_libyaml_reads_is_missed() -> None:
    """Seeded: texts from fragments near a merge key (heredocs, tags, escapes, directives,
    flow and block forms); each that libyaml composes with a merge-tagged node is flagged."""
    fragments = [
        "<<", "<<EOF", "<< ", "!!merge", "!!m%65rge", "!merge", "!<tag:yaml.org,2002:merge>",
        "!include_merge", "%TAG !e! tag:yaml.org,2002:\n---\n", "!e!merge", "&a ", "*a", "{",
        "}", "[", "]", ", ", ": ", ":", "\n", "\n  ", "- ", "? ", "x", "'<<'", "#", "|\n  ",
    ]  # fmt: skip
    rng = random.Random(20)
    found = 0
    for _ in range(20_000):
        text = "".join(rng.choice(fragments) for _ in range(rng.randint(1, 9))).encode()
        try:
            nodes = list(yaml.compose_all(text, Loader=yaml.CSafeLoader))
        except yaml.YAMLError:
            continue
        if any(n is not None and _merge_tagged(n) for n in nodes):
            found += 1
            assert may_merge(text), text
    assert found > 100  # the fragments do make merge keys
