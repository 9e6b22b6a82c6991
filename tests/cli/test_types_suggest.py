"""``ichor-bot types --suggest``: the capabilities file that turns not-served types followable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import MakeRepo, RunCli

WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Cluster
  versions:
    - {name: v1, served: true, storage: true}
"""
FILES = {
    # The CRD lives outside the target, where the gate does not read it.
    "crds/widgets.yaml": WIDGET_CRD,
    "t/release.yaml": (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: podinfo, namespace: apps}\n"
    ),
    "t/widget.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
    "t/thing.yaml": (
        "apiVersion: nowhere.example/v1\nkind: Thing\nmetadata: {name: x, namespace: apps}\n"
    ),
    "t/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: apps}\n",
}


def not_followable(run_cli: RunCli, repo: Path, *args: str) -> dict[str, str]:
    result = run_cli("check", str(repo), "--path", "t", *args, "--format", "json")
    assert result.err == "", result.err
    (target,) = result.json()["targets"]
    issues: list[dict[str, Any]] = target["issues"]
    return {i["path"]: i["message"] for i in issues if i["kind"] == "not-followable"}


def test_the_suggested_file_makes_every_known_type_followable(
    make_repo: MakeRepo, run_cli: RunCli, tmp_path: Path
) -> None:
    repo = make_repo(FILES, config=None)
    before = not_followable(run_cli, repo)
    assert sorted(before) == ["t/release.yaml", "t/thing.yaml", "t/widget.yaml"]
    # Each type's fix names the one command that writes the file.
    text = run_cli("check", str(repo), "--path", "t").out
    assert text.count("ichor-bot types --suggest --path t --output t.capabilities.txt\n") == 3

    caps = tmp_path / "t.capabilities.txt"
    result = run_cli("types", str(repo), "--suggest", "--path", "t", "--output", str(caps))
    assert (result.code, result.out) == (0, "")
    assert result.err.splitlines() == [
        f"ichor-bot: 3 type(s) need an entry: 2 written to {caps}, 1 not found",
        "ichor-bot: warning: not found: nowhere.example/v1 Thing",
    ]
    text = caps.read_text(encoding="utf-8")
    assert "# from CustomResourceDefinition widgets.example.com at crds/widgets.yaml\n" in text
    assert "# from catalog: fluxcd/helm-controller@" in text
    assert "#   nowhere.example/v1 Thing\n" in text

    # With the file, only the type nothing knows is still refused.
    after = not_followable(run_cli, repo, "--capabilities", str(caps))
    assert list(after) == ["t/thing.yaml"]
    assert "not-served" in after["t/thing.yaml"]


def test_without_output_the_file_goes_to_standard_output(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    repo = make_repo(FILES, config=None)
    result = run_cli("types", str(repo), "--rev", "HEAD", "--suggest", "--path", "t")
    assert result.code == 0
    assert result.out.startswith("# The capabilities file of the target t,")
    assert "helmreleases" in result.out and "widgets" in result.out


def test_the_current_file_is_read_first_and_may_be_overwritten(
    make_repo: MakeRepo, run_cli: RunCli, tmp_path: Path
) -> None:
    repo = make_repo(FILES, config=None)
    caps = tmp_path / "caps.txt"
    # A recording of the cluster that knows Thing: it is kept, the rest added beside it.
    caps.write_text(
        "NAME     SHORTNAMES   APIVERSION             NAMESPACED   KIND    VERBS\n"
        "things                nowhere.example/v1     true         Thing   get,list,watch\n",
        encoding="utf-8",
    )
    args = ["--suggest", "--path", "t", "--capabilities", str(caps), "--output", str(caps)]
    result = run_cli("types", str(repo), *args)
    assert result.code == 0, result.err
    assert result.err.splitlines() == [
        f"ichor-bot: 3 type(s) need an entry: 3 written to {caps}, 0 not found"
    ]
    text = caps.read_text(encoding="utf-8")
    assert f"# from {caps} (given with --capabilities)\nthings " in text
    assert not_followable(run_cli, repo, "--capabilities", str(caps)) == {}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--suggest"], "name the target with --path TARGET"),
        (["--output", "x.txt"], "--output needs --suggest"),
        (["--suggest", "--path", "t", "--format", "json"], "drop --format"),
        (["--suggest", "--path", "nope"], "--path nope names nothing"),
    ],
)
def test_usage_errors(make_repo: MakeRepo, run_cli: RunCli, args: list[str], message: str) -> None:
    repo = make_repo(FILES)
    result = run_cli("types", str(repo), *args)
    assert result.code == 2
    assert message in result.err


@pytest.mark.parametrize("where", ["missing/x.txt", "."])
def test_an_unwritable_output_is_a_usage_error(
    make_repo: MakeRepo, run_cli: RunCli, tmp_path: Path, where: str
) -> None:
    repo = make_repo(FILES, config=None)
    output = str(tmp_path / where)
    result = run_cli("types", str(repo), "--suggest", "--path", "t", "--output", output)
    assert result.code == 2
    assert result.err.startswith(f"ichor-bot: error: --output {output}: ")
