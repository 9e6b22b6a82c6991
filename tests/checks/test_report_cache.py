"""A base gated once serves every pull request on it: the report cache, and the check using it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.checks.pipeline import CheckServices, run_check
from bot.checks.report_cache import ReportCache
from bot.checks.request import MergeBase, pull_request
from bot.checks.trees import TreeSource, local_tree
from bot.gate.report import Report
from bot.gate.run import RegistryCache
from bot.gate.run import run_gate as gate
from bot.repos import ForgeKind, RepoRef
from tests.support.gitops import configmap
from tests.support.gitrepo import WorkRepo
from tests.support.recording_forge import RecordingForge

NAME = "acme/gitops"
HANDLE = RepoRef(ForgeKind.GITHUB, NAME, clone_url=f"https://github.com/{NAME}.git")
CONFIG = "version: 1\ntargets:\n  - {name: prod, path: clusters/prod}\n"
WEB = "clusters/prod/v1/configmaps/web"


def test_a_kept_report_is_given_back_and_the_oldest_goes_first() -> None:
    cache, built = ReportCache(size=2), []

    def build(rev: str) -> Report:
        built.append(rev)
        return Report(revision=rev)

    first = cache.get(("r", "a"), lambda: build("a"))
    assert cache.get(("r", "a"), lambda: build("a")) is first
    cache.get(("r", "b"), lambda: build("b"))
    cache.get(("r", "c"), lambda: build("c"))  # "a" is the oldest: it goes
    cache.get(("r", "a"), lambda: build("a"))
    assert built == ["a", "b", "c", "a"] and len(cache) == 2


def test_a_key_that_cannot_be_hashed_is_built_every_time() -> None:
    cache = ReportCache()
    reports = [cache.get(("r", ["unhashable"]), lambda: Report(revision="a")) for _ in range(2)]
    assert reports[0] is not reports[1] and len(cache) == 0


def test_pull_requests_on_one_base_gate_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = WorkRepo(tmp_path / NAME)
    base = repo.commit({".ichor.yaml": CONFIG, f"{WEB}/a.yaml": configmap("a")}, "base")
    heads = [repo.commit({f"{WEB}/{n}.yaml": configmap(n)}, n) for n in ("b", "c")]
    gated: list[str] = []

    def counted(snapshot: Any, *args: Any, **kwargs: Any) -> Report:
        gated.append(snapshot.revision)
        return gate(snapshot, *args, **kwargs)

    monkeypatch.setattr("bot.checks.pipeline.run_gate", counted)

    @contextlib.contextmanager
    def open_tree(handle: RepoRef) -> Iterator[TreeSource]:
        with local_tree(str(repo.path)) as tree:
            yield tree

    services = CheckServices(
        RecordingForge(tmp_path / "data"),
        open_tree,
        registries=RegistryCache(),
        reports=ReportCache(),
        line_comments=False,
    )
    results = [
        run_check(
            pull_request(
                HANDLE,
                head,
                MergeBase(base, "main"),
                number,
                forge=ForgeKind.GITHUB,
                external_id=f"d{number}",
                pull_head_ref=lambda n: f"refs/pull/{n}/head",
            ),
            services,
        )
        for number, head in enumerate(heads, start=7)
    ]
    assert [r.conclusion for r in results] == ["success", "success"]
    # The second pull request is on the base the first one gated: only its head is gated.
    assert sorted(gated) == sorted([heads[0], base, heads[1]])
