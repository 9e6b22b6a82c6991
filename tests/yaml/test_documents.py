"""bot.yaml.documents: libyaml fast path, YAML 1.2 confirmation, hostile input, the real corpora."""

from __future__ import annotations

import os
import signal
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from bot.yaml import documents as yaml_docs
from bot.yaml.documents import YamlDocument, YamlFile, parse_yaml
from tests.conftest import SHARED

CORPORA = SHARED / "corpora"
PLAIN = (dict, list, str, int, float, bool, type(None))


def values(result: YamlFile) -> list[object]:
    assert result.error is None, result.error
    return [d.value for d in result.documents]


def only(data: bytes) -> object:
    [value] = values(parse_yaml(data))
    return value


def failed(data: bytes) -> YamlDocument:
    result = parse_yaml(data)
    assert result.error is not None, result
    assert result.error is result.documents[-1]
    assert all(d.error is None for d in result.documents[:-1])
    return result.error


@pytest.fixture
def deadline() -> Iterator[None]:
    """Hostile input must not hang: fail the test instead of the run (a guard, not a timing)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError("parse_yaml took more than 10 seconds")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(10)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---- quirks that real repositories contain -----------------------------------------------------


def test_bare_equals_sign_is_a_string() -> None:
    data = b"matchers:\n  - name: severity\n    matchType: =\n  - matchType: =~\n"
    assert only(data) == {"matchers": [{"name": "severity", "matchType": "="}, {"matchType": "=~"}]}
    assert only(b"=: x\n") == {"=": "x"}


def test_a_redefined_anchor_replaces_the_earlier_one_for_later_aliases() -> None:
    data = b"a: &x 1\nb: *x\nc: &x [2]\nd: *x\n"
    assert only(data) == {"a": 1, "b": 1, "c": [2], "d": [2]}
    assert not parse_yaml(data).confirmed_by_yaml12  # the fast path reads it


def test_redefined_anchors_across_documents_and_an_error_after_them() -> None:
    result = parse_yaml(b"a: &x 1\nb: &x 2\nc: *x\n---\nd: *x\n")
    assert result.documents[0].value == {"a": 1, "b": 2, "c": 2}
    assert result.error is not None and result.error.index == 1
    assert result.error.error == "found undefined alias 'x'"  # anchors do not cross documents
    assert result.error.error_line == 5


def test_unknown_tags_give_the_plain_value_they_are_written_on() -> None:
    data = (
        b"a: !env_var FOO\n"
        b"b: !secret [x, 1]\n"
        b"c: !Find {name: y}\n"
        b"d: !unsafe '{{ lookup }}'\n"
        b"e: !!python/object/apply:os.system [echo hi]\n"
        b"f: !!python/name:os.system\n"
        b"g: !<tag:example.com,2024:thing> 7\n"
    )
    assert only(data) == {
        "a": "FOO",
        "b": ["x", 1],
        "c": {"name": "y"},
        "d": "{{ lookup }}",
        "e": ["echo hi"],
        "f": "",
        "g": "7",
    }


def test_merge_keys() -> None:
    data = b"base: &b {a: 1, z: 0}\nmore: &m {y: 2}\nd:\n  <<: [*b, *m]\n  z: 5\ne: {<<: *b}\n"
    assert only(data) == {
        "base": {"a": 1, "z": 0},
        "more": {"y": 2},
        "d": {"a": 1, "z": 5, "y": 2},
        "e": {"a": 1, "z": 0},
    }


def test_only_json_like_tags_are_interpreted() -> None:
    data = (
        b"when: 2024-01-02\nat: 2024-01-02T03:04:05Z\nbin: !!binary aGk=\nset: !!set {a, b}\n"
        b"omap: !!omap [x: 1]\nn: ~\nt: yes\ni: 0x1f\nf: 1.5\nq: '1'\nodd: 0x_\ndot: ._\n"
    )
    assert only(data) == {
        "when": "2024-01-02",
        "at": "2024-01-02T03:04:05Z",
        "bin": "aGk=",
        "set": {"a": None, "b": None},
        "omap": [{"x": 1}],
        "n": None,
        "t": True,
        "i": 31,
        "f": 1.5,
        "q": "1",
        "odd": "0x_",
        "dot": "._",
    }


def test_a_collection_key_becomes_its_source_text() -> None:
    # A Go-templated helmfile: `{{ env "X" }}` is a flow mapping whose key is a flow mapping.
    assert only(b'version: {{ env "X" }}\n') == {"version": {'{ env "X" }': None}}
    assert only(b"? [a,\n   b]\n: c\n") == {"[a, b]": "c"}


def test_a_core_tag_on_the_wrong_kind_of_node_is_an_error() -> None:
    error = failed(b"a: 1\nb: !!str {x: 1}\n")
    assert error.error_line == 2
    assert "cannot be used on a mapping" in (error.error or "")


# ---- documents, lines, empty files ---------------------------------------------------------------


def test_documents_before_a_syntax_error_are_kept() -> None:
    result = parse_yaml(b"a: 1\n---\nkind: [\n")
    assert result.documents[0] == YamlDocument(0, 1, {"a": 1})
    assert result.error == YamlDocument(
        1, 3, None, "while parsing a flow node: did not find expected node content", 3
    )
    assert not result.confirmed_by_yaml12


def test_multi_document_lines_point_at_the_first_content_line() -> None:
    data = b"# head\n---\n# about b\nb: 1\n--- # c\n- x\n...\n---\n\n'y'\n"
    result = parse_yaml(data)
    assert [(d.index, d.line, d.value) for d in result.documents] == [
        (0, 4, {"b": 1}),
        (1, 6, ["x"]),
        (2, 10, "y"),
    ]


@pytest.mark.parametrize("data", [b"", b"\n\n", b"# just a comment\n", b"  # indented\n# two\n"])
def test_files_without_documents_are_empty(data: bytes) -> None:
    result = parse_yaml(data)
    assert result == YamlFile(())
    assert result.is_empty and result.error is None


def test_empty_documents_sit_at_their_marker() -> None:
    result = parse_yaml(b"---\n---\n# c\n---\na: 1\n---\n")
    assert [(d.line, d.value) for d in result.documents] == [
        (1, None),
        (2, None),
        (5, {"a": 1}),
        (6, None),
    ]
    assert not result.is_empty
    assert parse_yaml(b"---\n# nothing\n---\n").is_empty
    assert parse_yaml(b"--- ~\n").is_empty  # an explicit null is an empty document too


def test_an_error_is_not_empty() -> None:
    assert not parse_yaml(b"[\n").is_empty


def test_boms() -> None:
    assert only(b"\xef\xbb\xbfa: 1\n{x: 1}: 2\n") == {"a": 1, "{x: 1}": 2}
    assert only("a: é\n".encode("utf-16")) == {"a": "é"}  # libyaml reads UTF-16 too
    assert only(b"\xfe\xff" + "a: é\n".encode("utf-16-be")) == {"a": "é"}
    assert failed(b"\xff\xfea\x00\x00\xd8").error == "not valid UTF-16 at byte 4"


# ---- YAML 1.2 confirmation ---------------------------------------------------------------------


def test_yaml12_confirms_what_libyaml_rejects() -> None:
    result = parse_yaml(b"kind: x\n---\n: empty key\n")  # an empty key: YAML 1.2 allows it
    assert result.confirmed_by_yaml12
    assert values(result) == [{"kind": "x"}, {None: "empty key"}]
    assert [d.line for d in result.documents] == [1, 3]


def test_yaml12_reading_is_kept_when_it_reads_further() -> None:
    result = parse_yaml(b"a: 1\n---\n: x\n---\nb: [\n")
    assert result.confirmed_by_yaml12
    assert [d.value for d in result.documents[:2]] == [{"a": 1}, {None: "x"}]
    assert result.error is not None and result.error.index == 2 and result.error.error_line == 5


def test_libyaml_error_is_reported_when_both_reject() -> None:
    error = failed(b"a: 1\nb: [c\nd: e\n")
    assert not parse_yaml(b"a: 1\nb: [c\nd: e\n").confirmed_by_yaml12
    assert error.error == "while parsing a flow sequence: did not find expected ',' or ']'"
    assert error.error_line == 3 and error.line == 1


def test_large_files_are_not_confirmed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_docs, "MAX_CONFIRM_BYTES", 3)
    result = parse_yaml(b": a\n")
    assert result.error is not None and not result.confirmed_by_yaml12


# ---- hostile input ---------------------------------------------------------------------------


def test_billion_laughs(deadline: None) -> None:
    lines = [b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [
        b"a%d: &a%d [%s]" % (i, i, b", ".join([b"*a%d" % (i - 1)] * 10)) for i in range(1, 10)
    ]
    error = failed(b"kind: ok\n---\n" + b"\n".join(lines) + b"\n")
    assert error.index == 1 and error.error_line == 3
    assert "expands to over 1000000 nodes" in (error.error or "")


def test_quadratic_merge_chain(deadline: None) -> None:
    chain = [b"m0: &m0 {k0: 0}"]
    chain += [b"m%d: &m%d {<<: *m%d, k%d: 0}" % (i, i, i - 1, i) for i in range(1, 3000)]
    assert "expands to over" in (failed(b"\n".join(chain)).error or "")


def test_an_alias_inside_its_own_anchor(deadline: None) -> None:
    error = failed(b"a: 1\nb: &x [1, *x]\n")
    assert error.error == "an alias refers to a collection that contains it"
    assert error.error_line == 2
    assert failed(b"&y {k: *y}\n").error_line == 1


@pytest.mark.parametrize("opener", [b"[", b"{", b"- ", b"? "])
def test_deep_nesting(deadline: None, opener: bytes) -> None:
    error = failed(opener * 20_000)
    assert error.error == "the document is nested deeper than 1000 levels"
    assert error.error_line == 1
    assert failed(opener * (5 << 19)).error == error.error  # 5 MiB of openers


def test_nesting_within_the_limit_loads() -> None:
    value = only(b"[" * 900 + b"1" + b"]" * 900)
    for _ in range(900):
        assert isinstance(value, list)
        value = value[0]
    assert value == 1


def test_our_own_depth_limit_for_a_libyaml_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_docs, "MAX_DEPTH", 50)  # far below libyaml's own limit
    monkeypatch.setattr(yaml_docs, "_FIRST_READ", yaml_docs._FastLoader)  # the counting one
    error = failed(b"ok: 1\n---\na:\n" + b" [\n" * 60 + b" ]\n" * 60)
    assert error.index == 1 and error.error == "the document is nested deeper than 1000 levels"
    assert error.error_line == 52  # the `[` holding the first node past the limit
    assert failed(b"a: &x 1\nb: &x " + b"[" * 60).error_line == 2  # the Python composer too


def test_levels_are_left_to_a_libyaml_that_counts_them() -> None:
    """libyaml 0.2.6 refuses nesting past 1000 levels itself: the first reading then skips
    its own count, which cost a tenth of a real tree's read."""
    import yaml._yaml as libyaml

    counts = yaml_docs._FIRST_READ is yaml_docs._UncountedLoader
    assert counts == (libyaml.get_version() >= (0, 2, 6))
    error = failed(b"a:\n" + b" [\n" * 1001 + b" ]\n" * 1001)
    assert error.error == "the document is nested deeper than 1000 levels"


