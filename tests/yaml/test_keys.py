"""bot.yaml.keys, through bot.yaml.documents: a key written twice in one mapping names both lines.

kubectl and kustomize refuse such files (``mapping key "kind" already defined``) and YAML 1.2
forbids them; reading the last value instead could turn a ConfigMap into a Secret.
"""

from __future__ import annotations

import pytest

from bot.yaml.documents import parse_yaml


def error_of(data: bytes) -> tuple[str, int | None, int]:
    result = parse_yaml(data)
    assert result.error is not None, result
    return result.error.error or "", result.error.error_line, result.error.index


@pytest.mark.parametrize(
    ("data", "message", "line"),
    [
        (
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nkind: Secret\n",
            "mapping key 'kind' is defined twice, at lines 2 and 4",
            4,
        ),
        (  # nested, block style
            b"kind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    x: '1'\n    x: '2'\n",
            "mapping key 'x' is defined twice, at lines 5 and 6",
            6,
        ),
        (  # flow style, one line
            b"kind: ConfigMap\nmetadata: {name: a, name: b}\n",
            "mapping key 'name' is defined twice, on line 2",
            2,
        ),
        (  # a quoted spelling is the same key
            b'kind: ConfigMap\n"kind": Secret\n',
            "mapping key 'kind' is defined twice, at lines 1 and 2",
            2,
        ),
        (  # in a mapping inside a list
            b"items:\n- {k: 1}\n- k: 1\n  k: 2\n",
            "mapping key 'k' is defined twice, at lines 3 and 4",
            4,
        ),
        (  # own keys beside a merge key still count
            b"base: &b {a: 1}\nd:\n  <<: *b\n  y: 2\n  y: 3\n",
            "mapping key 'y' is defined twice, at lines 4 and 5",
            5,
        ),
        (  # a merge source's own keys, though an alias flattens it first
            b"a:\n  x:\n    inner: &m {<<: {k: 1}, k: 2, k: 3}\nb: {<<: *m}\n",
            "mapping key 'k' is defined twice, on line 3",
            3,
        ),
        (  # two merge keys are the key '<<' twice
            b"base: &b {a: 1}\nd:\n  <<: *b\n  <<: *b\n",
            "mapping key '<<' is defined twice, at lines 3 and 4",
            4,
        ),
        (  # collection keys (templating) with the same text
            b"a: 1\n? [x]\n: 1\n? [x]\n: 2\n",
            "mapping key '[x]' is defined twice, at lines 2 and 4",
            4,
        ),
    ],
)
def test_a_key_twice_is_an_error(data: bytes, message: str, line: int) -> None:
    assert error_of(data)[:2] == (message, line)


def test_a_later_document_of_a_multi_document_file() -> None:
    data = b"kind: ConfigMap\nmetadata: {name: a}\n---\n"
    data += b"kind: ConfigMap\nmetadata: {name: b}\nkind: Secret\n"
    result = parse_yaml(data)
    assert result.documents[0].value == {"kind": "ConfigMap", "metadata": {"name": "a"}}
    assert error_of(data) == ("mapping key 'kind' is defined twice, at lines 4 and 6", 6, 1)


def test_a_file_only_yaml12_reads_is_refused_too() -> None:
    # libyaml rejects the empty key, so the YAML 1.2 reading is the one used: it checks keys too.
    message, line, _ = error_of(b": empty key\nkind: a\nkind: b\n")
    assert (message, line) == ("mapping key 'kind' is defined twice, at lines 2 and 3", 3)


@pytest.mark.parametrize(
    "data",
    [
        b"base: &b {a: 1, z: 0}\nd:\n  <<: *b\n  z: 5\n",  # an own key overrides a merged one
        b"x: &x {a: 1}\ny: &y {a: 2}\nd:\n  <<: [*x, *y]\n",  # merged mappings may share keys
        # a merge source flattened (through an alias) before the walk reaches it
        b"a:\n  x:\n    inner: &m {<<: {k: 1}, k: 2}\nb: {<<: *m}\n",
        b"1: a\n'1': b\n",  # an int and a string are two keys
        b"on: 1\nyes: 2\n",  # different keys, though YAML 1.1 reads both as true
        b"a: {k: 1}\nb: {k: 1}\n",  # the same key in two mappings
        b"a: 1\n---\na: 2\n",  # the same key in two documents
    ],
)
def test_what_is_not_a_key_twice(data: bytes) -> None:
    assert parse_yaml(data).error is None


def test_many_keys_are_checked_in_one_pass() -> None:
    keys = b"".join(b"k%d: 1\n" % n for n in range(200_000))
    message, line, _ = error_of(keys + b"k7: 2\n")
    assert (message, line) == ("mapping key 'k7' is defined twice, at lines 8 and 200001", 200001)
