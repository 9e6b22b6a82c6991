"""The onboarding body's new sections (issue 22 items 1, 2 and 4): where each type of a
capabilities file came from and the fix for one found nowhere, the folders left out with why,
the new empty target, each file's own fix, and what to expect: the open pull requests the check
would block, the commands, re-rendering on a push, and opting out."""

from __future__ import annotations

from bot.gate.codes import IssueCode
from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.report import Issue, TargetReport, empty_counts
from bot.onboarding.expect import OpenPulls, PullVerdict, pull_verdict
from bot.onboarding.proposal_body import onboarding_body
from tests.gate.test_suggest_input import CRD
from tests.onboarding.test_detect import THREE, objects
from tests.onboarding.test_proposal_files import RELEASES, UNKNOWN, WIDGETS, propose


def test_the_types_section_names_each_entry_s_source_and_the_fix_for_the_unknown() -> None:
    proposal = propose(
        {
            "prod/releases.yaml": RELEASES,
            "prod/widget.yaml": WIDGETS,
            "prod/gizmo.yaml": UNKNOWN,
            "prod/objects.yaml": THREE,
            "crds/widgets.yaml": CRD,
        }
    )
    body = onboarding_body(proposal, "github")
    assert (
        "Its objects use 3 types that Kubernetes itself does not serve; "
        "<code>prod.capabilities.txt</code> lists 2" in body
    )
    assert "- the catalog, fluxcd/helm-controller@&#8203;v" in body
    assert "(Apache-2.0): <code>helm.toolkit.fluxcd.io/v2 HelmRelease</code>" in body
    assert (
        "- the repository's CRD widgets.example.com at <code>crds/widgets.yaml</code>: "
        "<code>example.com/v1 Widget</code>" in body
    )
    assert "**Not found** in the repository or the catalog (1):" in body
    assert "  - <code>home.example/v1 Gizmo</code>" in body
    assert (
        "<code>kubectl api-resources -o wide &#62; api-resources.txt &#38;&#38; ichor-bot types "
        "--suggest --path prod --capabilities api-resources.txt --output prod.capabilities.txt"
    ) in body
    # A type no cluster serves is no object: its files are ignored instead.
    assert "`not-followable` (1)" in body
    assert "is no object of the cluster: ignore its files instead:" in body
    assert "<code>printf '%s&#92;n' '' /gizmo.yaml &#62;&#62; prod/.gittargetignore</code>" in body


def test_folders_left_out_are_said_with_why() -> None:
    same = objects("web", "api", "db")
    proposal = propose(
        {
            "clusters/eu/objects.yaml": same,
            "clusters/us/objects.yaml": same,
            "hack/a.yaml": THREE,
            "hack/b.yaml": THREE,
            "hack/c.yaml": THREE,
        }
    )
    body = onboarding_body(proposal, "github")
    assert "### Not proposed" in body
    assert "- <code>clusters</code>: it merges environments" in body
    assert "looked at instead: <code>clusters/eu</code>, <code>clusters/us</code>" in body
    assert "- <code>hack</code>: tooling or vendored code" in body


def test_the_new_empty_target_says_why_it_is_proposed() -> None:
    proposal = propose({"test/a.yaml": THREE, "test/b.yaml": THREE, "test/c.yaml": THREE})
    body = onboarding_body(proposal, "gitea")
    assert "No folder of it qualifies as a GitTarget path" in body
    assert "one new, empty target, `cluster` at <code>cluster</code>" in body
    assert "| `cluster` | <code>cluster</code> | accepted | a new folder |" in body
    sops = propose({".sops.yaml": "creation_rules:\n  - age: age1x\n", "README.md": "x"})
    said = onboarding_body(sops, "gitea")
    assert "and a `.sops.yaml` with the recipients of the rule for this folder" in said


def test_a_file_s_own_fix_is_shown_and_ignorable_files_get_their_line() -> None:
    proposal = propose(
        {
            "apps/objects.yaml": THREE,
            "apps/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
            "apps/config.yaml": "settings: {a: 1}\n",
        }
    )
    body = onboarding_body(proposal, "github")
    assert "fix: <code>sops --encrypt" in body and "apps/secret.yaml</code>" in body
    assert "to keep it, add <code>/config.yaml</code> to <code>apps/.gittargetignore</code>" in body


def refused(name: str) -> TargetReport:
    issue = Issue.of(IssueCode.FOREIGN_FILE, f"{name}/x.txt", "m")
    return TargetReport(name, name, (issue,), empty_counts())


def test_what_to_expect_without_a_forge_says_it_cannot_list_pull_requests() -> None:
    proposal = propose({"apps/objects.yaml": THREE, "apps/x.txt": "x"})
    body = onboarding_body(proposal, "github")
    expect = body.split("### What to expect")[1].split("### Make")[0]
    assert "this preview ran without a forge" in expect
    assert "a pull request that touches `apps` would fail" in expect
    assert "`/recheck`" in expect and "`/ignore PATTERN [in TARGET]`" in expect
    assert "push your edits (to `.ichor.yaml` or any file) to the branch `ichor/bootstrap`" in (
        expect
    )
    assert "**Close this pull request to opt out.**" in expect


def test_what_to_expect_lists_the_open_pull_requests_the_check_would_block() -> None:
    proposal = propose({"apps/objects.yaml": THREE, "apps/x.txt": "x", "ok/objects.yaml": THREE})
    policy = GatePolicy((TargetPolicy("apps", "apps"), TargetPolicy("ok", "ok")))
    heads = {"apps": refused("apps")}
    blocked = pull_verdict(7, "u7", "Bump @web #3", policy, ["apps/y.yaml"], heads)
    assert blocked == PullVerdict(7, "u7", "Bump @web #3", ("apps",), ("apps",), 1)
    passing = pull_verdict(8, "u8", None, policy, ["README.md"], heads)
    assert passing.touched == () and passing.blocked_by == ()
    pulls = OpenPulls("main", (blocked, passing), unchecked=(9,))
    body = onboarding_body(proposal, "github", pulls)
    assert "**Open pull requests** into <code>main</code>: 1 of the 2 checked" in body
    # Titles are escaped, and no number becomes a reference the forge would note on that PR.
    assert (
        "- #&#8203;7 Bump @&#8203;web #&#8203;3: touches `apps`, refused at its head (1 er" in body
    )
    assert "- 1 more touches no target, or only targets that accept them" in body
    assert "not checked (too many, or their head could not be fetched): #9" in body
    none = onboarding_body(proposal, "github", OpenPulls("main", ()))
    assert "none into <code>main</code>, so merging this blocks none today" in none
