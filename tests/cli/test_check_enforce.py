"""``check`` and ``enforce: new`` (issue 22, item 5): ``check`` checks a tree, not a change, so
it gives the full verdict, every issue counting, and says so on standard error for the targets
it checked that set ``enforce: new``."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import MakeRepo, RunCli

CONFIG = (
    "version: 1\ntargets:\n  - {name: prod, path: clusters/prod, enforce: new}\n"
    "  - {name: dev, path: clusters/dev, enforce: all}\n  - {name: qa, path: clusters/qa}\n"
)
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: x}\n"
NOTE = (
    "ichor-bot: note: prod is under enforce: new, which weighs a pull request's check on the "
    "forge; check checks a tree, not a change, so every issue counts here\n"
)


def repo(make_repo: MakeRepo) -> Path:
    return make_repo(
        {
            "clusters/prod/a.yaml": CM % "a",
            "clusters/prod/notes.txt": "old\n",
            "clusters/dev/b.yaml": CM % "b",
            "clusters/qa/c.yaml": CM % "c",
        },
        config=CONFIG,
    )


def test_the_full_verdict_and_a_note_saying_so(make_repo: MakeRepo, run_cli: RunCli) -> None:
    result = run_cli("check", str(repo(make_repo)), "--rev", "HEAD")
    assert result.code == 1
    assert "REFUSED  prod (clusters/prod): 1 error" in result.out
    assert result.err == NOTE


def test_the_note_is_on_standard_error_whatever_the_format(
    make_repo: MakeRepo, run_cli: RunCli
) -> None:
    result = run_cli("check", str(repo(make_repo)), "--rev", "HEAD", "--format", "json")
    assert result.code == 1
    assert [t["verdict"] for t in result.json()["targets"]] == ["refused", "accepted", "accepted"]
    assert result.err == NOTE


def test_quiet_leaves_the_verdict_lines_only(make_repo: MakeRepo, run_cli: RunCli) -> None:
    result = run_cli("check", str(repo(make_repo)), "--rev", "HEAD", "-q")
    assert result.code == 1
    assert result.err == ""


def test_only_the_checked_targets_are_named(make_repo: MakeRepo, run_cli: RunCli) -> None:
    path = repo(make_repo)
    assert run_cli("check", str(path / "clusters/dev/b.yaml"), "--rev", "HEAD").err == ""
    several = run_cli("check", str(path / "clusters/prod"), str(path / "clusters/dev"))
    assert several.err == NOTE


def test_several_targets_are_named_in_one_note(make_repo: MakeRepo, run_cli: RunCli) -> None:
    config = CONFIG.replace("enforce: all", "enforce: new")
    path = make_repo(
        {"clusters/prod/a.yaml": CM % "a", "clusters/dev/b.yaml": CM % "b"}, config=config
    )
    result = run_cli("check", str(path), "--rev", "HEAD")
    assert result.code == 0
    assert result.err.startswith("ichor-bot: note: prod, dev are under enforce: new, which ")


def test_an_adhoc_target_has_no_setting(make_repo: MakeRepo, run_cli: RunCli) -> None:
    result = run_cli("check", str(repo(make_repo)), "--rev", "HEAD", "--path", "clusters/prod")
    assert (result.code, result.err) == (1, "")