def test_invalid_utf8(deadline: None) -> None:
    assert failed(b"a: 1\nb: caf\xc3\n") == YamlDocument(
        0, 1, None, "not valid UTF-8 at byte 11", 2
    )
    assert failed(b"a: \xed\xa0\x80\n").error == "not valid UTF-8 at byte 3"  # a surrogate


def test_nul_and_control_characters(deadline: None) -> None:
    error = failed(b"a: 1\n---\nb: x\x00y\n")
    assert error == YamlDocument(
        0, 1, None, "unacceptable character #x0000: control characters are not allowed", 3
    )
    assert failed(b"a: \x07\n").error_line == 1


def test_tab_indentation(deadline: None) -> None:
    error = failed(b"a:\n\tb: 1\n")
    assert error.error_line == 2
    assert "(a tab; YAML indentation must use spaces)" in (error.error or "")
    assert failed(b"a:\n  b: 1\n\tc: 2\n").error_line == 3


def test_five_mebibyte_file(deadline: None) -> None:
    dashboard = b"".join(b'      {"panel": %d, "title": "p%d"},\n' % (i, i) for i in range(140_000))
    head = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dash}\ndata:\n  d.json: |\n"
    objects = b"".join(b"---\nkind: Secret\nmetadata: {name: s%d}\n" % i for i in range(2000))
    data = head + dashboard + objects
    assert len(data) > 5 << 20
    result = parse_yaml(data)
    assert result.error is None and len(result.documents) == 2001
    last = len(data.splitlines())
    secret = {"kind": "Secret", "metadata": {"name": "s1999"}}
    assert result.documents[-1] == YamlDocument(2000, last - 1, secret)
    broken = parse_yaml(data + b"\tx: 1\n")  # too large to confirm: libyaml's verdict is final
    assert broken.error is not None and not broken.confirmed_by_yaml12
    assert (broken.error.index, broken.error.error_line) == (2000, last + 1)


