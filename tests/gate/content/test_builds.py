"""The kustomization graph the fixes read: inputs, orphans, and what a render frees."""

from __future__ import annotations

import time

from bot.gate.content import builds as builds_module
from bot.gate.content.builds import Builds
from bot.gate.content.kustomize import KustomizationFacts, kustomization_facts


def _builds(kustomizations: dict[str, object], files: list[str], target: str = "t") -> Builds:
    directives = {path: kustomization_facts(doc) for path, doc in kustomizations.items()}
    return Builds(target, directives, [*files, *kustomizations])


def test_inputs_name_the_field_that_reads_them() -> None:
    builds = _builds(
        {
            "t/app/kustomization.yaml": {
                "resources": ["cm.yaml"],
                "configMapGenerator": [
                    {"name": "a", "files": ["k=conf/a.toml"], "envs": ["a.env"]}
                ],
                "configurations": ["kustomizeconfig.yaml"],
            }
        },
        ["t/app/cm.yaml", "t/app/conf/a.toml", "t/app/a.env", "t/app/kustomizeconfig.yaml"],
    )
    app = "t/app/kustomization.yaml"
    assert builds.input_of("t/app/conf/a.toml") == (app, "configMapGenerator")
    assert builds.input_of("t/app/a.env") == (app, "configMapGenerator")
    assert builds.input_of("t/app/kustomizeconfig.yaml") == (app, "configurations")
    assert builds.input_of("t/app/cm.yaml") is None  # a resource is built, not read as input


def test_an_orphan_is_unlisted_in_a_folder_with_a_kustomization() -> None:
    builds = _builds(
        {"t/a/kustomization.yaml": {"resources": ["x.yaml", "sub"]}},
        ["t/a/x.yaml", "t/a/old.yaml", "t/a/sub/y.yaml", "t/b/z.yaml"],
    )
    assert builds.is_built("t/a/x.yaml") and not builds.is_orphan("t/a/x.yaml")
    assert builds.is_orphan("t/a/old.yaml")
    # sub/ has no kustomization of its own (kustomize refuses it; Flux may build it directly).
    assert not builds.is_orphan("t/a/sub/y.yaml")
    assert not builds.is_orphan("t/b/z.yaml")


def test_a_render_frees_only_what_nothing_else_reads() -> None:
    builds = _builds(
        {
            "t/web/kustomization.yaml": {
                "namePrefix": "w-",
                "resources": ["cm.yaml", "../shared", "../own", "../loose.yaml"],
                "helmCharts": [{"name": "c", "valuesFile": "values.yaml"}],
            },
            "t/shared/kustomization.yaml": {"resources": ["s.yaml"]},
            "t/own/kustomization.yaml": {"resources": ["o.yaml"]},
            "t/tools/kustomization.yaml": {"resources": ["../shared"]},
        },
        [
            "t/web/cm.yaml",
            "t/web/values.yaml",
            "t/web/rendered.yaml",
            "t/shared/s.yaml",
            "t/own/o.yaml",
            "t/loose.yaml",
        ],
    )
    plan = builds.render_plan("t/web/kustomization.yaml")
    assert plan.output == "t/web/rendered-2.yaml"  # never over a file of the tree
    assert plan.helm and plan.loose  # a Helm chart; ../loose.yaml is outside the folder
    # shared/ is listed by tools/ too; loose.yaml is under no kustomization (Flux may list it).
    assert plan.frees == (
        "t/own/kustomization.yaml",
        "t/own/o.yaml",
        "t/web/cm.yaml",
        "t/web/values.yaml",
    )
    assert builds.render_plan("t/web/kustomization.yaml") is plan  # computed once


def test_renders_share_a_budget_so_a_deep_chain_stays_linear() -> None:
    depth = 3000
    chain = {
        f"t/k{i}/kustomization.yaml": KustomizationFacts(
            None, (f"../k{i + 1}", "cm.yaml"), (), ("namePrefix",)
        )
        for i in range(depth)
    }
    files = [f"t/k{i}/cm.yaml" for i in range(depth)]
    builds = Builds("t", chain, [*files, *chain])
    start = time.perf_counter()
    plans = [builds.render_plan(path) for path in chain]
    assert time.perf_counter() - start < 5  # quadratic would be ~4.5M edge visits per walk
    assert plans[0].frees is not None and len(plans[0].frees) == 2 * depth - 1
    assert any(p.frees is None for p in plans)  # the budget ran out: said in words instead
    assert depth * depth > builds_module.MAX_RENDER_WALK


def test_deep_folders_are_walked_without_recursion() -> None:
    deep = "t/" + "/".join(f"d{i}" for i in range(5000))
    builds = _builds(
        {"t/kustomization.yaml": {"namePrefix": "p-", "resources": [f"{deep[2:]}/cm.yaml"]}},
        [f"{deep}/cm.yaml"],
    )
    assert builds.render_plan("t/kustomization.yaml").frees == (f"{deep}/cm.yaml",)
