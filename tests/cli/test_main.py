"""The ``check`` command: exit codes, formats, and one-line errors instead of tracebacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bot.errors import UnreadableEntryError
from tests.conftest import ROOT, MakeRepo, RunCli, make_deep_dirs

CLEAN = {"t/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}


def test_accepted_is_exit_0(make_repo: MakeRepo, run_cli: RunCli) -> None:
    result = run_cli("check", str(make_repo(CLEAN)), "--rev", "HEAD")
    assert result.code == 0
    assert result.out.splitlines()[2].startswith("ACCEPTED  t (t)")


def test_refused_is_exit_1(make_repo: MakeRepo, run_cli: RunCli) -> None:
    result = run_cli("check", str(make_repo({**CLEAN, "t/x.txt": "x"})), "--rev", "HEAD")
    assert result.code == 1
    assert "REFUSED  t (t): 1 error" in result.out
    assert "fix: git rm -r -- t/x.txt" in result.out
    assert "/x.txt" in result.out


def test_config_issue_is_exit_2_with_report(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo(CLEAN, config="version: 1\ntargets: [{name: t, path: ../t}]\n")
    result = run_cli("check", str(repo), "--rev", "HEAD", "--format", "json")
    assert result.code == 2
    report = result.json()
    assert report["targets"] == []
    assert report["config_issues"] == [
        {
            "kind": "invalid-path",
            "path": ".ichor.yaml",
            "message": "targets[0].path: '../t' escapes the repository ('..' segment)",
        }
    ]
    text = run_cli("check", str(repo), "--rev", "HEAD")
    assert text.code == 2 and text.out == ""
    assert text.err == (
        "ichor-bot: error: .ichor.yaml:2: invalid-path: targets[0].path: '../t' escapes the "
        "repository ('..' segment)\n"
    )


def test_directory_mode_reads_the_disk(tmp_path: Path, run_cli: RunCli) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.yaml").write_text(CLEAN["t/a.yaml"])
    (tmp_path / "t" / "link").symlink_to("/etc/passwd")
    result = run_cli("check", str(tmp_path), "--path", "t", "--format", "json")
    assert result.code == 1
    report = result.json()
    assert report["revision"] is None
    assert report["targets"][0]["name"] == "t"
    assert [i["kind"] for i in report["targets"][0]["issues"]] == ["foreign-symlink"]


def test_adhoc_path_ignores_config(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo(CLEAN, config="not: valid: yaml: [")
    result = run_cli("check", str(repo), "--rev", "HEAD", "--path", "t/", "--format", "json")
    assert result.code == 0
    assert result.json()["targets"][0]["path"] == "t"
    root = run_cli("check", str(repo), "--rev", "HEAD", "--path", ".", "--format", "json")
    assert root.json()["targets"][0] | {"issues": None} == {
        "name": "root",
        "path": ".",
        "verdict": root.json()["targets"][0]["verdict"],
        "counts": root.json()["targets"][0]["counts"],
        "issues": None,
    }


def test_output_file(make_repo: MakeRepo, run_cli: RunCli, tmp_path: Path) -> None:
    out = tmp_path / "report.sarif"
    result = run_cli(
        "check", str(make_repo(CLEAN)), "--rev", "HEAD", "--format", "sarif", "-o", str(out)
    )
    assert result.code == 0 and result.out == ""
    assert json.loads(out.read_text())["version"] == "2.1.0"


def one_line_error(result_err: str) -> str:
    lines = result_err.strip().splitlines()
    assert len(lines) == 1, result_err
    assert lines[0].startswith("ichor-bot: error: ")
    assert "Traceback" not in result_err
    return lines[0]


def test_unknown_revision(make_repo: MakeRepo, run_cli: RunCli) -> None:
    result = run_cli("check", str(make_repo(CLEAN)), "--rev", "nope")
    assert result.code == 2 and result.out == ""
    assert "revision 'nope' not found" in one_line_error(result.err)


def test_not_a_repository(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli("check", str(tmp_path), "--rev", "HEAD")
    assert result.code == 2
    assert "not a git repository" in one_line_error(result.err)
    missing = run_cli("check", str(tmp_path / "nowhere"), "--path", "t")
    assert missing.code == 2
    assert "nowhere: no such file or directory" in one_line_error(missing.err)
    (tmp_path / "file").write_text("x")
    a_file = run_cli("check", str(tmp_path / "file"), "--path", "t")
    assert a_file.code == 2
    assert "not a directory" in one_line_error(a_file.err)


def test_missing_config(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli("check", str(tmp_path))
    assert result.code == 2
    assert "no .ichor.yaml" in one_line_error(result.err)
    assert "--path" in result.err


def test_bad_adhoc_path(tmp_path: Path, run_cli: RunCli) -> None:
    result = run_cli("check", str(tmp_path), "--path", "../up")
    assert result.code == 2
    assert "--path '../up': escapes the repository" in one_line_error(result.err)


def test_bad_arguments(run_cli: RunCli) -> None:
    result = run_cli("check", ".", "--format", "xml")
    assert result.code == 2
    assert "invalid choice" in one_line_error(result.err)
    assert run_cli().code == 2


def test_unreadable_file(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({**CLEAN, "t/.gittargetignore": "docs/ # unique 51c2\n"})
    oid = (
        subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD:t/.gittargetignore"],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    result = run_cli("check", str(repo), "--rev", "HEAD")
    assert result.code == 2
    assert "missing" in one_line_error(result.err)


def test_unreadable_file_in_directory(tmp_path: Path, run_cli: RunCli) -> None:
    # Reading fails after the scan (the file is replaced by a link): one line, exit 2.
    from bot.cli import targets
    from bot.git.directory import read_directory

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / ".gittargetignore").write_text("x\n")
    real = read_directory

    def racing(root: str) -> object:
        snap = real(root)
        (tmp_path / "t" / ".gittargetignore").unlink()
        return snap

    targets.read_directory = racing  # type: ignore[attr-defined,assignment]
    try:
        result = run_cli("check", str(tmp_path), "--path", "t")
    finally:
        targets.read_directory = real  # type: ignore[attr-defined]
    assert result.code == 2
    assert "cannot read t/.gittargetignore" in one_line_error(result.err)
    assert issubclass(UnreadableEntryError, Exception)


def test_python_dash_m_and_console_script(make_repo: MakeRepo) -> None:
    repo = make_repo(CLEAN)
    for argv in (
        [sys.executable, "-m", "bot", "check", str(repo), "--rev", "HEAD", "--format", "json"],
        [
            str(Path(sys.executable).parent / "ichor-bot"),
            "check",
            str(repo),
            "--rev",
            "HEAD",
            "--format",
            "json",
        ],
    ):
        proc = subprocess.run(argv, capture_output=True, cwd=ROOT, check=False)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["targets"][0]["verdict"] == "accepted"


def test_odd_names_print_without_crashing(make_repo: MakeRepo) -> None:
    from bot.paths import decode_path

    repo = make_repo({decode_path(b"t/bad\xff name\n.txt"): b"x", "t/-rf *.txt": b"x"})
    for fmt in ("text", "json", "sarif"):
        proc = subprocess.run(
            [sys.executable, "-m", "bot", "check", str(repo), "--rev", "HEAD", "--format", fmt],
            capture_output=True,
            env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
            check=False,
        )
        assert proc.returncode == 1, proc.stderr
        out = proc.stdout.decode("utf-8")
        if fmt == "text":
            assert "t/bad\\xff name\\n.txt" in out
            assert "$'t/bad\\xff name\\x0a.txt'" in out
            assert "/bad? name?.txt" in out
            assert "/-rf \\*.txt" in out
            assert "'t/-rf *.txt'" in out


def test_a_directory_thousands_deep_is_checked(deep_tmp: Path, run_cli: RunCli) -> None:
    deep = make_deep_dirs(deep_tmp, "t", *(["d"] * 1500))
    Path(deep, "a.yaml").write_text(CLEAN["t/a.yaml"])
    result = run_cli("check", str(deep_tmp), "--path", "t", "--format", "json")
    assert result.code in (0, 1), result.err
    assert result.json()["targets"][0]["counts"]["managed"] == 1


def _check_in_child(repo: Path, *, debug: bool) -> subprocess.CompletedProcess[str]:
    # A real unexpected exception: the recursion limit is cut below what a check needs.
    code = (
        "import sys\nfrom bot.cli.main import main\nsys.setrecursionlimit(40)\n"
        f"sys.exit(main(['check', {str(repo)!r}, '--path', 't']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ICHOR_DEBUG"}
    if debug:
        env["ICHOR_DEBUG"] = "1"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )


def test_an_internal_error_is_exit_3_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.yaml").write_text(CLEAN["t/a.yaml"])
    quiet = _check_in_child(tmp_path, debug=False)
    assert quiet.returncode == 3  # not 1, which means "refused"
    assert quiet.stderr.startswith("ichor-bot: internal error: RecursionError: ")
    assert quiet.stderr.count("\n") == 1 and "Traceback" not in quiet.stderr
    loud = _check_in_child(tmp_path, debug=True)
    assert loud.returncode == 3
    assert "Traceback (most recent call last)" in loud.stderr
    assert loud.stderr.splitlines()[-1].startswith("ichor-bot: internal error: RecursionError")