# ---- the real corpora ----------------------------------------------------------------------------


def corpus_files() -> list[Path]:
    found = []
    for tree in sorted(CORPORA.glob("*/tree")):
        for folder, _, names in os.walk(tree):  # does not follow directory symlinks
            found += [Path(folder, n) for n in names if n.endswith((".yaml", ".yml"))]
    return [p for p in sorted(found) if p.is_file() and not p.is_symlink()]


def yaml12_loads(data: bytes) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            list(YAML(typ="rt", pure=True).load_all(data))
        except Exception:
            return False
    return True


def assert_plain(value: object) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        assert isinstance(item, PLAIN), type(item)
        if isinstance(item, dict):
            assert all(isinstance(k, PLAIN) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


@pytest.mark.needs_shared
def test_corpus_files_that_yaml12_loads_have_no_error() -> None:
    files = corpus_files()
    assert len(files) > 2000
    rejected = []
    for path in files:
        result = parse_yaml(path.read_bytes())
        for document in result.documents:
            assert_plain(document.value)
        if result.error is not None:
            assert not yaml12_loads(path.read_bytes()), (path, result.error)
            rejected.append(path)
    # Only the Helm chart templates (`{{- ... }}` lines) are not YAML at all.
    assert rejected and all("/templates/" in str(p) for p in rejected)


@pytest.mark.needs_shared
@pytest.mark.parametrize("marker", [b"matchType: =\n", b"!env_var ", b"!Env ", b"!Find "])
def test_corpus_quirks_load(marker: bytes) -> None:
    hits = [p for p in corpus_files() if marker in p.read_bytes()]
    assert hits
    for path in hits:
        result = parse_yaml(path.read_bytes())
        assert result.error is None and not result.confirmed_by_yaml12, path


def test_lines_of_top_level_keys_and_of_the_parts_asked_for() -> None:
    text = (
        b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n  namespace: b\n"
        b"resources:\n  - one.yaml\n  - {path: two.yaml}\nspec: {x: 1}\n---\n- a list\n"
    )
    first, second = parse_yaml(text, lines_under=frozenset({"metadata", "resources"})).documents
    assert first.lines == {
        ("apiVersion",): 1,
        ("kind",): 2,
        ("metadata",): 3,
        ("metadata", "name"): 4,
        ("metadata", "namespace"): 5,
        ("resources",): 6,
        ("resources", 0): 7,
        ("resources", 1): 8,
        ("spec",): 9,
    }
    assert second.lines == {}
    assert parse_yaml(text).documents[0].lines == {}  # only when asked


def test_lines_when_only_yaml12_reads_the_file() -> None:
    # libyaml refuses the empty key; the YAML 1.2 reading names the lines too.
    text = b"kind: x\nmetadata:\n  name: a\n: empty key\n"
    result = parse_yaml(text, lines_under=frozenset({"metadata"}))
    assert result.confirmed_by_yaml12
    (doc,) = result.documents
    assert doc.lines == {("kind",): 1, ("metadata",): 2, ("metadata", "name"): 3}
