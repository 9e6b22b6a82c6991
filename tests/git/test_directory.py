"""Snapshots read from a directory: lstat only, links never followed, submodules seen."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.errors import NotARepositoryError, UnreadableEntryError
from bot.git.directory import read_directory
from bot.git.snapshot import EntryKind
from bot.paths import decode_path
from tests.conftest import make_deep_dirs


def test_kinds(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.yaml").write_text("a: 1\n")
    (tmp_path / "t" / "passwd").symlink_to("/etc/passwd")
    (tmp_path / "t" / "dirlink").symlink_to(tmp_path / "t")
    (tmp_path / "t" / "sub").mkdir()
    (tmp_path / "t" / "sub" / ".git").write_text("gitdir: ../../.git/modules/sub\n")
    (tmp_path / "t" / "sub" / "inside.txt").write_text("hidden by the submodule")
    os.mkfifo(tmp_path / "t" / "pipe.yaml")
    snap = read_directory(tmp_path)
    kinds = {e.path: e.kind for e in snap}
    assert kinds == {
        "t/a.yaml": EntryKind.FILE,
        "t/passwd": EntryKind.SYMLINK,
        "t/dirlink": EntryKind.SYMLINK,
        "t/sub": EntryKind.GITLINK,
        "t/pipe.yaml": EntryKind.SPECIAL,
    }
    passwd = snap.get("t/passwd")
    assert passwd is not None and passwd.read() == b"/etc/passwd"
    pipe = snap.get("t/pipe.yaml")
    assert pipe is not None
    with pytest.raises(UnreadableEntryError):
        pipe.read()  # never opened: a FIFO would block


def test_non_utf8_names(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/caf\xe9.txt"
    with open(raw, "wb") as fh:
        fh.write(b"x")
    snap = read_directory(tmp_path)
    assert [e.path for e in snap] == [decode_path(b"caf\xe9.txt")]
    assert snap.entries[0].read() == b"x"


def test_vanished_file_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("a: 1\n")
    snap = read_directory(tmp_path)
    (tmp_path / "a.yaml").unlink()
    with pytest.raises(UnreadableEntryError, match=r"cannot read a\.yaml"):
        snap.entries[0].read()


def test_file_swapped_for_link_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("a: 1\n")
    snap = read_directory(tmp_path)
    (tmp_path / "a.yaml").unlink()
    (tmp_path / "a.yaml").symlink_to("/etc/hostname")
    with pytest.raises(UnreadableEntryError):
        snap.entries[0].read()


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(NotARepositoryError):
        read_directory(tmp_path / "missing")


def test_a_tree_thousands_deep_is_walked_without_recursion(deep_tmp: Path) -> None:
    # 1,500 levels: past Python's recursion limit, inside the OS path limit.
    deep = make_deep_dirs(deep_tmp, *(["d"] * 1500))
    Path(deep, "a.yaml").write_text("a: 1\n")
    (deep_tmp / "top.txt").write_text("x")
    snap = read_directory(deep_tmp)
    assert {e.path for e in snap} == {"top.txt", "/".join(["d"] * 1500) + "/a.yaml"}


def test_empty_directories_are_recorded(tmp_path: Path) -> None:
    # git stores no directory, but a target path on disk can be one that holds nothing yet.
    (tmp_path / "t" / "a" / "b").mkdir(parents=True)
    (tmp_path / "t" / "c").mkdir()
    (tmp_path / "t" / "c" / "x.yaml").write_text("a: 1\n")
    (tmp_path / "u").mkdir()
    snap = read_directory(tmp_path)
    assert [e.path for e in snap] == ["t/c/x.yaml"]
    assert snap.empty_directories == frozenset({"t/a", "t/a/b", "u"})
