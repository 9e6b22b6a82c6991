"""bot.yaml.edit refuses, with a reason, what it cannot do without touching other bytes."""

from __future__ import annotations

import pytest

from bot.yaml.edit import (
    MAX_EDIT_BYTES,
    MAX_PATH_DEPTH,
    EditError,
    add_leaf,
    new_file,
    remove_document,
    replace_node,
    set_leaf,
    set_or_add_leaf,
)
from tests.support.yaml_edits import assert_reads, fixture, hunks, mode

__all__ = ["mode"]  # a fixture, used by name

ATUIN = "sulibot-atuin-helmrelease.yaml"
ATUIN_APP = ("spec", "values", "controllers", "atuin", "containers", "app")


@pytest.mark.parametrize(
    ("path", "shared"),
    [
        # `liveness: &probes` is also `readiness: *probes`: an edit inside it changes both.
        (("probes", "liveness", "spec", "periodSeconds"), "probes.liveness"),
        (("probes", "readiness", "enabled"), "probes.readiness"),
        # `ATUIN_PORT: &port 80` is read again by two `port: *port`.
        (("env", "ATUIN_PORT"), "env.ATUIN_PORT"),
    ],
)
def test_an_edit_through_an_alias_is_refused(path: tuple[str, ...], shared: str) -> None:
    with pytest.raises(EditError, match=rf"{shared} is shared through an alias$"):
        set_leaf(fixture(ATUIN), document=0, path=(*ATUIN_APP, *path), value=1)


def test_an_alias_elsewhere_in_the_file_does_not_stop_an_edit(mode: str) -> None:
    before = fixture("bjws-freshrss-helmrelease.yaml")
    port = ("spec", "values", "service", "app", "ports", "http", "port")
    with pytest.raises(EditError, match=r"http.port is shared through an alias"):
        set_leaf(before, document=0, path=port, value=80)  # the value there is `*port`
    host = ("spec", "values", "route", "app", "hostnames", "0")
    after = set_leaf(before, document=0, path=host, value="rss.bjw-s.dev")
    assert hunks(before, after) == [
        (63, ["          - freshrss.bjw-s.dev\n"], ["          - rss.bjw-s.dev\n"])
    ]


MERGED = b"""\
base: &base
  x: 1
use:
  <<: *base
  z: 3
other: *base
free: &free 5
"""


def test_anchors_aliases_and_merge_keys_nearby(mode: str) -> None:
    with pytest.raises(EditError, match=r"^use.x may come from a merge key"):
        set_leaf(MERGED, document=0, path=("use", "x"), value=9)
    with pytest.raises(EditError, match=r"^use.w may come from a merge key"):
        add_leaf(MERGED, document=0, path=("use", "w"), value=9)
    with pytest.raises(EditError, match=r"^other is shared through an alias$"):
        set_leaf(MERGED, document=0, path=("other", "x"), value=9)
    with pytest.raises(EditError, match=r"^base is shared through an alias$"):
        set_leaf(MERGED, document=0, path=("base", "x"), value=9)
    # Beside them, and on an anchor nothing refers to, edits are made.
    after = set_leaf(MERGED, document=0, path=("use", "z"), value=4)
    assert hunks(MERGED, after) == [(5, ["  z: 3\n"], ["  z: 4\n"])]
    after = set_leaf(MERGED, document=0, path=("free",), value=6)
    assert hunks(MERGED, after) == [(7, ["free: &free 5\n"], ["free: 6\n"])]
    assert_reads(after, 0, ("use",), {"x": 1, "z": 3})


def test_adding_under_a_missing_parent_names_it() -> None:
    data = fixture("xunholy-home-assistant-httproute.yaml")
    path = ("metadata", "annotations", "external-dns.alpha.kubernetes.io/external")
    with pytest.raises(EditError, match=r"^missing parent metadata.annotations$"):
        add_leaf(data, document=1, path=path, value="true")
    with pytest.raises(EditError, match=r"^missing parent metadata.annotations$"):
        set_or_add_leaf(data, document=1, path=path, value="true")
    with pytest.raises(EditError, match=r"^missing parent spec.x$"):
        add_leaf(data, document=1, path=("spec", "x", "y"), value=1)


def test_setting_a_missing_leaf_names_it() -> None:
    data = fixture("flux2-apps.yaml")
    with pytest.raises(EditError, match=r"^missing key spec.suspend$"):
        set_leaf(data, document=0, path=("spec", "suspend"), value=True)
    with pytest.raises(EditError, match=r"^missing key spec.dependsOn.3$"):
        set_leaf(data, document=0, path=("spec", "dependsOn", "3"), value="x")
    with pytest.raises(EditError, match=r"^missing key spec.path.x$"):  # under a scalar
        replace_node(data, document=0, path=("spec", "path", "x"), value={})


