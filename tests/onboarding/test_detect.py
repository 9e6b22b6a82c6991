"""Target detection: the folders onboarding proposes, pinned on hand-made trees and edge cases."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.cli.demo import DEMO_GITLINKS, DEMO_SYMLINKS, read_tree
from bot.config.schema import TARGET_NAME_PATTERN
from bot.git.snapshot import Entry, Snapshot
from bot.onboarding import detect, folders
from bot.onboarding.detect import Candidate, detect_targets
from bot.onboarding.folders import count_documents
from bot.onboarding.names import name_for, target_names
from bot.paths import is_within
from tests.conftest import FIXTURES

MIXED = FIXTURES / "onboarding" / "mixed" / "tree"
MANY = FIXTURES / "onboarding" / "many" / "tree"


def objects(*names: str, namespace: str = "default") -> bytes:
    return "---\n".join(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {n}\n  namespace: {namespace}\n"
        for n in names
    ).encode()


THREE = objects("a", "b", "c")


def paths(candidates: Sequence[Candidate]) -> list[str]:
    return [c.path for c in candidates]


def assert_no_overlap(candidates: Sequence[Candidate]) -> None:
    for i, a in enumerate(candidates):
        for b in candidates[i + 1 :]:
            assert not is_within(a.path, b.path) and not is_within(b.path, a.path), (a, b)


def assert_valid_names(candidates: Sequence[Candidate]) -> None:
    names = [c.name for c in candidates]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(TARGET_NAME_PATTERN, n) for n in names), names


def detect_tree(tree: Path, **kwargs: int) -> tuple[Candidate, ...]:
    snapshot = Snapshot.from_files(read_tree(tree))
    found = detect_targets(snapshot, **kwargs)
    assert_no_overlap(found)
    assert_valid_names(found)
    return found


def test_the_mixed_tree_is_pinned() -> None:
    assert detect_tree(MIXED) == (
        Candidate("legacy-apps", "Legacy Apps", 3, 3, False),
        # `team-a` keeps the name it already is; `Team.A` gets the suffix.
        Candidate("team-a-2", "Team.A", 3, 3, False),
        # clusters holds two environments (prod and staging), each a target of its own;
        # clusters/prod/apps qualifies too, but clusters/prod is above it.
        Candidate("clusters-prod", "clusters/prod", 4, 4, True),
        Candidate("clusters-staging", "clusters/staging", 3, 3, True),
        # platform/base alone would leave platform/extra.yaml's objects unguarded.
        Candidate("platform", "platform", 5, 6, False),
        Candidate("team-a", "team-a", 3, 3, False),
    )


def test_helm_charts_are_never_proposed() -> None:
    found = paths(detect_tree(MIXED))
    assert not any(is_within(p, "charts") for p in found)
    # The chart's templates are plain objects: alone, they would qualify.
    chart = {
        "web/Chart.yaml": b"apiVersion: v2\nname: web\nversion: 0.1.0\n",
        "web/templates/objects.yaml": THREE,
    }
    assert detect_targets(Snapshot.from_files(chart)) == ()
    assert detect_targets(Snapshot.from_files({"Chart.yaml": b"name: x\n", "a.yaml": THREE})) == ()
    # values.yaml beside templates/ looks like a chart without its Chart.yaml.
    lib = {"lib/values.yaml": b"a: 1\n", "lib/templates/objects.yaml": THREE}
    assert detect_targets(Snapshot.from_files(lib)) == ()
    # A folder holding a chart is not proposed; what qualifies beside the chart is.
    beside = {**{f"k8s/{p}": d for p, d in chart.items()}, "k8s/apps/objects.yaml": THREE}
    assert paths(detect_targets(Snapshot.from_files(beside))) == ["k8s/apps"]


def test_other_yaml_hidden_folders_and_few_objects_are_not_proposed() -> None:
    found = paths(detect_tree(MIXED))
    for never in (".github", ".archive", "compose", "mostly-config", "small"):
        assert not any(is_within(p, never) for p in found), never


def test_the_cap_keeps_kustomization_folders_then_the_most_objects() -> None:
    found = detect_tree(MANY)
    assert len(found) == detect.MAX_TARGETS == 20
    expected = [f"apps/app-{i:02d}" for i in (*range(1, 20), 22)]
    assert paths(found) == expected  # app-22 holds 4 objects; app-20 and app-21 are cut
    assert [c.has_kustomization for c in found[:6]] == [True] * 5 + [False]
    assert paths(detect_tree(MANY, max_targets=3)) == ["apps/app-01", "apps/app-02", "apps/app-03"]
    assert detect_tree(MANY, max_targets=0) == ()


def test_the_demo_repository_is_pinned() -> None:
    files = read_tree(FIXTURES / "demo" / "tree")
    files.pop(".ichor.yaml")  # onboarding is for a repository without one
    snapshot = Snapshot.from_files(files, symlinks=DEMO_SYMLINKS, gitlinks=DEMO_GITLINKS)
    # clusters/prod holds one object and clusters/staging two: too few for a folder to
    # qualify, but they are environments, each a target of its own (as the demo's own
    # .ichor.yaml has them).
    assert detect_targets(snapshot) == (
        Candidate("clusters-prod", "clusters/prod", 1, 1, True),
        Candidate("clusters-staging", "clusters/staging", 2, 2, False),
    )


def test_the_root_only_when_nothing_smaller_qualifies() -> None:
    root = Snapshot.from_files({"objects.yaml": THREE, "README.md": b"hi\n"})
    assert detect_targets(root) == (Candidate("root", "", 3, 3, False),)
    # The root qualifies here too, but a folder below it does.
    both = Snapshot.from_files({"objects.yaml": THREE, "apps/objects.yaml": THREE})
    assert paths(detect_targets(both)) == ["apps"]
    assert detect_targets(Snapshot.from_files({})) == ()


def test_a_qualifying_kustomization_folder_is_kept_whole() -> None:
    files = {
        "prod/kustomization.yaml": b"resources: [apps]\n",
        "prod/apps/kustomization.yaml": b"resources: [objects.yaml]\n",
        "prod/apps/objects.yaml": THREE,
        "prod/more/objects.yaml": objects("d", "e", "f"),
    }
    found = detect_targets(Snapshot.from_files(files))
    assert found == (Candidate("prod", "prod", 6, 6, True),)


def test_the_share_of_objects_is_four_fifths() -> None:
    def found(other_documents: int) -> list[str]:
        other = b"---\n".join(b"x: 1\n" for _ in range(other_documents))
        files = {"apps/objects.yaml": objects("a", "b", "c", "d")}
        if other_documents:
            files["apps/other.yaml"] = other
        return paths(detect_targets(Snapshot.from_files(files)))

    assert found(1) == ["apps"]  # 4 of 5
    assert found(2) == []  # 4 of 6
    assert paths(detect_targets(Snapshot.from_files({"a/x.yaml": objects("a", "b")}))) == []


def test_documents_are_counted_as_the_gate_reads_them() -> None:
    assert count_documents(THREE) == (3, 3)
    assert count_documents(b"") == (0, 0)
    assert count_documents(b"---\n# only a comment\n---\n") == (0, 0)  # empty documents
    assert count_documents(b"- a\n- b\n") == (0, 1)
    assert count_documents(b"apiVersion: v1\nkind: ConfigMap\n") == (0, 1)  # no metadata.name
    assert count_documents(b"apiVersion: v1\nkind: X\nmetadata: {name: ''}\n") == (0, 1)
    assert count_documents(THREE + b"\n---\nkey: [unclosed\n") == (3, 4)  # the broken one
    # Kustomizations and .sops.yaml are not counted: build directives and operator artifacts.
    files = {
        "a/kustomization.yaml": b"resources: []\n",
        "a/.sops.yaml": b"creation_rules: []\n",
        "a/objects.yaml": THREE,
    }
    assert detect_targets(Snapshot.from_files(files)) == (Candidate("a", "a", 3, 3, True),)


def test_names_come_from_the_path() -> None:
    long = "x" * 70
    assert target_names(["clusters/prod", "Clusters/Prod", long, long + "/y", "日本", ""]) == [
        "clusters-prod",
        "clusters-prod-2",
        "x" * 63,
        "x" * 61 + "-2",
        "target",
        "root",
    ]
    assert name_for("--Apps__v2/..x--") == "apps-v2-x"
    assert name_for("a" * 62 + "/b") == "a" * 62  # cut at 63, never ending in '-'
    # A path that is its own name keeps it, even when a path before it sanitizes to it.
    assert target_names(["Team.A", "team-a"]) == ["team-a-2", "team-a"]


def test_paths_that_the_configuration_cannot_name_are_not_proposed() -> None:
    files = {
        "back\\slash/objects.yaml": THREE,
        "caf\udce9/objects.yaml": THREE,  # a name that is not UTF-8
        "ok/objects.yaml": THREE,
    }
    assert paths(detect_targets(Snapshot.from_files(files))) == ["ok"]


def test_reading_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    big = {"big/objects.yaml": THREE}
    assert detect_targets(Snapshot.from_files(big), max_yaml_bytes=len(THREE) - 1) == ()
    files = {f"d{i}/objects.yaml": THREE for i in range(4)}
    monkeypatch.setattr(folders, "MAX_FILES_READ", 2)
    assert paths(detect_targets(Snapshot.from_files(files))) == ["d0", "d1"]
    monkeypatch.setattr(folders, "MAX_FILES_READ", 100)
    monkeypatch.setattr(folders, "MAX_BYTES_READ", len(THREE) * 3)
    assert paths(detect_targets(Snapshot.from_files(files))) == ["d0", "d1", "d2"]


def test_files_are_read_in_batches_and_charts_are_not_read() -> None:
    files = {f"apps/a{i:04d}.yaml": THREE for i in range(1200)}
    files["chart/Chart.yaml"] = b"name: c\n"
    files["chart/templates/x.yaml"] = THREE
    batches: list[list[str]] = []
    base = Snapshot.from_files(files)

    def read_many(entries: Sequence[Entry]) -> list[bytes]:
        batches.append([e.path for e in entries])
        return [e.read() for e in entries]

    snapshot = Snapshot(list(base.entries), revision=None, batch_reader=read_many)
    assert paths(detect_targets(snapshot)) == ["apps"]
    # Counting reads in batches of 500; then the gate looks at the one candidate, in its own.
    assert [len(b) for b in batches[:3]] == [500, 500, 200]
    assert sum(len(b) for b in batches[3:]) == 1200
    assert not any(p.startswith("chart/") for b in batches for p in b)


def test_a_deep_tree_needs_no_recursion() -> None:
    deep = "/".join(f"d{i}" for i in range(3000))
    files = {f"{deep}/objects.yaml": THREE, f"{deep}/kustomization.yaml": b"resources: []\n"}
    # The top-most folder holding every object is proposed, and looking at it as the gate
    # would walks the whole depth.
    (found,) = detect_targets(Snapshot.from_files(files))
    assert (found.path, found.name) == ("d0", "d0")
    # A folder that cannot be proposed (objects named with a substitution variable in a folder
    # just under it) gives way to the qualifying folder beside that one.
    files["d0/x/objects.yaml"] = objects("${APP}-a", "b", "c")
    assert paths(detect_targets(Snapshot.from_files(files))) == ["d0/d1"]
