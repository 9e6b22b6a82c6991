"""``check``: paths that select targets, --path and --capabilities, formats, quiet, colour."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, MakeRepo, RunCli

CONFIG = (
    "version: 1\ntargets:\n  - {name: prod, path: clusters/prod}\n"
    "  - {name: dev, path: clusters/dev}\n"
)
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: x}\n"
WIDGET = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w%d, namespace: x}\n"
JOB = "apiVersion: batch/v1\nkind: %s\nmetadata: {name: j%d, namespace: x}\n"
RELEASE = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: r, namespace: x}\n"
)
CAPABILITIES = str(FIXTURES / "registry" / "api-resources-wide.txt")


@pytest.fixture
def chdir_to() -> Iterator[object]:
    before = Path.cwd()

    def go(path: Path) -> None:
        os.chdir(path)

    yield go
    os.chdir(before)


def two_targets(make_repo: MakeRepo) -> Path:
    return make_repo(
        {
            "clusters/prod/a.yaml": CM % "a",
            "clusters/dev/b.yaml": CM % "b",
            "clusters/dev/notes.txt": "x",
            "docs/readme.txt": "x",
        },
        config=CONFIG,
    )


# -- item 1: --path naming nothing, or a file -------------------------------------------------


def test_path_naming_nothing_is_a_usage_error(tmp_path: Path, run_cli: RunCli) -> None:
    (tmp_path / "t").mkdir()
    result = run_cli("check", str(tmp_path), "--path", "does/not/exist")
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1
    assert "--path does/not/exist names nothing in" in result.err


def test_path_naming_a_file_is_a_usage_error(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t/a.yaml": CM % "a"})
    for rev in ((), ("--rev", "HEAD")):
        result = run_cli("check", str(repo), *rev, "--path", "t/a.yaml")
        assert result.code == 2 and result.out == ""
        assert result.err.startswith("ichor-bot: error: --path t/a.yaml is a file")
        assert result.err.count("\n") == 1


def test_path_at_a_revision_must_exist_there(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t/a.yaml": CM % "a"})
    (repo / "late").mkdir()
    (repo / "late" / "b.yaml").write_text(CM % "b")
    assert run_cli("check", str(repo), "--path", "late").code == 0  # on disk
    assert run_cli("check", str(repo), "--rev", "HEAD", "--path", "late").code == 2


# -- item 10: --capabilities and grouped not-followable ---------------------------------------


def test_capabilities_file_for_an_adhoc_target(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t/r.yaml": RELEASE}, config=None)
    without = run_cli("check", str(repo), "--path", "t", "--format", "brief")
    assert without.code == 1 and "HelmRelease is not served" in without.out
    with_caps = run_cli("check", str(repo), "--path", "t", "--capabilities", CAPABILITIES)
    assert with_caps.code == 0, with_caps.out
    assert "ACCEPTED  t (t)" in with_caps.out


def test_capabilities_errors(make_repo: MakeRepo, run_cli: RunCli, tmp_path: Path) -> None:
    repo = make_repo({"t/r.yaml": RELEASE})
    no_path = run_cli("check", str(repo), "--capabilities", CAPABILITIES)
    assert no_path.code == 2 and "--capabilities needs --path" in no_path.err
    missing = run_cli("check", str(repo), "--path", "t", "--capabilities", str(tmp_path / "no"))
    assert missing.code == 2 and "No such file or directory" in missing.err
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe")
    broken = run_cli("check", str(repo), "--path", "t", "--capabilities", str(bad))
    assert broken.code == 2 and "not UTF-8" in broken.err and broken.err.count("\n") == 1


def test_identical_not_followable_issues_read_as_one(make_repo: MakeRepo, run_cli: RunCli) -> None:
    files = {f"t/w{i:03}.yaml": WIDGET % i for i in range(347)}
    repo = make_repo(files, config=None)
    text = run_cli("check", str(repo), "--path", "t")
    assert text.code == 1
    lines = text.out.splitlines()
    grouped = [line for line in lines if "\u00d7" in line]
    assert grouped == [
        "    347 \u00d7 example.com/v1 Widget: not followable \u2014 not-served: "
        "example.com/v1 Widget is not served by any source"
    ]
    assert "      t/w000.yaml:1" in lines and "      ... and 342 more" in lines
    assert len(lines) < 20
    # Types whose message does not name them are still told apart.
    jobs = {f"t/j{i}.yaml": JOB % ("Job", i) for i in range(3)}
    jobs["t/cron.yaml"] = JOB % ("CronJob", 0)
    denied = run_cli("check", str(make_repo(jobs, config=None)), "--path", "t").out.splitlines()
    assert "    3 \u00d7 batch/v1 Job: not followable \u2014 denied-by-policy" in denied
    assert "    t/cron.yaml:1  batch/v1 CronJob: not followable \u2014 denied-by-policy" in denied
    # Machine formats keep one entry per issue.
    assert (
        len(
            run_cli("check", str(repo), "--path", "t", "--format", "json").json()["targets"][0][
                "issues"
            ]
        )
        == 347
    )
    assert (
        len(run_cli("check", str(repo), "--path", "t", "--format", "brief").out.splitlines()) == 347
    )


# -- item 11: several paths -------------------------------------------------------------------


def test_paths_select_the_targets_holding_them(
    make_repo: MakeRepo, run_cli: RunCli, chdir_to: object
) -> None:
    repo = two_targets(make_repo)
    chdir_to(repo)  # type: ignore[operator]
    prod = run_cli("check", "clusters/prod/a.yaml", "--format", "json")
    assert prod.code == 0
    assert [t["name"] for t in prod.json()["targets"]] == ["prod"]
    both = run_cli("check", "clusters/dev/b.yaml", "clusters/prod", "docs/readme.txt")
    assert both.code == 1  # dev holds notes.txt: the whole target is checked, not only b.yaml
    assert "REFUSED  dev (clusters/dev)" in both.out and "ACCEPTED  prod" in both.out
    assert both.err == "ichor-bot: skipped (in no target): docs/readme.txt\n"
    parent = run_cli("check", "clusters", "--quiet")
    assert parent.out.splitlines() == [
        "ACCEPTED  prod (clusters/prod): 0 errors",
        "REFUSED  dev (clusters/dev): 1 error",
    ]
    config = run_cli("check", ".ichor.yaml", "--format", "json")
    assert [t["name"] for t in config.json()["targets"]] == ["prod", "dev"]


def test_paths_from_another_directory_and_at_a_revision(
    make_repo: MakeRepo, run_cli: RunCli, chdir_to: object
) -> None:
    repo = two_targets(make_repo)
    chdir_to(repo / "clusters")  # type: ignore[operator]
    result = run_cli("check", "prod/a.yaml", "--rev", "HEAD", "--format", "json")
    assert result.code == 0
    assert [t["name"] for t in result.json()["targets"]] == ["prod"]
    here = run_cli("check", "--format", "json")  # '.' is clusters/: both targets
    assert [t["name"] for t in here.json()["targets"]] == ["prod", "dev"]


def test_paths_outside_every_target_check_nothing(
    make_repo: MakeRepo, run_cli: RunCli, chdir_to: object
) -> None:
    repo = two_targets(make_repo)
    chdir_to(repo)  # type: ignore[operator]
    result = run_cli("check", "docs/readme.txt")
    assert result.code == 0 and result.out == ""
    assert "skipped (in no target): docs/readme.txt" in result.err
    assert "nothing to check" in result.err
    assert run_cli("check", "docs/readme.txt", "--quiet").err == ""


def test_a_path_that_does_not_exist(make_repo: MakeRepo, run_cli: RunCli, chdir_to: object) -> None:
    repo = two_targets(make_repo)
    chdir_to(repo)  # type: ignore[operator]
    result = run_cli("check", "clusters/prod/typo.yaml")
    assert result.code == 2 and result.err.count("\n") == 1
    assert "clusters/prod/typo.yaml: no such file or directory" in result.err
    outside = run_cli("check", "clusters/prod/a.yaml", "/")
    assert outside.code == 2 and "/ is outside the repository" in outside.err


def test_fail_on_warning(make_repo: MakeRepo, run_cli: RunCli) -> None:
    # An ignored file holding an object the target manages elsewhere is a warning.
    repo = make_repo(
        {
            "t/a.yaml": CM % "a",
            "t/.gittargetignore": "/old/\n",
            "t/old/a.yaml": CM % "a",
        }
    )
    plain = run_cli("check", str(repo), "--format", "brief")
    assert plain.code == 0 and "ignored-managed-object" in plain.out
    assert run_cli("check", str(repo), "--fail-on-warning").code == 1
    assert run_cli("check", str(make_repo({"t/a.yaml": CM % "a"})), "--fail-on-warning").code == 0


def test_brief_lines(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t/a.yaml": CM % "a", "t/x.txt": "x", "t/y.yaml": "a: [\n"})
    result = run_cli("check", str(repo), "--format", "brief")
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].startswith("t/x.txt: foreign-file: ")
    assert lines[1].startswith("t/y.yaml:1: invalid-yaml: ")


# -- colour -----------------------------------------------------------------------------------


def test_colour_only_when_asked_or_on_a_terminal(
    make_repo: MakeRepo, run_cli: RunCli, tmp_path: Path
) -> None:
    repo = str(make_repo({"t/a.yaml": CM % "a", "t/x.txt": "x"}))
    assert "\x1b[" not in run_cli("check", repo).out  # captured output is not a terminal
    coloured = run_cli("check", repo, "--color", "always").out
    assert "\x1b[31mREFUSED\x1b[0m  t (t)" in coloured
    out = tmp_path / "report.txt"
    run_cli("check", repo, "-o", str(out))
    assert "\x1b[" not in out.read_text()


def test_use_colour_rules() -> None:
    from bot.cli.check import use_colour

    assert use_colour("auto", None, True, {})
    assert not use_colour("auto", None, True, {"NO_COLOR": "1"})
    assert use_colour("auto", None, True, {"NO_COLOR": ""})  # no-color.org: set and non-empty
    assert not use_colour("auto", None, False, {})
    assert not use_colour("auto", "out.txt", True, {})
    assert use_colour("always", "out.txt", False, {"NO_COLOR": "1"})
    assert not use_colour("never", None, True, {})


# -- item 12: configuration errors ------------------------------------------------------------


def test_config_errors_on_stderr_with_lines_and_a_suggestion(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    config = "version: 1\ntarget:\n  - {name: t, path: t}\n"
    repo = make_repo({"t/a.yaml": CM % "a"}, config=config)
    result = run_cli("check", str(repo))
    assert result.code == 2 and result.out == ""
    assert sorted(result.err.splitlines()) == [
        "ichor-bot: error: .ichor.yaml:1: missing-key: targets: required key is missing",
        "ichor-bot: error: .ichor.yaml:2: unknown-key: target: unknown key; did you mean "
        "'targets'? (allowed keys: version, targets, commands)",
    ]


def test_config_value_errors_in_plain_words(make_repo: MakeRepo, run_cli: RunCli) -> None:
    config = (
        "version: 1\ntargets:\n  - name: t\n    path: t\n    mode: lax\n  - name: 7\n    path: u\n"
    )
    repo = make_repo({"t/a.yaml": CM % "a"}, config=config)
    err = run_cli("check", str(repo), "--rev", "HEAD").err
    assert (
        ".ichor.yaml:5: invalid-value: targets[0].mode: 'lax' must be 'relaxed' or 'strict'" in err
    )
    assert ".ichor.yaml:6: invalid-value: targets[1].name: 7 must be text" in err
    assert "Input should" not in err
    # JSON keeps the issues in the report for machines, and says them on stderr too.
    json_run = run_cli("check", str(repo), "--format", "json")
    assert len(json_run.json()["config_issues"]) == 2 and json_run.err.count("\n") == 2


def test_misnamed_config_file_is_pointed_at(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = make_repo({"t/a.yaml": CM % "a", ".ichor.yml": "version: 1\n"}, config=None)
    result = run_cli("check", str(repo), "--rev", "HEAD")
    assert result.code == 2
    assert "found .ichor.yml: rename it to .ichor.yaml" in result.err


def test_path_with_several_paths_is_a_usage_error(make_repo: MakeRepo, run_cli: RunCli) -> None:
    repo = str(make_repo({"t/a.yaml": CM % "a"}))
    result = run_cli("check", repo, repo, "--path", "t")
    assert result.code == 2 and "with --path, give at most one PATH" in result.err


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    import pty
    import subprocess
    import sys

    controller, terminal = pty.openpty()
    command = [str(Path(sys.executable).parent / "ichor-bot"), *args]
    process = subprocess.Popen(command, stdout=terminal, stderr=terminal, env=env)
    os.close(terminal)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed: the process is done writing
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(controller)
    return b"".join(chunks).decode()


def test_colour_on_a_real_terminal_unless_no_color(make_repo: MakeRepo) -> None:
    repo = str(make_repo({"t/a.yaml": CM % "a", "t/x.txt": "x"}))
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[31mREFUSED\x1b[0m" in _on_a_terminal(["check", repo], env)
    assert "\x1b[" not in _on_a_terminal(["check", repo], {**env, "NO_COLOR": "1"})
