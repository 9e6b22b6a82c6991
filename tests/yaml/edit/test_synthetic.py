"""bot.yaml.edit on small files made for one property each: the bytes around an edit stay.

Each result is written out in full. Every test runs through the round trip and through the
line edits alone (`mode`) and expects the same bytes from both.
"""

from __future__ import annotations

import pytest

from bot.yaml.edit import add_leaf, new_file, remove_document, replace_node, set_leaf
from tests.support.yaml_edits import assert_reads, mode, readings

__all__ = ["mode"]  # a fixture, used by name

CRLF = b"# c\r\n---\r\na: 1\r\nb:\r\n  c: 2 # x\r\n---\r\nd: 3\r\n"


def test_crlf_line_endings_stay_and_new_lines_take_them(mode: str) -> None:
    after = set_leaf(CRLF, document=0, path=("b", "c"), value=5)
    assert after == b"# c\r\n---\r\na: 1\r\nb:\r\n  c: 5 # x\r\n---\r\nd: 3\r\n"
    after = add_leaf(CRLF, document=0, path=("b", "e"), value=["x", "y"])
    assert after == (
        b'# c\r\n---\r\na: 1\r\nb:\r\n  c: 2 # x\r\n  e:\r\n    - x\r\n    - "y"\r\n---\r\nd: 3\r\n'
    )
    assert_reads(after, 0, ("b", "e"), ["x", "y"])  # "y" is quoted: a boolean to Go's YAML
    assert remove_document(CRLF, document=0) == b"# c\r\n---\r\nd: 3\r\n"
    assert remove_document(CRLF, document=1) == b"# c\r\n---\r\na: 1\r\nb:\r\n  c: 2 # x\r\n"


def test_a_missing_final_newline_stays_missing(mode: str) -> None:
    data = b"a: 1\nb: 2"
    assert set_leaf(data, document=0, path=("b",), value=3) == b"a: 1\nb: 3"
    assert set_leaf(data, document=0, path=("a",), value=3) == b"a: 3\nb: 2"
    assert add_leaf(data, document=0, path=("c",), value=3) == b"a: 1\nb: 2\nc: 3"
    two = b"a: 1\n---\nb: 2"
    assert remove_document(two, document=1) == b"a: 1"
    assert remove_document(two, document=0) == b"---\nb: 2"


def test_a_bom_stays(mode: str) -> None:
    data = b"\xef\xbb\xbf# c\na: 1\n---\nb: 2\n"
    assert set_leaf(data, document=0, path=("a",), value=2) == b"\xef\xbb\xbf# c\na: 2\n---\nb: 2\n"
    assert remove_document(data, document=0) == b"\xef\xbb\xbf---\nb: 2\n"
    assert remove_document(data, document=1) == b"\xef\xbb\xbf# c\na: 1\n"


FLOW = b"spec: {a: 1, b: {c: 2}}  # f\nl: [1, 2]\ne: {}\nn: []\n"


def test_flow_mappings_and_sequences_stay_flow(mode: str) -> None:
    def edit(op: object, path: tuple[str, ...], value: object) -> bytes:
        assert callable(op)
        after = op(FLOW, document=0, path=path, value=value)
        assert isinstance(after, bytes)
        assert_reads(after, 0, path, value)
        return after.split(b"\n", 1)[0] if path[0] == "spec" else after

    assert edit(set_leaf, ("spec", "a"), 5) == b"spec: {a: 5, b: {c: 2}}  # f"
    assert edit(set_leaf, ("spec", "b", "c"), "yes") == b'spec: {a: 1, b: {c: "yes"}}  # f'
    assert edit(add_leaf, ("spec", "d"), "x y") == b"spec: {a: 1, b: {c: 2}, d: x y}  # f"
    assert edit(add_leaf, ("spec", "b", "e"), [1]) == b"spec: {a: 1, b: {c: 2, e: [1]}}  # f"
    assert edit(replace_node, ("spec",), {"a": 1}) == b"spec: {a: 1}  # f"
    rest = b"spec: {a: 1, b: {c: 2}}  # f\n"
    assert edit(set_leaf, ("l", "1"), 3) == rest + b"l: [1, 3]\ne: {}\nn: []\n"
    assert edit(add_leaf, ("e", "k"), "v") == rest + b"l: [1, 2]\ne: {k: v}\nn: []\n"
    assert edit(set_leaf, ("n",), ["v", "1"]) == rest + b'l: [1, 2]\ne: {}\nn: [v, "1"]\n'


