"""Snapshots read from git objects: kinds, sizes before content, odd names, errors."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.errors import NotARepositoryError, RevisionNotFoundError, UnreadableEntryError
from bot.git.repository import GitRepository
from bot.git.snapshot import EntryKind
from bot.paths import decode_path, display_path
from tests.conftest import MakeRepo

ODD_NAMES = {
    "t/with space.yaml": b"a: 1\n",
    "t/-leading-dash.txt": b"x",
    "t/new\nline.txt": b"x",
    "t/caf\u00e9.md": b"x",
    decode_path(b"t/bad-\xff\xfe.txt"): b"x",
    "t/tab\there.txt": b"x",
}


def test_kinds_sizes_and_lazy_content(make_repo: MakeRepo) -> None:
    repo = make_repo(
        {"t/a.yaml": b"apiVersion: v1\n", "t/bin.dat": bytes(range(256))},
        symlinks={"t/link": "../elsewhere"},
        gitlinks={"t/sub": "2" * 40},
    )
    with GitRepository(repo).snapshot("HEAD") as snap:
        by_path = {e.path: e for e in snap}
        assert by_path["t/a.yaml"].kind is EntryKind.FILE
        assert by_path["t/a.yaml"].size == len(b"apiVersion: v1\n")
        assert by_path["t/bin.dat"].size == 256
        assert by_path["t/link"].kind is EntryKind.SYMLINK
        assert by_path["t/sub"].kind is EntryKind.GITLINK
        assert by_path["t/sub"].oid == "2" * 40
        # Content is read on demand, in any order, through the one cat-file process.
        assert by_path["t/bin.dat"].read() == bytes(range(256))
        assert by_path["t/link"].read() == b"../elsewhere"
        assert by_path["t/a.yaml"].read() == b"apiVersion: v1\n"
        with pytest.raises(UnreadableEntryError):
            by_path["t/sub"].read()
        assert [e.path for e in snap] == sorted(by_path, key=lambda p: p.encode())
        files = [by_path["t/a.yaml"], by_path["t/bin.dat"], by_path["t/link"]]
        assert snap.read_many(files) == [b"apiVersion: v1\n", bytes(range(256)), b"../elsewhere"]


def test_odd_names_survive_exactly(make_repo: MakeRepo) -> None:
    repo = make_repo(ODD_NAMES)
    with GitRepository(repo).snapshot("HEAD") as snap:
        paths = {e.path for e in snap} - {".ichor.yaml"}
        assert paths == set(ODD_NAMES)
        for path, data in ODD_NAMES.items():
            entry = snap.get(path)
            assert entry is not None and entry.read() == data
    shown = {display_path(p) for p in ODD_NAMES}
    assert "t/new\\nline.txt" in shown
    assert "t/bad-\\xff\\xfe.txt" in shown
    assert "t/caf\u00e9.md" in shown


def test_many_entries_in_chunks(make_repo: MakeRepo) -> None:
    files = {f"t/d{i % 7}/f{i}.yaml": f"n: {i}\n".encode() for i in range(1500)}
    repo = make_repo(files)
    with GitRepository(repo).snapshot("HEAD") as snap:
        assert len(snap) == 1501
        entry = snap.get("t/d6/f1000.yaml")
        assert entry is not None and entry.size == len(b"n: 1000\n")
        assert entry.read() == b"n: 1000\n"


def test_older_revision(make_repo: MakeRepo) -> None:
    repo = make_repo({"t/a.yaml": b"1"})
    first = GitRepository(repo).resolve("HEAD")
    from bot.cli.demo import build_repository

    build_repository(repo, {".ichor.yaml": b"x", "t/b.yaml": b"2"})
    git = GitRepository(repo)
    with git.snapshot(first) as snap:
        assert snap.revision == first
        assert snap.get("t/a.yaml") is not None and snap.get("t/b.yaml") is None


def test_unknown_revision(make_repo: MakeRepo) -> None:
    repo = make_repo({"t/a.yaml": b"1"})
    with pytest.raises(RevisionNotFoundError, match="not found"):
        GitRepository(repo).snapshot("no-such-branch")
    with pytest.raises(RevisionNotFoundError, match="not found"):
        GitRepository(repo).snapshot("f" * 40)  # a full id skips rev-parse; ls-tree refuses it
    with pytest.raises(RevisionNotFoundError, match="invalid revision"):
        GitRepository(repo).snapshot("--output=/tmp/x")


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(NotARepositoryError, match="not a git repository"):
        GitRepository(tmp_path).snapshot("HEAD")
    with pytest.raises(NotARepositoryError, match="not a directory"):
        GitRepository(tmp_path / "missing")


def test_missing_object_is_an_unreadable_entry(make_repo: MakeRepo) -> None:
    repo = make_repo({"t/a.yaml": b"unique content 8d1f\n"})
    oid = (
        subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD:t/a.yaml"], capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    with pytest.raises(UnreadableEntryError, match="missing"):
        GitRepository(repo).snapshot("HEAD")


def test_closing_stops_cat_file(make_repo: MakeRepo) -> None:
    repo = make_repo({"t/a.yaml": b"1"})
    snap = GitRepository(repo).snapshot("HEAD")
    entry = snap.get("t/a.yaml")
    assert entry is not None and entry.read() == b"1"  # starts cat-file
    catfile = snap._closer.__self__  # type: ignore[union-attr]
    proc = catfile._proc
    assert proc is not None and proc.poll() is None
    snap.close()
    assert proc.poll() is not None
    snap.close()  # idempotent


def test_git_dir_in_environment_is_not_followed(
    make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo({"t/a.yaml": b"1"})
    other = make_repo({"t/b.yaml": b"1"})
    monkeypatch.setenv("GIT_DIR", os.fspath(other / ".git"))
    with GitRepository(repo).snapshot("HEAD") as snap:
        assert snap.get("t/a.yaml") is not None


def test_changed_and_touched_lines_between_two_commits(tmp_path: Path) -> None:
    from tests.support.gitrepo import WorkRepo

    work = WorkRepo(tmp_path / "w")
    base = work.commit({"a.yaml": "one\ntwo\nthree\n", "odd\tname.txt": "x\n"})
    head = work.commit(
        {"a.yaml": "one\nTWO\nthree\nfour\n", "new.yaml": "n\n", "odd\tname.txt": "y\n"}
    )
    repo = GitRepository(work.path)
    assert sorted(repo.changed_paths(base, head)) == ["a.yaml", "new.yaml", "odd\tname.txt"]
    assert repo.changed_paths(base, head, added_only=True) == ["new.yaml"]
    assert repo.touched_lines(base, head, "a.yaml") == frozenset({2, 4})
    assert repo.touched_lines(base, head, "odd\tname.txt") == frozenset({1})
    assert repo.parent(head) == base and repo.parent(base) is None
    assert repo.merge_base(base, head) == base
