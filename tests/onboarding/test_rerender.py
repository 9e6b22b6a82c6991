"""The proposal as pushed to ichor/bootstrap (issue 22 item 4): the targets of the edited
.ichor.yaml gated on the branch's tree, a type found nowhere said to come from the capabilities
file that now records it, an invalid file reported, and the same body as first proposed when
nothing was edited."""

from __future__ import annotations

from bot.gate.codes import IssueCode
from bot.gate.report import Verdict
from bot.git.overlay import overlay
from bot.git.snapshot import Snapshot
from bot.onboarding.proposal_body import onboarding_body
from bot.onboarding.rerender import proposal_at
from bot.registry.builtin import crd_catalog
from tests.onboarding.corpora_fixes import recording
from tests.onboarding.test_detect import THREE
from tests.onboarding.test_proposal_files import RELEASES, UNKNOWN, propose

FILES: dict[str, str | bytes] = {
    "prod/releases.yaml": RELEASES,
    "prod/gizmo.yaml": UNKNOWN,
    "prod/objects.yaml": THREE,
}


def blobs(files: dict[str, str | bytes]) -> dict[str, bytes]:
    return {p: d.encode() if isinstance(d, str) else d for p, d in files.items()}


def test_unedited_the_body_is_the_one_first_proposed() -> None:
    proposal = propose(FILES)
    pushed = overlay(Snapshot.from_files(blobs(FILES)), proposal.files)
    again = proposal_at(pushed, catalog=crd_catalog())
    assert onboarding_body(again, "github") == onboarding_body(proposal, "github")


def test_an_edited_proposal_is_gated_as_edited() -> None:
    proposal = propose({**FILES, "staging/objects.yaml": THREE})
    (gizmo,) = proposal.targets[0].suggestion.missing  # type: ignore[union-attr]
    recorded = recording([gizmo]).decode().splitlines()
    # The team renames prod, drops staging and records the type from its cluster.
    config = (
        "version: 1\ntargets:\n  - name: live\n    path: prod\n"
        "    capabilities: prod.capabilities.txt\n"
    )
    caps = proposal.files["prod.capabilities.txt"].decode()
    header = next(line for line in caps.splitlines() if line.startswith("NAME"))
    edited = {
        ".ichor.yaml": config.encode(),
        # The recorded row, padded to the file's own columns.
        "prod.capabilities.txt": (caps + _aligned(header, recorded[1])).encode(),
    }
    files = {**blobs({**FILES, "staging/objects.yaml": THREE}), **proposal.files, **edited}
    again = proposal_at(Snapshot.from_files(files), catalog=crd_catalog())
    (live,) = again.targets
    assert (live.candidate.name, live.candidate.path) == ("live", "prod")
    assert live.report is not None and live.report.verdict is Verdict.ACCEPTED
    assert live.suggestion is not None and live.suggestion.missing == ()
    body = onboarding_body(again, "github")
    assert "the capabilities file prod.capabilities.txt: <code>home.example/v1 Gizmo</code>" in (
        body
    )
    assert "| `live` | <code>prod</code> | accepted |" in body and "`prod`" not in body


def _aligned(header: str, row: str) -> str:
    """``row`` of another table, cut into ``header``'s columns."""
    cells = row.split()
    names = header.split()
    starts = [header.index(n) for n in names]
    line = ""
    for start, cell in zip(starts, [cells[0], "", *cells[1:]], strict=True):
        line = line.ljust(start) + cell
    return line.rstrip() + "\n"


def test_an_invalid_configuration_is_reported() -> None:
    proposal = proposal_at(
        Snapshot.from_files({".ichor.yaml": b"version: 2\n", "a/x.yaml": THREE}),
        catalog=crd_catalog(),
    )
    assert proposal.targets == () and proposal.config_issues
    body = onboarding_body(proposal, "gitlab")
    assert "the `.ichor.yaml` on this branch cannot be read" in body
    assert proposal.config_issues[0].kind in body


def test_a_missing_capabilities_file_is_a_fresh_verdict() -> None:
    config = b"version: 1\ntargets:\n  - name: p\n    path: prod\n    capabilities: gone.txt\n"
    files = {**blobs(FILES), ".ichor.yaml": config}
    (target,) = proposal_at(Snapshot.from_files(files), catalog=crd_catalog()).targets
    assert target.report is not None
    assert {i.kind for i in target.report.issues} == {IssueCode.NOT_FOLLOWABLE}
