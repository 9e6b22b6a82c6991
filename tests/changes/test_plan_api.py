"""The change API's verbs in the plan: ``update`` (allowed fields only, no decision) and the
strict ``create`` (a new file at ``approval.newFilePath/<name>.yaml``)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.changes.plan import (
    CreateChange,
    ObjectChange,
    Planned,
    Refused,
    plan_create,
    plan_object,
)
from bot.config.schema import IchorConfig, parse_config
from bot.gate.report import Report
from bot.gate.run import run_gate
from bot.git.snapshot import Snapshot
from bot.yaml.documents import parse_yaml
from tests.changes.test_plan import MACHINE, MACHINE_PATH

CONFIG = b"""version: 1
targets:
  - name: prod
    path: clusters/prod
    mode: strict
    approval:
      kind: TalosMachine
      field: spec.approvalState
      reasonField: spec.approvalDecision
      fields: [spec.role, spec.hostname]
      newFilePath: clusters/prod/machines
  - name: lab
    path: clusters/lab
    approval: {kind: TalosMachine, field: spec.approvalState, newFilePath: clusters/lab/new}
"""


def machine(name: str, **spec: str) -> dict[str, Any]:
    return {
        "apiVersion": "talos.dev/v1",
        "kind": "TalosMachine",
        "metadata": {"name": name},
        "spec": {"approvalState": "approved", **spec},
    }


def setup(extra: dict[str, bytes] | None = None) -> tuple[IchorConfig, Report, dict[str, bytes]]:
    files = {".ichor.yaml": CONFIG, MACHINE_PATH: MACHINE, **(extra or {})}
    result = parse_config(CONFIG)
    assert result.config is not None, result.issues
    return result.config, run_gate(Snapshot.from_files(files), result.config.gate_policy()), files


def test_update_sets_only_the_named_fields() -> None:
    config, report, files = setup()
    change = ObjectChange("update", None, "node-1", "maria", fields=(("role", "cp"),))
    got = plan_object(change, config, report, files.get)
    assert isinstance(got, Planned), got
    assert got.branch == "ichor/update-_cluster-node-1-c8d6c944"
    assert got.title == "ichor: update TalosMachine _/node-1"
    edited = got.changes[MACHINE_PATH]
    assert edited == MACHINE.replace(b"role: worker", b"role: cp")  # no state, no decision
    assert got.impact is not None
    assert [(f.path, f.before, f.after) for f in got.impact.fields] == [
        ("spec.role", "worker", "cp")
    ]
    assert "Sets spec.role" in got.summary


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (ObjectChange("update", None, "node-1", "maria"), "names no field"),
        (
            ObjectChange("update", None, "node-1", "maria", fields=(("spec.image", "x"),)),
            "approval.fields",
        ),
        (
            ObjectChange(
                "update",
                None,
                "node-1",
                "maria",
                kind="ConfigMap",
                target="prod",
                fields=(("a", "b"),),
            ),
            "approves TalosMachine, not ConfigMap",
        ),
    ],
)
def test_update_refusals(change: ObjectChange, why: str) -> None:
    config, report, files = setup()
    got = plan_object(change, config, report, files.get)
    assert isinstance(got, Refused) and why in got.reason, got


def test_approve_with_the_kind_named_finds_the_same_object() -> None:
    config, report, files = setup()
    for kind in ("TalosMachine", "TalosMachine.talos.dev"):
        change = ObjectChange("approve", None, "node-1", "maria", kind=kind)
        got = plan_object(change, config, report, files.get)
        assert isinstance(got, Planned) and MACHINE_PATH in got.changes, (kind, got)


def test_create_writes_a_new_file_in_the_strict_target() -> None:
    config, report, files = setup()
    change = CreateChange(machine("node-2", role="worker"), "maria")
    got = plan_create(change, config, report, files.get)
    assert isinstance(got, Planned), got
    assert got.target.name == "prod"
    assert got.branch == "ichor/create-_cluster-node-2-53986159"
    assert got.marker == ("create", "prod", ("talos.dev", "TalosMachine", "", "node-2"))
    assert got.title == "ichor: create TalosMachine _/node-2"
    data = got.changes["clusters/prod/machines/node-2.yaml"]
    assert data is not None
    assert parse_yaml(data).documents[0].value == machine("node-2", role="worker")
    assert data.startswith(b"apiVersion: talos.dev/v1\nkind: TalosMachine\n")
    assert got.impact is not None and got.impact.objects == ("TalosMachine.talos.dev _/node-2",)


def test_create_of_a_namespaced_object_names_the_namespace_in_the_branch() -> None:
    config, report, files = setup()
    document = machine("node-3")
    document["metadata"]["namespace"] = "racks"
    got = plan_create(CreateChange(document, "maria"), config, report, files.get)
    assert isinstance(got, Planned), got
    assert got.branch == "ichor/create-racks-node-3-d20d5400"
    assert list(got.changes) == ["clusters/prod/machines/node-3.yaml"]


@pytest.mark.parametrize(
    ("document", "target", "extra", "why"),
    [
        (machine("node-1"), None, {}, "already managed"),
        (
            machine("node-2"),
            None,
            {"clusters/prod/machines/node-2.yaml": b"# x\n"},
            "already exists",
        ),
        (machine("node-2"), "lab", {}, "strict target"),  # lab is relaxed
        (machine("node-2"), "nope", {}, "no target 'nope'"),
        (
            {**machine("n"), "kind": "ConfigMap", "apiVersion": "v1"},
            None,
            {},
            "create of ConfigMap",
        ),
        (machine("a/b"), None, {}, "cannot name a file"),
        (machine(".."), None, {}, "cannot name a file"),
    ],
)
def test_create_refusals(
    document: dict[str, Any], target: str | None, extra: dict[str, bytes], why: str
) -> None:
    config, report, files = setup(extra)
    got = plan_create(CreateChange(document, "maria", target), config, report, files.get)
    assert isinstance(got, Refused) and why in got.reason, got
