"""Effective namespaces through the kustomization graph; patches and values files as context."""

from __future__ import annotations

from tests.conftest import MakeRepo, RunCli

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n"


def identities(report: dict) -> dict[str, str]:  # type: ignore[type-arg]
    return {i["path"]: i["message"] for i in report["targets"][0]["issues"]}


def test_outermost_namespace_wins(make_repo: MakeRepo, run_cli: RunCli) -> None:
    # Two copies of one ConfigMap: their namespaces come from different kustomizations, so they
    # differ (no duplicate) unless the outer kustomization's namespace reaches both.
    files = {
        "t/kustomization.yaml": "namespace: outer\nresources: [a, b]\n",
        "t/a/kustomization.yaml": "namespace: inner-a\nresources: [cm.yaml]\n",
        "t/a/cm.yaml": CM.format(name="same"),
        "t/b/kustomization.yaml": "namespace: inner-b\nresources: [cm.yaml]\n",
        "t/b/cm.yaml": CM.format(name="same"),
    }
    result = run_cli("check", str(make_repo(files)), "--rev", "HEAD", "--format", "json")
    assert identities(result.json()) == {
        "t/b/cm.yaml": "ConfigMap outer/same is already defined at t/a/cm.yaml:1"
    }
    del files["t/kustomization.yaml"]
    result = run_cli("check", str(make_repo(files)), "--rev", "HEAD", "--format", "json")
    assert result.code == 0


def test_cycles_terminate(make_repo: MakeRepo, run_cli: RunCli) -> None:
    files = {
        "t/a/kustomization.yaml": "namespace: x\nresources: [../b]\n",
        "t/b/kustomization.yaml": "resources: [../a, cm.yaml]\n",
        "t/b/cm.yaml": CM.format(name="c"),
    }
    result = run_cli("check", str(make_repo(files)), "--rev", "HEAD", "--format", "json")
    # The walk ends; kustomize refuses the cycle, and so does the gate (issue 21 item 3).
    assert identities(result.json()) == {
        "t/b/kustomization.yaml": "resource '../a' leads back to t/a/kustomization.yaml, which "
        "includes this kustomization: kustomize refuses a cycle"
    }


def test_argo_value_files_are_context(make_repo: MakeRepo, run_cli: RunCli) -> None:
    files = {
        "t/app.yaml": (
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
            "metadata: {name: a, namespace: argo}\n"
            "spec:\n  source:\n    path: t/chart\n    helm: {valueFiles: [values-prod.yaml]}\n"
        ),
        "t/chart/values-prod.yaml": "replicas: 2\n",
    }
    result = run_cli("check", str(make_repo(files)), "--rev", "HEAD", "--format", "json")
    issues = identities(result.json())
    assert "t/chart/values-prod.yaml" not in issues  # context, not non-krm-yaml
    assert set(issues) == {"t/app.yaml"}  # Application: no CRD in the target, so not followable


def test_a_kustomization_chain_thousands_deep() -> None:
    # Each kustomization includes the next: past Python's recursion limit.
    from bot.gate.content.context import build_context
    from bot.gate.content.kustomize import KustomizationFacts

    depth = 3000
    directives = {
        f"t/k{i}/kustomization.yaml": KustomizationFacts(
            "ns" if i == 0 else None, (f"../k{i + 1}",) if i + 1 < depth else ("cm.yaml",), (), ()
        )
        for i in range(depth)
    }
    leaf = f"t/k{depth - 1}/cm.yaml"
    files = [*directives, leaf]
    context = build_context(directives, {}, files, lambda path: path.startswith("t/"))
    assert context.namespaces[leaf] == "ns"


def test_cycles_and_diamonds_thousands_deep_are_found_without_recursion() -> None:
    from bot.gate.content.context import build_context
    from bot.gate.content.kustomize import KustomizationFacts
    from bot.gate.content.references import ReferenceInput, reference_issues
    from bot.ignore.rules import IgnoreMatcher

    depth = 3000
    directives = {
        f"t/k{i}/kustomization.yaml": KustomizationFacts(
            None, (f"../k{(i + 1) % depth}",), (), (), (1,)
        )
        for i in range(depth)
    }  # one ring: k0 -> k1 -> ... -> k2999 -> k0
    context = build_context(directives, {}, list(directives), lambda path: path.startswith("t/"))
    issues = reference_issues(
        ReferenceInput("t", context, list(directives), list(directives), IgnoreMatcher.empty())
    )
    assert [(i.path, i.line) for i in issues] == [(f"t/k{depth - 1}/kustomization.yaml", 1)]
    assert "kustomize refuses a cycle" in issues[0].message