def test_quoted_keys_and_the_quoting_of_the_old_value(mode: str) -> None:
    data = b"\"a.b\": 1\n'x y': 'it''s'\n\"q\": \"s\" # c\n"
    assert set_leaf(data, document=0, path=("a.b",), value=2).startswith(b'"a.b": 2\n')
    after = set_leaf(data, document=0, path=("x y",), value="yes")
    assert after == b'"a.b": 1\n\'x y\': \'yes\'\n"q": "s" # c\n'  # single quotes stay
    after = set_leaf(data, document=0, path=("q",), value="t")
    assert after == b"\"a.b\": 1\n'x y': 'it''s'\n\"q\": \"t\" # c\n"
    assert_reads(after, 0, ("x y",), "it's")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("yes", '"yes"'),
        ("on", '"on"'),
        ("y", '"y"'),
        ("true", '"true"'),
        ("1", '"1"'),
        ("1.5", '"1.5"'),
        ("0x10", '"0x10"'),
        ("1e3", '"1e3"'),
        ("null", '"null"'),
        ("~", '"~"'),
        ("", '""'),
        (":", '":"'),
        ("=", '"="'),
        ("2024-01-01", '"2024-01-01"'),
        ("12:30", '"12:30"'),
        ("a: b", '"a: b"'),
        ("a #b", '"a #b"'),
        ("*x", '"*x"'),
        ("- x", '"- x"'),
        (" lead", '" lead"'),
        ("two\nlines", '"two\\nlines"'),
        ("tab\there", '"tab\\there"'),
        ("${CLUSTER_DOMAIN}", "${CLUSTER_DOMAIN}"),
        ("it's", "it's"),
        ("ünï", "ünï"),
        ("ghcr.io/a/b:1.2@sha256:0f", "ghcr.io/a/b:1.2@sha256:0f"),
        (True, "true"),
        (0, "0"),
        (-3, "-3"),
        (10**20, "100000000000000000000"),
        (0.5, "0.5"),
        (1e-7, "1.0e-07"),
    ],
)
def test_scalars_are_written_so_both_parsers_read_them(value: object, text: str) -> None:
    after = set_leaf(b"a: old # c\nb: 1\n", document=0, path=("a",), value=value)
    assert after == f"a: {text} # c\nb: 1\n".encode()
    assert_reads(after, 0, ("a",), value)


def test_a_new_file_is_block_style() -> None:
    document = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "labels": {"app": "yes"}},
        "data": {"k": "1", "list": ["a", {"b": None, "c": [1]}], "empty": {}, "none": []},
    }
    assert new_file(document) == (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n"
        b'    app: "yes"\ndata:\n  k: "1"\n  list:\n    - a\n    - b: null\n      c:\n'
        b"        - 1\n  empty: {}\n  none: []\n"
    )
    assert readings(new_file(document)) == ([document], [document])


MARKERS = b"# file\n---\n# zero\na: 1\n...\n---\n\n---\nb: 2 # two\n...\n# after\n"


def test_document_markers_and_empty_documents(mode: str) -> None:
    # Documents are counted as bot.yaml.documents counts them: the empty one is document 1.
    assert readings(MARKERS)[0] == [{"a": 1}, None, {"b": 2}]
    after = set_leaf(MARKERS, document=2, path=("b",), value=3)
    assert after == MARKERS.replace(b"b: 2 # two", b"b: 3 # two")
    assert remove_document(MARKERS, document=0) == b"# file\n---\n\n---\nb: 2 # two\n...\n# after\n"
    assert remove_document(MARKERS, document=1) == (
        b"# file\n---\n# zero\na: 1\n...\n---\nb: 2 # two\n...\n# after\n"
    )
    assert remove_document(MARKERS, document=2) == b"# file\n---\n# zero\na: 1\n...\n---\n\n"


