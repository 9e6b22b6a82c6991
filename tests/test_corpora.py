"""The gate on the real GitOps repositories in ../shared/corpora, each ``tree/`` as one target.

The corpora keep their symlinks as plain files holding the link target (listed in
KEPT_SYMLINKS.tsv); the repository built here restores them as real git symlinks.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from bot.cli.demo import read_tree
from tests.conftest import SHARED, MakeRepo, RunCli

pytestmark = pytest.mark.needs_shared
CORPORA = SHARED / "corpora"
# Without ../shared one placeholder name keeps each test collected, so it reports its skip.
NAMES = (
    sorted(p.name for p in CORPORA.iterdir() if (p / "tree").is_dir())
    if CORPORA.is_dir()
    else ["(no corpora)"]
)


def kept_symlinks(corpus: Path) -> dict[str, str]:
    listing = corpus / "KEPT_SYMLINKS.tsv"
    if not listing.exists():
        return {}
    with listing.open(newline="") as fh:
        return {row["path"]: row["target"] for row in csv.DictReader(fh, delimiter="\t")}


def check(run_cli: RunCli, *args: str) -> dict[str, Any]:
    result = run_cli("check", *args, "--path", ".", "--format", "json")
    assert result.err == "" and result.code in (0, 1), result.err
    report: dict[str, Any] = result.json()
    target: dict[str, Any]
    (target,) = report["targets"]
    return target


def test_corpora_are_present() -> None:
    assert len(NAMES) >= 4, f"expected the shared corpora at {CORPORA}"


@pytest.mark.parametrize("name", NAMES)
def test_gate_runs_on_corpus(name: str, make_repo: MakeRepo, run_cli: RunCli) -> None:
    corpus = CORPORA / name
    links = kept_symlinks(corpus)
    files = {p: d for p, d in read_tree(corpus / "tree").items() if p not in links}
    repo = make_repo(files, symlinks=links, config=None)

    from_git = check(run_cli, str(repo), "--rev", "HEAD")
    assert sum(from_git["counts"].values()) == len(files) + len(links)
    symlinks = sorted(i["path"] for i in from_git["issues"] if i["kind"] == "foreign-symlink")
    assert symlinks == sorted(links)

    # The directory itself (links stored as plain files there) gives the same verdict otherwise.
    from_disk = check(run_cli, str(corpus / "tree"))
    assert from_disk["counts"]["managed"] == from_git["counts"]["managed"]
    assert sum(from_disk["counts"].values()) == len(files) + len(links)


def test_bjw_s_symlinks_are_foreign(make_repo: MakeRepo, run_cli: RunCli) -> None:
    corpus = CORPORA / "bjw-s-labs-home-ops"
    links = kept_symlinks(corpus)
    assert links == {"NOTES.md": "docs/NOTES.md", ".templates": "docs/templates"}
    files = {p: d for p, d in read_tree(corpus / "tree").items() if p not in links}
    target = check(run_cli, str(make_repo(files, symlinks=links, config=None)), "--rev", "HEAD")
    found = {i["path"]: i for i in target["issues"] if i["kind"] == "foreign-symlink"}
    assert set(found) == {"NOTES.md", ".templates"}
    assert found["NOTES.md"]["message"] == "symbolic link to 'docs/NOTES.md'"
    # The name with an invisible U+200E after '.yaml' is foreign: the report holds the real
    # name, the message shows it escaped.
    odd = [i for i in target["issues"] if i["path"] == ".yayamlls.yaml\u200e"]
    assert [i["kind"] for i in odd] == ["foreign-file"]
    assert "'.yayamlls.yaml\\u200e'" in odd[0]["message"]


@pytest.mark.parametrize("name", NAMES)
def test_report_is_stable_across_runs(name: str, run_cli: RunCli) -> None:
    tree = str(CORPORA / name / "tree")
    first = run_cli("check", tree, "--path", ".", "--format", "json")
    second = run_cli("check", tree, "--path", ".", "--format", "json")
    assert first.code == second.code and first.out == second.out
