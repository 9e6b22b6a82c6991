"""What a change request writes: located by identity at the base, only the allowed fields."""

from __future__ import annotations

import pytest

from bot.changes.plan import (
    IgnoreChange,
    ObjectChange,
    Planned,
    Refused,
    plan_ignore,
    plan_object,
)
from bot.config.schema import IchorConfig, parse_config
from bot.gate.report import Report
from bot.gate.run import run_gate
from bot.git.snapshot import Snapshot

CONFIG = b"""version: 1
targets:
  - name: prod
    path: clusters/prod
    mode: strict
    approval:
      kind: TalosMachine
      field: spec.approvalState
      reasonField: spec.approvalDecision
      fields: [spec.role]
  - {name: staging, path: clusters/staging}
"""
MACHINE = b"""# node one, racked in row 3
apiVersion: talos.dev/v1
kind: TalosMachine
metadata:
  name: node-1  # the first
spec:
  approvalState: pending
  role: worker
"""
MACHINE_PATH = "clusters/prod/talos.dev/v1/talosmachines/node-1.yaml"
CM = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: web}\n"


def setup() -> tuple[IchorConfig, Report, dict[str, bytes]]:
    files = {
        ".ichor.yaml": CONFIG,
        MACHINE_PATH: MACHINE,
        "clusters/prod/v1/configmaps/web/settings.yaml": CM,
        "clusters/staging/v1/configmaps/web/settings.yaml": CM,
    }
    result = parse_config(CONFIG)
    assert result.config is not None, result.issues
    report = run_gate(Snapshot.from_files(files), result.config.gate_policy())
    return result.config, report, files


def test_approve_sets_the_state_the_reason_and_allowed_fields_only() -> None:
    config, report, files = setup()
    change = ObjectChange("approve", None, "node-1", "maria", fields=(("spec.role", "cp"),))
    got = plan_object(change, config, report, files.get)
    assert isinstance(got, Planned), got
    assert got.branch == "ichor/approve-_cluster-node-1-c8d6c944"
    assert got.marker == ("approve", "prod", ("talos.dev", "TalosMachine", "", "node-1"))
    assert got.title == "ichor: approve TalosMachine _/node-1"
    edited = got.changes[MACHINE_PATH]
    assert edited is not None
    assert b"approvalState: approved" in edited and b"role: cp" in edited
    assert b"approvalDecision: approved by maria" in edited
    assert edited.startswith(b"# node one, racked in row 3\n")  # comments kept
    assert b"name: node-1  # the first" in edited
    assert got.impact is not None
    assert [(f.path, f.before, f.after) for f in got.impact.fields] == [
        ("spec.approvalState", "pending", "approved"),
        ("spec.role", "worker", "cp"),
        ("spec.approvalDecision", None, "approved by maria"),
    ]


def test_a_field_not_allowed_is_refused() -> None:
    config, report, files = setup()
    change = ObjectChange("approve", None, "node-1", "maria", fields=(("spec.image", "x"),))
    got = plan_object(change, config, report, files.get)
    assert isinstance(got, Refused) and "approval.fields" in got.reason


def test_reject_writes_the_reason() -> None:
    config, report, files = setup()
    got = plan_object(
        ObjectChange("reject", None, "node-1", "maria", reason="wrong rack"),
        config,
        report,
        files.get,
    )
    assert isinstance(got, Planned)
    edited = got.changes[MACHINE_PATH] or b""
    assert b"approvalState: rejected" in edited and b"approvalDecision: wrong rack" in edited


def test_delete_removes_the_file_when_nothing_is_left() -> None:
    config, report, files = setup()
    change = ObjectChange("delete", "web", "settings", "maria", kind="ConfigMap", target="prod")
    got = plan_object(change, config, report, files.get)
    assert isinstance(got, Planned)
    assert got.changes == {"clusters/prod/v1/configmaps/web/settings.yaml": None}
    ambiguous = plan_object(
        ObjectChange("delete", "web", "settings", "maria", kind="ConfigMap"),
        config,
        report,
        files.get,
    )
    assert isinstance(ambiguous, Refused) and "prod, staging" in ambiguous.reason


