"""What ``types --suggest`` reads from a snapshot, and the fix that names the command."""

from __future__ import annotations

import pytest

from bot.gate.fixes import suggest_capabilities_command
from bot.gate.policy import TargetPolicy
from bot.gate.suggest import repository_crds, suggest_for_target, suggestion_input
from bot.registry.catalog import EMPTY_CATALOG
from tests.support.memory_tree import MemoryTree

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
"""
WIDGET = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: n}\n"
RELEASE = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: r, namespace: n}
spec:
  chart: {spec: {chart: c, valuesFiles: [values.yaml]}}
"""
# A values file is build context, never applied: its "object" is not a type the target uses.
VALUES = "apiVersion: values.example/v1\nkind: Values\nmetadata: {name: v}\n"
ENCRYPTED = "apiVersion: ENC[AES256_GCM,data:x]\nkind: Secret\nmetadata: {name: s}\nsops: {}\n"


def test_the_input_is_what_the_gate_checks_and_every_crd_in_the_repository() -> None:
    tree = MemoryTree(
        {
            "crds/widgets.yaml": CRD,
            "t/widget.yaml": WIDGET,
            "t/release.yaml": RELEASE,
            "t/values.yaml": VALUES,
            "t/secret.yaml": ENCRYPTED,
            "t/own-crd.yaml": CRD.replace("widgets", "gadgets").replace("Widget", "Gadget"),
            "elsewhere/notes.yaml": "just: text\n",
        }
    )
    with tree.snapshot() as snapshot:
        found = suggestion_input(snapshot, TargetPolicy("t", "t"))
    assert found.used == (
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        ("example.com", "v1", "Widget"),
        ("helm.toolkit.fluxcd.io", "v2", "HelmRelease"),
    )
    assert [c.name for c in found.target_crds] == ["gadgets.example.com"]
    assert [(p, c.name) for p, c in found.repository_crds] == [
        ("crds/widgets.yaml", "widgets.example.com"),
        ("t/own-crd.yaml", "gadgets.example.com"),
    ]
    # Files without the word CustomResourceDefinition are read but never parsed for it.
    assert "elsewhere/notes.yaml" in tree.reads


def test_repository_crds_skip_files_over_the_size_limit() -> None:
    tree = MemoryTree({"big.yaml": CRD + "#" * 100 + "\n", "small.yaml": CRD})
    with tree.snapshot() as snapshot:
        found = repository_crds(snapshot, max_yaml_bytes=len(CRD) + 10)
    assert [p for p, _ in found] == ["small.yaml"]


def test_suggest_for_target_writes_the_repository_crd_entry() -> None:
    tree = MemoryTree({"crds/widgets.yaml": CRD, "t/widget.yaml": WIDGET})
    with tree.snapshot() as snapshot:
        suggestion = suggest_for_target(snapshot, TargetPolicy("t", "t"), catalog=EMPTY_CATALOG)
    (widget,) = suggestion.types
    assert widget.source == "CustomResourceDefinition widgets.example.com at crds/widgets.yaml"
    assert suggestion.text.startswith("# The capabilities file of the target t,")


@pytest.mark.parametrize(
    ("path", "capabilities", "command"),
    [
        (
            "clusters/prod",
            None,
            "ichor-bot types --suggest --path clusters/prod "
            "--output clusters/prod.capabilities.txt",
        ),
        (
            "clusters/prod",
            "caps/prod.txt",
            "ichor-bot types --suggest --path clusters/prod --capabilities caps/prod.txt "
            "--output caps/prod.txt",
        ),
        ("", None, "ichor-bot types --suggest --path ."),
        ("a b", None, "ichor-bot types --suggest --path 'a b' --output 'a b.capabilities.txt'"),
        ("-x", None, "ichor-bot types --suggest --path=-x --output ./-x.capabilities.txt"),
    ],
)  # fmt: skip
def test_the_command_the_fix_prints(path: str, capabilities: str | None, command: str) -> None:
    assert suggest_capabilities_command(path, capabilities) == command