def test_adding_where_it_cannot_go() -> None:
    data = fixture("flux2-apps.yaml")
    with pytest.raises(EditError, match=r"^spec.wait already exists$"):
        add_leaf(data, document=0, path=("spec", "wait"), value=False)
    with pytest.raises(EditError, match=r"^spec.path is not a mapping$"):
        add_leaf(data, document=0, path=("spec", "path", "x"), value=1)
    with pytest.raises(EditError, match=r"^spec.dependsOn is not a mapping$"):
        add_leaf(data, document=0, path=("spec", "dependsOn", "x"), value=1)


def test_documents_that_are_not_there() -> None:
    with pytest.raises(EditError, match=r"^there is no document 0 \(the file has 0\)$"):
        remove_document(fixture("flux2-gotk-sync.yaml"), document=0)  # only a comment
    with pytest.raises(EditError, match=r"^there is no document 3"):
        set_leaf(fixture("flux2-apps.yaml"), document=3, path=("spec",), value=1)
    for document in (-1, True):
        with pytest.raises(EditError, match=r"^the document index is a number from 0$"):
            set_leaf(b"a: 1\n", document=document, path=("a",), value=1)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"a: 1\n" + b"#" * MAX_EDIT_BYTES, "over 1048576 bytes"),
        ("a: 1\n".encode("utf-16"), "UTF-16"),
        (b"a: \xff\n", "not valid UTF-8 at byte 3"),
        (b"a: 1\rb: 2\n", "line breaks other than LF and CRLF"),
        ("a: 1\nb: x\u2028y\n".encode(), "line breaks other than LF and CRLF"),
        (b"%YAML 1.1\n---\na: 1\n", "directives"),
        (b"a: [1\n", "does not read as YAML"),
        (b"a: 1\na: 2\n", "does not read as YAML"),  # a key twice: the gate refuses it too
        # libyaml reads no document without `---` after the first (YAML 1.2 readers do).
        (b"a: 1\n---\nb: 2\n...\nc: 3\n", "libyaml cannot read the file"),
    ],
)
def test_files_that_are_not_edited(data: bytes, reason: str) -> None:
    with pytest.raises(EditError, match=reason):
        set_leaf(data, document=0, path=("a",), value=2)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (object(), "is not plain data"),
        (b"bytes", "is not plain data"),
        ({1, 2}, "is not plain data"),
        (float("nan"), "is not a finite number"),
        (float("inf"), "is not a finite number"),
        ({1: 2}, "a mapping key must be a string"),
    ],
)
def test_values_that_are_not_plain_data(value: object, reason: str) -> None:
    with pytest.raises(EditError, match=reason):
        set_leaf(b"a: 1\n", document=0, path=("a",), value=value)


def test_values_and_paths_are_bounded() -> None:
    deep: list[object] = []
    for _ in range(70):
        deep = [deep]
    with pytest.raises(EditError, match=r"too large or too deeply nested"):
        set_leaf(b"a: 1\n", document=0, path=("a",), value=deep)
    with pytest.raises(EditError, match=rf"^the path is deeper than {MAX_PATH_DEPTH} keys$"):
        set_leaf(b"a: 1\n", document=0, path=("a",) * (MAX_PATH_DEPTH + 1), value=1)
    with pytest.raises(EditError, match=r"^a path is a sequence of keys"):
        set_leaf(b"a: 1\n", document=0, path="a", value=1)
    with pytest.raises(EditError, match=r"^the path is empty$"):
        set_leaf(b"a: 1\n", document=0, path=(), value=1)
    with pytest.raises(EditError, match=r"^a new file holds a mapping$"):
        new_file([1])  # type: ignore[arg-type]


def test_a_deep_path_is_edited(mode: str) -> None:
    keys = [f"k{i}" for i in range(MAX_PATH_DEPTH)]
    before = "".join(f"{'  ' * i}{k}:\n" for i, k in enumerate(keys[:-1]))
    before += f"{'  ' * (MAX_PATH_DEPTH - 1)}{keys[-1]}: old  # deep\n"
    after = set_leaf(before.encode(), document=0, path=keys, value="new")
    assert hunks(before.encode(), after) == [
        (MAX_PATH_DEPTH, [f"{'  ' * 63}k63: old  # deep\n"], [f"{'  ' * 63}k63: new  # deep\n"])
    ]
    assert_reads(after, 0, keys, "new")
