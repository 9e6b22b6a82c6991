"""The suggested ``.gittargetignore`` lines, pasted into bash as printed, make git and the gate
ignore exactly the files they were suggested for."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from bot.paths import decode_path, encode_path
from tests.conftest import MakeRepo, RunCli

ODD_NAMES = [
    "t/it's a $file.cfg",
    "t/sp ace/[x]*.txt",
    "t/-rf *.txt",
    "t/back\\slash.bin",
    "t/trailing space ",
    "t/#hash.txt",
    "t/!bang.txt",
    "t/.yayamlls.yaml\u200e",
    decode_path(b"t/bad\xff.txt"),
]


def _git(repo: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True)


def _printed_commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "printf '%s\\n'" in line]


def test_pasted_printf_ignores_the_files(
    make_repo: MakeRepo, run_cli: RunCli, tmp_path: Path
) -> None:
    files: dict[str, bytes | str] = {name: b"x\n" for name in ODD_NAMES}
    # An existing ignore file whose last line has no newline must not swallow the first
    # pasted line.
    files["t/.gittargetignore"] = "/other.log"
    files["t/other.log"] = "x\n"
    # A type the policy denies: its fix ignores the file the same way.
    files["t/jobs/migrate.yaml"] = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: m}\n"
    repo = make_repo(files, symlinks={"t/link": "../elsewhere"})

    before = run_cli("check", str(repo), "--rev", "HEAD")
    assert before.code == 1
    commands = _printed_commands(before.out)
    assert len(commands) == 3  # the foreign files, the symlink, the denied type
    for command in commands:
        command = command.partition("ignore the file: ")[2] or command
        assert command.endswith(">> t/.gittargetignore")
        subprocess.run(["bash", "-c", command], cwd=repo, check=True)
    pasted = (repo / "t/.gittargetignore").read_bytes()
    assert pasted.startswith(b"/other.log\n")

    # git agrees: the same lines as a .gitignore at the target root ignore every file.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _git(scratch, "init", "--quiet")
    (scratch / "t").mkdir()
    (scratch / "t/.gitignore").write_bytes(pasted)
    names = [*ODD_NAMES, "t/link", "t/other.log", "t/jobs/migrate.yaml"]
    stdin = b"".join(encode_path(name) + b"\0" for name in names)
    found = _git(scratch, "check-ignore", "--no-index", "-z", "--stdin", data=stdin)
    assert found.returncode == 0, found.stderr
    ignored = {decode_path(raw) for raw in found.stdout.split(b"\0") if raw}
    assert ignored == set(names)
    unrelated = _git(scratch, "check-ignore", "--no-index", "t/notes.txt", "t/sub/link")
    assert unrelated.returncode == 1  # nothing else is

    # And the gate: committed, the target is accepted and no pasted line is unused.
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "ignore them")
    after = run_cli("check", str(repo), "--rev", "HEAD", "--format", "json")
    (target,) = json.loads(after.out)["targets"]
    assert after.code == 0, target["issues"]
    assert target["issues"] == []
    assert target["counts"]["ignored"] == len(names)
