"""Commits built in a blob-less mirror: exact trees, the bot as author, nothing checked out or
fetched."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from bot.errors import GitStoreError
from bot.git.commit import (
    CommitError,
    GitIdentity,
    UnsafePathError,
    build_commit,
    check_path,
)
from bot.git.store import Mirror
from tests.git.conftest import FILES, GITLINK, SYMLINK, Served, git

BOT = GitIdentity("ichor-bot", "bot@ichor.example")
DATE = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


@contextmanager
def fetched(served: Served) -> Iterator[Mirror]:
    with served.store.open(served.handle) as mirror:
        mirror.fetch(served.creds, ["refs/heads/main"], want=[served.main])
        yield mirror


def missing(mirror: Path, rev: str) -> set[str]:
    args = ("--objects", "--no-walk", "--missing=print", "--no-object-names")
    out = git(mirror, "rev-list", *args, rev)
    return {line[1:] for line in out.split() if line.startswith("?")}


def tree(mirror: Path, commit: str) -> dict[str, tuple[str, str]]:
    """Path -> (mode, object id) of every entry at ``commit``: trees only, no blob read."""
    out = git(mirror, "ls-tree", "-r", "-z", "--full-tree", commit)
    entries = {}
    for record in out.split("\0"):
        if record:
            meta, _, path = record.partition("\t")
            mode, _, oid = meta.split()
            entries[path] = (mode, oid)
    return entries


def commit(
    mirror: Mirror,
    parent: str,
    changes: Mapping[str, bytes | None],
    *,
    message: str = "ichor: approve Deployment apps/web",
    co_author: str | None = None,
    date: datetime = DATE,
) -> str:
    return build_commit(
        mirror,
        parent=parent,
        changes=changes,
        message=message,
        author=BOT,
        co_author=co_author,
        date=date,
    )


def test_a_commit_adds_modifies_and_deletes_byte_exactly(served: Served) -> None:
    changes = {
        "t/new/fresh.yaml": b"fresh: yes\r\nno newline at end",
        "t/a.yaml": b"a: 2  # comment kept\n",
        "t/run.sh": b"#!/bin/sh\necho bye\n",
        "t/b.yaml": None,
    }
    with fetched(served) as mirror:
        before = missing(mirror.path, served.main)
        assert before  # blob-less: the parent's blobs are not here
        requests = len(served.server.requests)
        new = commit(mirror, served.main, changes, co_author="Ada <ada@example.com>")
        assert len(served.server.requests) == requests  # nothing fetched, lazily or not
        assert missing(mirror.path, served.main) == before
        old_tree, new_tree = tree(mirror.path, served.main), tree(mirror.path, new)
        assert set(new_tree) == set(old_tree) - {"t/b.yaml"} | {"t/new/fresh.yaml"}
        for path, data in changes.items():
            if data is not None:
                assert mirror.git(["cat-file", "blob", new_tree[path][1]]) == data
        assert new_tree["t/new/fresh.yaml"][0] == "100644"
        assert new_tree["t/run.sh"][0] == "100755"  # the mode of an existing file is kept
        assert new_tree["t/a.yaml"][0] == "100644"
        untouched = set(old_tree) - set(changes)
        assert {p: new_tree[p] for p in untouched} == {p: old_tree[p] for p in untouched}
        assert new_tree[SYMLINK[0]][0] == "120000" and new_tree[GITLINK[0]] == (
            "160000",
            GITLINK[1],
        )
        assert git(mirror.path, "rev-parse", f"{new}^") == served.main
        assert git(mirror.path, "rev-list", "--count", f"{new}^@") == "1"  # one parent
        assert missing(mirror.path, new) == before - {old_tree["t/b.yaml"][1]} - {
            old_tree[p][1] for p in ("t/a.yaml", "t/run.sh")
        }


def test_author_committer_dates_and_trailer(served: Served) -> None:
    with fetched(served) as mirror:
        new = commit(
            mirror,
            served.main,
            {"t/a.yaml": b"a: 3\n"},
            message="ichor: approve Deployment apps/web\n\nRequested in a comment.\n\n",
            co_author="Ada Lovelace <ada@example.com>",
        )
        raw = git(mirror.path, "cat-file", "commit", new)
    headers, _, body = raw.partition("\n\n")
    stamp = f"{int(DATE.timestamp())} +0000"
    assert f"author ichor-bot <bot@ichor.example> {stamp}" in headers.splitlines()
    assert f"committer ichor-bot <bot@ichor.example> {stamp}" in headers.splitlines()
    assert not any(line.startswith("gpgsig") for line in headers.splitlines())
    assert body == (
        "ichor: approve Deployment apps/web\n\nRequested in a comment.\n\n"
        "Co-authored-by: Ada Lovelace <ada@example.com>"
    )


def test_a_fixed_date_makes_the_id_reproducible_and_keeps_its_zone(served: Served) -> None:
    zone = timezone(timedelta(hours=-3, minutes=-30))
    with fetched(served) as mirror:
        one = commit(mirror, served.main, {"t/a.yaml": b"x\n"}, date=DATE.astimezone(zone))
        two = commit(mirror, served.main, {"t/a.yaml": b"x\n"}, date=DATE.astimezone(zone))
        raw = git(mirror.path, "cat-file", "commit", one)
        assert one == two
        assert f"{int(DATE.timestamp())} -0330" in raw
        without = build_commit(
            mirror, parent=served.main, changes={"t/a.yaml": b"x\n"}, message="m", author=BOT
        )
        assert "Co-authored-by" not in git(mirror.path, "cat-file", "commit", without)
        with pytest.raises(ValueError, match="timezone"):
            commit(mirror, served.main, {"t/a.yaml": b"y\n"}, date=datetime(2024, 1, 1))


def test_no_work_tree_index_or_temp_file_is_left(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with fetched(served) as mirror:
        files_before = {p for p in mirror.path.rglob("*") if p.is_file()}
        commit(mirror, served.main, {"t/a.yaml": b"a: 9\n", "t/b.yaml": None, "n.yaml": b"n\n"})
        added = {p for p in mirror.path.rglob("*") if p.is_file()} - files_before
    # Only new loose objects: no index, no checked-out file, no ref or config changed.
    assert added and all(p.relative_to(mirror.path).parts[0] == "objects" for p in added)
    assert not (mirror.path / "index").exists()
    assert list(scratch.iterdir()) == []  # the temporary index went with its directory
    argvs = served.git_argvs()
    assert not any(v in a for a in argvs for v in ("checkout", "worktree", "--work-tree"))


def test_file_and_directory_changes_in_one_commit(served: Served) -> None:
    with fetched(served) as mirror:
        # A file replaced by a directory of the same name, in one commit.
        new = commit(mirror, served.main, {"top.txt": None, "top.txt/inner.yaml": b"i\n"})
        entries = tree(mirror.path, new)
        assert "top.txt" not in entries and entries["top.txt/inner.yaml"][0] == "100644"
        with pytest.raises(CommitError, match="directory"):
            commit(mirror, served.main, {"t/deep": b"not a dir\n"})
        with pytest.raises(CommitError, match="directory"):
            commit(mirror, served.main, {"t/deep": None})
        with pytest.raises(CommitError):  # under a file that stays
            commit(mirror, served.main, {"top.txt/x.yaml": b"x\n"})
        with pytest.raises(CommitError):  # a file and a path under it, both new
            commit(mirror, served.main, {"n/a": b"1\n", "n/a/b": b"2\n"})


def test_deleting_a_missing_path_and_other_refusals(served: Served) -> None:
    with fetched(served) as mirror:
        with pytest.raises(CommitError, match=r"cannot delete t/nope\.yaml"):
            commit(mirror, served.main, {"t/a.yaml": b"a\n", "t/nope.yaml": None})
        with pytest.raises(CommitError, match="submodule"):
            commit(mirror, served.main, {GITLINK[0]: b"x\n"})
        with pytest.raises(CommitError, match="submodule"):
            commit(mirror, served.main, {GITLINK[0]: None})
        with pytest.raises(CommitError, match="not a regular file"):
            commit(mirror, served.main, {SYMLINK[0]: b"elsewhere"})
        assert SYMLINK[0] not in tree(mirror.path, commit(mirror, served.main, {SYMLINK[0]: None}))
        with pytest.raises(CommitError, match="leave the tree"):
            commit(mirror, served.main, {"t/a.yaml": FILES["t/a.yaml"]})
        with pytest.raises(CommitError, match="no changes"):
            commit(mirror, served.main, {})
        with pytest.raises(CommitError, match="message"):
            commit(mirror, served.main, {"t/a.yaml": b"z\n"}, message="\n\n")
        with pytest.raises(CommitError, match="co-author"):
            commit(mirror, served.main, {"t/a.yaml": b"z\n"}, co_author="a\nb")
        with pytest.raises(CommitError, match="full commit id"):
            commit(mirror, "main", {"t/a.yaml": b"z\n"})
        with pytest.raises(CommitError, match="fetch it first"):
            commit(mirror, "3" * 40, {"t/a.yaml": b"z\n"})
    with pytest.raises(ValueError):
        GitIdentity("bot", "a>b@example.com")


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "../up.yaml",
        "t/../../up.yaml",
        "t//a.yaml",
        "t/a.yaml/",
        "./t/a.yaml",
        "",
        ".git/config",
        "t/.git/hooks/post-checkout",
        "t/.GIT/config",
        "t/a\0.yaml",
        "t/a\n.yaml",
    ],
)
def test_unsafe_paths_are_refused_before_anything_is_written(served: Served, path: str) -> None:
    with pytest.raises(UnsafePathError):
        check_path(path)
    with fetched(served) as mirror:
        objects = {p for p in mirror.path.rglob("*") if p.is_file()}
        with pytest.raises(UnsafePathError) as info:
            commit(mirror, served.main, {"t/a.yaml": b"ok\n", path: b"evil\n"})
        assert isinstance(info.value, GitStoreError)
        assert {p for p in mirror.path.rglob("*") if p.is_file()} == objects


def test_odd_but_safe_names_round_trip(served: Served) -> None:
    names = ["t/with space.yaml", "t/tab\there.yaml", "t/ünï.yaml", "t/-dash.yaml", "t/a,b.yaml"]
    names.append(b"t/raw\xff.yaml".decode("utf-8", "surrogateescape"))
    with fetched(served) as mirror:
        new = commit(mirror, served.main, {n: n.encode("utf-8", "surrogateescape") for n in names})
        raw = mirror.git(["ls-tree", "-r", "-z", "--name-only", "--full-tree", new])
        listed = {p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p}
        assert set(names) <= listed
