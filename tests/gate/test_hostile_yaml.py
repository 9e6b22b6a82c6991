"""Hostile YAML in a target gives an issue at that file, and the run goes on."""

from __future__ import annotations

import time

from tests.conftest import MakeRepo, RunCli

GOOD = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good, namespace: web}\n"


def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        prev, cur = chr(ord("a") + level - 1), chr(ord("a") + level)
        lines.append(f"{cur}: &{cur} [" + ",".join(f"*{prev}" for _ in range(9)) + "]")
    return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  " + "\n  ".join(lines)


HOSTILE: dict[str, bytes] = {
    "t/laughs.yaml": billion_laughs().encode(),
    "t/deep-seq.yaml": b"[" * 20_000 + b"]" * 20_000,
    "t/deep-map.yaml": b"{a: " * 20_000 + b"1" + b"}" * 20_000,
    "t/big.yaml": b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n"
    + b"".join(b"  k%07d: v\n" % i for i in range(5 * 1024 * 1024 // 12)),
    "t/latin1.yaml": b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n",
    "t/nul.yaml": b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\x00b}\n",
    "t/tabs.yaml": b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: tabbed\n",
}
EXPECTED = {
    "t/laughs.yaml": "invalid-yaml",
    "t/deep-seq.yaml": "invalid-yaml",
    "t/deep-map.yaml": "invalid-yaml",
    "t/big.yaml": "file-too-large",
    "t/latin1.yaml": "invalid-yaml",
    "t/nul.yaml": "invalid-yaml",
    "t/tabs.yaml": "invalid-yaml",
}


def test_each_hostile_file_gets_its_issue(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({**HOSTILE, "t/good.yaml": GOOD})
    start = time.perf_counter()
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", "json")
    elapsed = time.perf_counter() - start
    assert result.code == 1, result.err
    (target,) = result.json()["targets"]
    by_path = {i["path"]: i for i in target["issues"]}
    assert {p: i["kind"] for p, i in by_path.items()} == EXPECTED
    assert "t/good.yaml" not in by_path  # the run went on past every hostile file
    assert target["counts"]["managed"] == len(HOSTILE) + 1
    for issue in by_path.values():
        assert issue["message"]
    print(f"hostile target checked in {elapsed:.3f}s")  # a figure for the notes, not a limit


def test_size_limit_is_configurable(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t/good.yaml": GOOD})
    result = run_cli(
        "check", str(repo), "--rev", "HEAD", "--max-yaml-size", "10", "--format", "json"
    )
    (issue,) = result.json()["targets"][0]["issues"]
    assert issue["kind"] == "file-too-large"
    assert "over the 10 byte limit" in issue["message"]
