"""``enforce: new`` end to end on GitHub (issue 22, item 5): real ``ichor-bot serve`` and
``worker`` processes, the fake GitHub. A target with an issue on its base branch: a pull request
adding a clean file passes, one adding a new issue fails, and the push of the clean commit to
the default branch gets the full verdict."""

from __future__ import annotations

from typing import Any

from tests.e2e.drivers import GitHub
from tests.support.gitops import CONFIG, configmap

GRADUAL = CONFIG.replace(
    "{name: prod, path: clusters/prod}", "{name: prod, path: clusters/prod, enforce: new}"
)
CLEAN = {"clusters/prod/v1/configmaps/web/extra.yaml": configmap("extra")}


def annotation_titles(run: dict[str, Any]) -> list[str]:
    return sorted(a["title"] for a in run["output"].get("annotations", []))


def dirty_base(scenario: GitHub) -> str:
    """prod under enforce: new, with a foreign file already on the base branch."""
    return scenario.base({".ichor.yaml": GRADUAL, "clusters/prod/old-notes.txt": "old\n"})


def run_on(scenario: GitHub, sha: str) -> dict[str, Any]:
    (run,) = [r for r in scenario.check_runs() if r["head_sha"] == sha]
    return run


def test_a_clean_file_passes_a_new_issue_fails_and_the_default_branch_gets_the_full_verdict(
    github: GitHub,
) -> None:
    base = dirty_base(github)
    github.local.checkout("clean", create_from=base)
    clean = github.commit(CLEAN)
    github.local.checkout("dirty", create_from=base)
    dirty = github.commit({**CLEAN, "clusters/prod/notes.txt": "todo\n"})
    github.pull_request(clean, number=21)
    github.pull_request(dirty, number=22)
    github.work()

    passed = run_on(github, clean)
    assert passed["conclusion"] == "success"
    output = passed["output"]
    assert output["title"] == (
        "Passed under enforce: new · no new issues, 1 already on base, not blocking"
    )
    assert (
        "prod is under `enforce: new`: only the issues this change introduces fail the check; "
        "1 issue already on base is listed but not blocking." in output["summary"]
    )
    assert "old-notes.txt" in output["summary"]  # listed, not hidden
    assert annotation_titles(passed) == []

    failed = run_on(github, dirty)
    assert failed["conclusion"] == "failure"
    assert failed["output"]["title"] == "1 target refused · 1 new issue, 1 already on base"
    assert annotation_titles(failed) == ["foreign-file"]
    assert [a["path"] for a in failed["output"]["annotations"]] == ["clusters/prod/notes.txt"]

    # The clean pull request is merged: main moves to its commit, and that push's check is
    # the full verdict, the issue on base included.
    github.local.checkout("main")
    github.local.git("merge", "-q", "--ff-only", "clean")
    github.publish()
    github.deliver_push(base, clean)
    github.work()
    pushed = [r for r in github.check_runs() if r["head_sha"] == clean]
    assert [r["conclusion"] for r in pushed] == ["success", "failure"]
    assert pushed[1]["output"]["title"] == "1 target refused · no new issues, 1 already on base"
    assert (
        "which applies to pull requests: this push gets the full verdict"
        in (pushed[1]["output"]["summary"])
    )
