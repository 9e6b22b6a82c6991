"""``ichor-bot onboard --dry-run [PATH] [--rev REV]``: the onboarding proposal, printed.

What the onboarding pull request would add (each file, whole) and its description, verdicts
included, for a directory on disk or a committed revision: no forge, no credentials, nothing
written. The description says it cannot list the open pull requests the check would block,
which only the forge knows.
"""

from __future__ import annotations

import argparse
import sys

from bot.cli.targets import open_snapshot
from bot.errors import UsageError
from bot.gate.policy import CONFIG_FILE
from bot.onboarding.proposal import build_proposal
from bot.onboarding.proposal_body import BRANCH, TITLE, onboarding_body
from bot.paths import display_path
from bot.registry.builtin import crd_catalog

EXIT_PROPOSED = 0
EXIT_NOTHING = 1  # the tree has .ichor.yaml already


def run_dry_run(args: argparse.Namespace) -> int:
    if len(args.where) > 1:
        raise UsageError("--dry-run takes one PATH (a directory or, with --rev, a repository)")
    if args.installation is not None or args.branch is not None:
        raise UsageError("--installation and --branch are for a forge; --dry-run needs none")
    path = args.where[0] if args.where else "."
    with open_snapshot(path, args.rev) as snapshot:
        if snapshot.get(CONFIG_FILE) is not None:
            print(
                f"ichor-bot: {path} has {CONFIG_FILE} already: nothing to propose "
                "(`ichor-bot check` checks it)",
                file=sys.stderr,
            )
            return EXIT_NOTHING
        proposal = build_proposal(snapshot, catalog=crd_catalog())
    out = sys.stdout
    for name in sorted(proposal.files, key=lambda p: (p != CONFIG_FILE, p)):
        out.write(f"==> {display_path(name)} <==\n")
        out.write(proposal.files[name].decode("utf-8", "backslashreplace"))
        out.write("\n")
    out.write(f"==> pull request on {BRANCH}: {TITLE} <==\n")
    out.write(onboarding_body(proposal, args.forge or "") + "\n")
    out.flush()
    return EXIT_PROPOSED