@pytest.mark.parametrize(
    ("pattern", "target", "why"),
    [
        ("*", "prod", "every file"),
        ("v1/", "prod", "shadow"),
        ("notes.txt", None, "several targets"),
        ("notes.txt", "nope", "no target"),
    ],
)
def test_ignore_refusals(pattern: str, target: str | None, why: str) -> None:
    config, report, files = setup()
    got = plan_ignore(IgnoreChange(pattern, "maria", target, 7), config, report, files.get)
    assert isinstance(got, Refused) and why in got.reason, got


def test_ignore_creates_the_file_from_the_bootstrap_template() -> None:
    config, report, files = setup()
    got = plan_ignore(IgnoreChange("notes.txt", "maria", "prod", 7), config, report, files.get)
    assert isinstance(got, Planned)
    assert got.branch == "ichor/ignore-prod-pr7"
    text = (got.changes["clusters/prod/.gittargetignore"] or b"").decode()
    assert text.startswith("# .gittargetignore") and text.endswith("\n/notes.txt\n")
    assert got.marker is None  # the branch names the target and the pull request alone


def test_two_objects_never_get_one_branch() -> None:
    """``ichor/<verb>-<namespace>-<name>`` alone joins parts that hold ``-`` themselves and
    leaves the kind out: these pairs were each given one branch."""
    config = parse_config(b"version: 1\ntargets:\n  - {name: prod, path: clusters/prod}\n").config
    assert config is not None
    files = {
        "clusters/prod/v1/configmaps/web-a/b.yaml": b"apiVersion: v1\nkind: ConfigMap\n"
        b"metadata: {name: b, namespace: web-a}\n",
        "clusters/prod/v1/configmaps/web/a-b.yaml": b"apiVersion: v1\nkind: ConfigMap\n"
        b"metadata: {name: a-b, namespace: web}\n",
        "clusters/prod/apps/v1/deployments/web/frontend.yaml": b"apiVersion: apps/v1\n"
        b"kind: Deployment\nmetadata: {name: frontend, namespace: web}\n",
        "clusters/prod/v1/services/web/frontend.yaml": b"apiVersion: v1\nkind: Service\n"
        b"metadata: {name: frontend, namespace: web}\n",
    }
    report = run_gate(Snapshot.from_files(files), config.gate_policy())

    def branch(kind: str, namespace: str, name: str) -> str:
        got = plan_object(
            ObjectChange("delete", namespace, name, "maria", kind=kind), config, report, files.get
        )
        assert isinstance(got, Planned), got
        return got.branch

    assert branch("ConfigMap", "web-a", "b") != branch("ConfigMap", "web", "a-b")
    assert branch("Deployment", "web", "frontend") != branch("Service", "web", "frontend")
    # One object, named with or without its group: one branch.
    assert branch("Deployment", "web", "frontend") == branch("Deployment.apps", "web", "frontend")


def test_one_identity_in_two_targets_gets_a_branch_each() -> None:
    """``/approve web/settings in prod`` and ``... in staging`` are two changes of two files:
    one branch would answer the second with the first one's pull request."""
    config = parse_config(
        b"version: 1\ntargets:\n  - {name: prod, path: clusters/prod}\n"
        b"  - {name: staging, path: clusters/staging}\n"
    ).config
    assert config is not None
    files = {f"clusters/{t}/v1/configmaps/web/settings.yaml": CM for t in ("prod", "staging")}
    report = run_gate(Snapshot.from_files(files), config.gate_policy())

    def planned(target: str) -> Planned:
        change = ObjectChange("delete", "web", "settings", "maria", kind="ConfigMap", target=target)
        got = plan_object(change, config, report, files.get)
        assert isinstance(got, Planned), got
        return got

    prod, staging = planned("prod"), planned("staging")
    assert prod.branch != staging.branch
    assert prod.marker != staging.marker
