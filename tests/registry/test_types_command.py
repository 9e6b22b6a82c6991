"""``ichor-bot types`` on real git repositories, called through its own parser."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from bot.cli.types_command import add_types_parser, run_types
from bot.errors import IchorError, UsageError
from tests.conftest import FIXTURES, MakeRepo, RunCli

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        scale: {specReplicasPath: .spec.replicas}
"""
WITH_CAPS = "version: 1\ntargets:\n  - {name: t, path: t, capabilities: caps/t.txt}\n"
TABLE = (FIXTURES / "registry" / "api-resources-wide.txt").read_bytes()


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ichor-bot")
    add_types_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["types", *argv])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run_types(parse(*argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def types_of(report: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    (target,) = report["targets"]
    return {(t["group"], t["version"], t["kind"]): t for t in target["types"]}


def test_json_lists_crd_builtins_and_policy(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"t/crds/widget.yaml": CRD, "t/cm.yaml": "kind: x\n: bad: yaml: ["})
    code, out, err = run(capsys, str(repo), "--rev", "HEAD", "--format", "json")
    assert code == 0 and err == ""
    report = json.loads(out)
    assert report["version"] == 1
    assert (report["targets"][0]["name"], report["targets"][0]["path"]) == ("t", "t")
    types = types_of(report)

    widget = types[("example.com", "v1", "Widget")]
    assert widget["verdict"] == "followable" and widget["origin"] == "crd"
    assert widget["resource"] == "widgets" and widget["scope"] == "Namespaced"
    assert widget["checks"][9] == {
        "requirement": "scale",
        "result": "pass",
        "reason": None,
        "detail": ".spec.replicas",
    }
    assert [c["requirement"] for c in widget["checks"]] == [
        "served",
        "trusted",
        "stable",
        "identity",
        "scope",
        "verbs",
        "origin",
        "policy",
        "sensitivity",
        "scale",
    ]

    pod = types[("", "v1", "Pod")]
    assert pod["verdict"] == "refused"
    assert pod["summary"] == "not followable — denied-by-policy"
    assert pod["checks"][7]["result"] == "fail" and pod["checks"][7]["reason"] == "denied-by-policy"

    secret = types[("", "v1", "Secret")]
    assert secret["sensitive"] is True and secret["verdict"] == "followable"
    assert set(widget) == {
        "group",
        "version",
        "kind",
        "resource",
        "scope",
        "origin",
        "verdict",
        "summary",
        "sensitive",
        "checks",
    }


def test_text_output(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({"t/widget.yml": CRD})
    code, out, _ = run(capsys, str(repo), "--rev", "HEAD")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("t (t): 113 types, ")
    assert lines[1].split() == ["TYPE", "RESOURCE", "SCOPE", "ORIGIN", "VERDICT", "SUMMARY"]
    widget = next(line for line in lines if "example.com/v1 Widget" in line)
    assert widget.split()[2:6] == ["widgets", "Namespaced", "crd", "followable"]
    pod = next(line for line in lines if line.split()[:2] == ["v1", "Pod"])
    assert pod.endswith("refused     not followable — denied-by-policy  [check: policy]")
    secret = next(line for line in lines if line.split()[:2] == ["v1", "Secret"])
    assert "(sensitive: stored SOPS-encrypted)" in secret


def test_capabilities_file_joins_the_registry(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"t/widget.yaml": CRD, "caps/t.txt": TABLE}, config=WITH_CAPS)
    code, out, _ = run(capsys, str(repo), "--rev", "HEAD", "--format", "json")
    assert code == 0
    types = types_of(json.loads(out))
    metrics = types[("metrics.k8s.io", "v1beta1", "PodMetrics")]
    assert metrics["summary"] == "not followable — missing-verb: watch"
    assert metrics["origin"] == "capabilities"
    assert types[("helm.toolkit.fluxcd.io", "v2", "HelmRelease")]["verdict"] == "followable"


def test_missing_capabilities_file_is_an_error(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"t/widget.yaml": CRD}, config=WITH_CAPS)
    with pytest.raises(IchorError, match=r"the capabilities file caps/t\.txt is missing"):
        run(capsys, str(repo), "--rev", "HEAD")


def test_unparseable_capabilities_file_names_the_file_and_line(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"t/a.yaml": CRD, "caps/t.txt": "NAME KIND\nx\n"}, config=WITH_CAPS)
    expected = (
        r"^the capabilities file caps/t\.txt cannot be read: kubectl api-resources table: line 1: "
    )
    with pytest.raises(IchorError, match=expected):
        run(capsys, str(repo), "--rev", "HEAD")


def test_config_issues_are_printed_and_exit_2(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo({"t/a.yaml": CRD}, config="version: 1\ntargets: [{name: t, path: ../t}]\n")
    with pytest.raises(UsageError, match="has 1 error; fix it first"):
        run_types(parse(str(repo), "--rev", "HEAD"))
    assert "invalid-path" in capsys.readouterr().err


def test_without_config_needs_path(make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo({"deploy/widget.yaml": CRD}, config=None)
    with pytest.raises(UsageError, match="--path"):
        run(capsys, str(repo), "--rev", "HEAD")
    code, out, _ = run(capsys, str(repo), "--rev", "HEAD", "--path", "deploy")
    assert code == 0
    assert out.startswith("deploy (deploy): 113 types")


def test_directory_mode_and_crd_warnings(
    make_repo: MakeRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = CRD.replace("name: widgets.example.com", "name: gadgets.example.com")
    repo = make_repo({"t/widget.yaml": broken})
    code, out, err = run(capsys, str(repo), "--format", "json")
    assert code == 0
    assert "t/widget.yaml: CustomResourceDefinition metadata.name 'gadgets.example.com'" in err
    assert '"kind": "Widget"' not in out


def test_bad_path_is_a_usage_error(make_repo: MakeRepo) -> None:
    repo = make_repo({"t/a.yaml": CRD})
    with pytest.raises(UsageError, match=r"--path '\.\./x'"):
        run_types(parse(str(repo), "--path", "../x"))


def test_capabilities_file_for_an_adhoc_target(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
    caps = str(FIXTURES / "registry" / "api-resources-wide.txt")
    result = run_cli("types", str(repo), "--path", "t", "--capabilities", caps, "--format", "json")
    assert result.code == 0, result.err
    kinds = {(t["group"], t["kind"]): t["verdict"] for t in result.json()["targets"][0]["types"]}
    assert kinds[("helm.toolkit.fluxcd.io", "HelmRelease")] == "followable"
    assert run_cli("types", str(repo), "--capabilities", caps).code == 2  # needs --path


def test_adhoc_path_must_name_a_directory(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"})
    assert "names nothing" in run_cli("types", str(repo), "--path", "nope").err
    assert "is a file" in run_cli("types", str(repo), "--path", "t/a.yaml").err