def test_removing_the_last_document_gives_none() -> None:
    assert remove_document(b"# header\n---\n# about a\na: 1\n", document=0) is None
    # What is left after the only object is a comment in an empty document: still nothing.
    data = b"---\n# a\na: 1\n---\n# only a comment\n"
    assert remove_document(data, document=0) is None
    assert remove_document(data, document=1) == b"---\n# a\na: 1\n"


NULLS = b"metadata:\n  name: x\n  annotations:\n  labels: # none yet\nspec: ~\n"


def test_adding_under_a_key_with_no_value(mode: str) -> None:
    after = add_leaf(NULLS, document=0, path=("metadata", "annotations", "a"), value="1")
    assert after == NULLS.replace(b"  annotations:\n", b'  annotations:\n    a: "1"\n')
    after = add_leaf(NULLS, document=0, path=("metadata", "labels", "a"), value="b")
    assert after == NULLS.replace(b"# none yet\n", b"# none yet\n    a: b\n")
    after = add_leaf(NULLS, document=0, path=("spec", "a"), value="b")
    assert after == NULLS.replace(b"spec: ~\n", b"spec:\n  a: b\n")


def test_nodes_of_every_shape_are_replaced(mode: str) -> None:
    data = b"a: |  # text\n  x\n  y\nb:\n  long plain\n  text\nl:\n- k: 1\n  v: 2\n- c\n"

    def edit(path: tuple[str, ...], value: object) -> bytes:
        after = set_leaf(data, document=0, path=path, value=value)
        assert_reads(after, 0, path, value)
        return after

    assert edit(("a",), "z") == data.replace(b"a: |  # text\n  x\n  y\n", b"a: z\n")
    assert edit(("a",), ["z"]) == data.replace(b"a: |  # text\n  x\n  y\n", b"a:\n- z\n")
    assert edit(("b",), "z") == data.replace(b"  long plain\n  text\n", b"  z\n")
    assert edit(("l", "0"), {"x": 1}) == data.replace(b"- k: 1\n  v: 2\n", b"- x: 1\n")
    assert edit(("l", "1"), ["p", "q"]) == data.replace(b"- c\n", b"- - p\n  - q\n")
    after = replace_node(data, document=0, path=("l", "0"), value={"v": 3, "w": 4})
    assert after == data.replace(b"- k: 1\n  v: 2\n", b"- v: 3\n  w: 4\n")
    after = replace_node(data, document=0, path=(), value=["whole"])
    assert after == b"- whole\n"


def test_new_entries_follow_the_files_indentation(mode: str) -> None:
    four = b"a:\n    b:\n        c: 1\n    l:\n    - x\n"
    after = add_leaf(four, document=0, path=("a", "d"), value={"e": {"f": 1}, "g": ["h"]})
    assert after == four + b"    d:\n        e:\n            f: 1\n        g:\n        - h\n"


def test_lines_ruamel_would_rewrite_stay_as_written(mode: str) -> None:
    # A round trip writes `true`, an empty null and `k: v`: those lines are not the edit's.
    data = b"a: 1\nt: True\nn: ~\nk:   v\nlong: " + b"word " * 30 + b"end\n"
    after = set_leaf(data, document=0, path=("a",), value=2)
    assert after == b"a: 2" + data[4:]
    after = add_leaf(data, document=0, path=("z",), value=None)
    assert after.startswith(data) and after[len(data) :] in (b"z:\n", b"z: null\n")


def test_unicode_before_the_value_on_its_line(mode: str) -> None:
    data = "ünï: ä # ç\nb: 1\n".encode()
    after = set_leaf(data, document=0, path=("ünï",), value="öö")
    assert after == "ünï: öö # ç\nb: 1\n".encode()


def test_a_custom_tag_elsewhere_does_not_stop_an_edit(mode: str) -> None:
    # PyYAML's safe loader cannot read `!env_var`: the gate's reader and ruamel.yaml check.
    data = b"a: 1\nb: !env_var X\nm: =\n"
    assert set_leaf(data, document=0, path=("a",), value=2) == b"a: 2\nb: !env_var X\nm: =\n"
