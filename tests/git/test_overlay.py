"""The gate reads a change's result before anything is pushed."""

from __future__ import annotations

from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.report import Verdict
from bot.gate.run import run_gate
from bot.git.overlay import overlay
from bot.git.snapshot import Snapshot

CONFIGMAP = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: NAME, namespace: web}\n"
PATH = "clusters/prod/v1/configmaps/web/settings.yaml"
POLICY = GatePolicy((TargetPolicy("prod", "clusters/prod"),))


def test_written_removed_and_kept_entries() -> None:
    base = Snapshot.from_files({PATH: CONFIGMAP.replace(b"NAME", b"settings"), "README.md": b"x"})
    changed = overlay(base, {"README.md": None, "clusters/prod/new.txt": b"hello"})
    assert [e.path for e in changed] == ["clusters/prod/new.txt", PATH]
    assert changed.read_many(list(changed.entries)) == [
        b"hello",
        CONFIGMAP.replace(b"NAME", b"settings"),
    ]
    assert base.get("README.md") is not None  # the base is untouched


def test_the_gate_sees_what_the_change_would_make() -> None:
    base = Snapshot.from_files({PATH: CONFIGMAP.replace(b"NAME", b"settings")})
    assert run_gate(base, POLICY).targets[0].verdict is Verdict.ACCEPTED
    foreign = overlay(base, {"clusters/prod/notes.txt": b"todo\n"})
    assert run_gate(foreign, POLICY).targets[0].verdict is Verdict.REFUSED
