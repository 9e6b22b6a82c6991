"""The onboarding pull request's body: a verdict and role counts per target, refused files by
issue code with the fix, how to require the check on each forge, and nothing a file name can
turn into markup, a mention or a link."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pytest

from bot.gate.codes import CODES, IssueCode
from bot.gate.report import Issue, Role, TargetReport, empty_counts
from bot.git.snapshot import Snapshot
from bot.onboarding.detect import Candidate
from bot.onboarding.proposal import Proposal, ProposedTarget, build_proposal
from bot.onboarding.proposal_body import (
    MARKER,
    MAX_BODY,
    SHOWN_PER_CODE,
    forge_steps,
    onboarding_body,
)
from bot.registry.builtin import crd_catalog
from tests.onboarding.test_detect import THREE

HOSTILE = "apps/<img src=x onerror=alert(1)>|@admin #1 [x](https://evil.example) `tick` *b*.txt"


def proposed(
    files: dict[str, bytes], forge: str = "github", symlinks: dict[str, str] | None = None
) -> str:
    snapshot = Snapshot.from_files(files, symlinks=symlinks)
    return onboarding_body(build_proposal(snapshot, catalog=crd_catalog()), forge)


def body_of(
    candidates: Sequence[Candidate], reports: Mapping[str, TargetReport], forge: str
) -> str:
    """The body for targets and reports made by hand."""
    targets = tuple(ProposedTarget(c, report=reports.get(c.name)) for c in candidates)
    return onboarding_body(Proposal(targets, {}), forge)


def test_each_target_has_its_verdict_role_counts_and_refused_files_by_code() -> None:
    body = proposed(
        {
            "apps/objects.yaml": THREE,
            "apps/notes.txt": b"n\n",
            "apps/secret.yaml": b"apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
            "ok/objects.yaml": THREE,
        }
    )
    assert body.startswith(MARKER + "\n")
    assert "| `apps` | <code>apps</code> | **refused** (2 errors) | 4 of 4 documents |" in body
    assert "| `ok` | <code>ok</code> | accepted | 3 of 3 documents |" in body
    header = "| verdict | " + " | ".join(r.value for r in Role) + " |"
    assert body.count(header) == 2
    assert "| **refused** (2 errors) | 2 | 0 | 2 | 0 | 0 | 1 |" in body
    assert "| accepted | 1 | 0 | 2 | 0 | 0 | 0 |" in body
    for code in (IssueCode.FOREIGN_FILE, IssueCode.PLAINTEXT_SECRET):
        assert f"- `{code.value}` (1): {CODES[code].summary}" in body
        assert f"  **Fix**: {CODES[code].fix}" in body
    assert (
        "  - <code>apps/notes.txt</code>: not YAML, a build directive, an operator artifact or a "
        "benign passenger; to keep it, add <code>/notes.txt</code> to "
        "<code>apps/.gittargetignore</code>"
    ) in body
    # The refused ones come before the warnings, and the section of a clean target lists none.
    ok = body.split("### `ok`")[1].split("###")[0]
    assert "Refused files" not in ok


def test_hostile_file_names_are_escaped() -> None:
    # A symlink's target is quoted in its message: prose, where a reference would link.
    link = {"apps/link": "@team #7 <b>x</b> [y](https://evil.example)"}
    body = proposed({"apps/objects.yaml": THREE, HOSTILE: b"x\n"}, symlinks=link)
    for raw in ("<img", "<b>", "@admin", "@team", "#7", "](https://", "`tick`", "*b*", "|@"):
        assert raw not in body, raw
    assert "#&#8203;7" in body
    # Every row of every table still has its columns.
    for line in body.splitlines():
        if line.startswith("| ") and "verdict" not in line and "---" not in line:
            assert line.count("|") in (5, 8), line


def test_warnings_are_said_to_refuse_nothing() -> None:
    report = TargetReport(
        "t",
        "t",
        (Issue.of(IssueCode.UNUSED_IGNORE_PATTERN, "t/.gittargetignore", "'/x' matches nothing"),),
        empty_counts(),
    )
    body = body_of([Candidate("t", "t", 3, 3, False)], {"t": report}, "github")
    assert "| `t` | <code>t</code> | accepted |" in body
    assert "`unused-ignore-pattern` (1) (a warning; it refuses nothing)" in body
    assert "Refused files" not in body


def test_a_target_without_a_report_says_so() -> None:
    body = body_of([Candidate("t", "", 3, 3, False)], {}, "gitea")
    assert "| `t` | <code>.</code> | not checked |" in body
    assert "The gate did not check this target." in body


def test_many_issues_stay_within_the_forge_limit() -> None:
    issues = tuple(
        Issue.of(IssueCode.FOREIGN_FILE, f"t/{'n' * 250}{i:05d}.txt", "m" * 400)
        for i in range(3000)
    )
    counts = empty_counts() | {Role.FOREIGN: 3000}
    reports = {f"t{j}": TargetReport(f"t{j}", "t", issues, counts) for j in range(20)}
    candidates = [Candidate(f"t{j}", "t", 3, 3, False) for j in range(20)]
    body = body_of(candidates, reports, "github")
    assert len(body) <= MAX_BODY
    shown = body.count("  - <code>t/nnn")
    assert shown < 20 * SHOWN_PER_CODE
    assert f"  - … and {3000 - SHOWN_PER_CODE} more" in body
    assert body.rstrip().endswith("the file explains each key.")  # the closing lines fit


@pytest.mark.parametrize(
    ("forge", "says"),
    [
        ("github", ["Require status checks to pass before merging", "Rulesets"]),
        ("gitlab", ["Status checks must succeed", "approvals API", "Pipelines must succeed"]),
        ("gitea", ["Enable status check", "status check pattern"]),
        ("forgejo", ["Enable status check"]),
    ],
)
def test_how_to_require_the_check_on_each_forge(forge: str, says: list[str]) -> None:
    steps = forge_steps(forge)
    assert steps in body_of([], {}, forge)
    flat = " ".join(steps.split())
    assert "`ichor/acceptance`" in flat
    for text in says:
        assert text in flat


def test_an_unknown_forge_gets_every_forge_s_steps() -> None:
    steps = forge_steps("local")
    assert all(f"**{name}**" in steps for name in ("GitHub", "GitLab", "Gitea and Forgejo"))


def test_the_body_names_only_the_bot_s_own_links() -> None:
    body = proposed({"apps/objects.yaml": THREE, "apps/x.txt": b"x"}, "gitlab")
    assert re.findall(r"https?://", body) == []


def test_when_even_the_codes_do_not_fit_each_is_one_line() -> None:
    path = "p" * 300
    issues = tuple(Issue.of(code, f"{path}/f", "m") for code in IssueCode)
    candidates = [Candidate(f"t{j}", path, 3, 3, False) for j in range(20)]
    reports = {c.name: TargetReport(c.name, path, issues, empty_counts()) for c in candidates}
    body = body_of(candidates, reports, "github")
    assert len(body) <= MAX_BODY
    assert "The files and their fixes do not fit here" in body
    assert body.count("\n- `foreign-file` (1)\n") == 20
    assert "**Fix**" not in body
