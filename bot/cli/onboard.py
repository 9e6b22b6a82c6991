"""``ichor-bot onboard <forge> <owner/repo>``: propose ``.ichor.yaml`` again on request
(design.md 6.6), in this process, with the worker's settings and state: a declined proposal is
forgotten and a new pull request opened, unless one is open already. ``ichor-bot onboard
--dry-run [PATH]`` prints the proposal instead, with no forge (``bot.cli.onboard_preview``)."""

from __future__ import annotations

import argparse
from typing import Any

from bot.errors import UsageError
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings

FORGES = ("github", "gitlab", "gitea")


def add_onboard_parser(subparsers: Any, formatter: type[argparse.HelpFormatter]) -> None:
    """Register ``onboard`` on the CLI's subcommand action (``argparse._SubParsersAction``)."""
    parser = subparsers.add_parser(
        "onboard",
        help="propose .ichor.yaml for a repository, or preview the proposal (--dry-run)",
        usage="ichor-bot onboard FORGE REPO [--installation ID] [--branch BRANCH]\n"
        "       ichor-bot onboard --dry-run [PATH] [--rev REV] [--forge FORGE]",
        description="Open the onboarding pull request on ichor/bootstrap for REPO, as the "
        "worker would, even if an earlier one was closed; or, with --dry-run, print what it "
        "would propose for the directory PATH (default: .) or its revision REV: every file "
        "and the pull request's description with the verdicts, with no forge and no "
        "credentials.",
        epilog="examples:\n  ichor-bot onboard github acme/gitops --installation 42\n"
        "  ichor-bot onboard --dry-run ~/src/gitops\n"
        "  ichor-bot onboard --dry-run . --rev origin/main --forge gitlab\n",
        formatter_class=formatter,
    )
    parser.add_argument(
        "where",
        nargs="*",
        metavar="FORGE REPO | PATH",
        help="the repository's forge (github, gitlab, gitea) and owner/name (GitLab: the "
        "project path); with --dry-run, the directory or repository to preview (default: .)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the proposal for PATH instead of opening it, with no forge and no "
        "credentials (default: open it on the forge)",
    )
    parser.add_argument(
        "--rev", help="with --dry-run: the committed tree at this revision (default: the disk)"
    )
    parser.add_argument(
        "--forge",
        choices=FORGES,
        help="with --dry-run: whose steps to require the check the description gives "
        "(default: all three)",
    )
    parser.add_argument(
        "--installation",
        type=int,
        help="the GitHub App installation acting on REPO (default: none; required on GitHub)",
    )
    parser.add_argument(
        "--branch", help="the branch to propose into (default: the repository's HEAD)"
    )


def forge_and_repo(args: argparse.Namespace) -> tuple[str, str]:
    """FORGE REPO, without --dry-run."""
    if args.rev is not None or args.forge is not None:
        raise UsageError("--rev and --forge are for --dry-run")
    if len(args.where) != 2:
        raise UsageError(
            "name the forge and the repository (onboard github acme/gitops), or preview a "
            "directory with --dry-run [PATH]"
        )
    forge, repo = args.where
    if forge not in FORGES:
        raise UsageError(f"{forge!r}: the forge is one of {', '.join(FORGES)}")
    return forge, repo


def run_onboard(args: argparse.Namespace, settings: Settings) -> int:
    from bot.state.memory import memory_state
    from workers.context import build_context
    from workers.onboarding import audit_onboarding, audited, onboard

    forge, name = forge_and_repo(args)
    if forge == "github" and args.installation is None:
        raise UsageError("on GitHub, pass --installation (the App installation's id)")
    if settings.redis_url:
        import redis

        from bot.state.redis_state import redis_state

        state = redis_state(redis.Redis.from_url(settings.redis_url))
    else:
        state = memory_state()
    context = build_context(settings, state)
    repo = repo_ref(settings, forge, name, args.installation, args.branch)
    adapter = context.adapter_for(forge, repo.full_name)
    outcome = onboard(context, adapter, forge, repo, requested=True)
    if outcome is None:
        raise UsageError(f"{repo.full_name} is a local repository: the bot cannot push there")
    audit_onboarding(context, forge, repo.full_name, audited(outcome), outcome.pull_request_url)
    where = f": {outcome.pull_request_url}" if outcome.pull_request_url else ""
    why = f" ({outcome.reason})" if outcome.reason else ""
    print(f"{repo.full_name}: {outcome.result}{where}{why}")
    return 0 if outcome.result in ("pr-opened", "pr-existing") else 1


def repo_ref(
    settings: Settings, forge: str, full_name: str, installation: int | None, branch: str | None
) -> RepoRef:
    from bot.repos.names import gitea_repository, github_repository, gitlab_repository

    # Validated as a payload's name would be, before it reaches a URL or a path.
    checks = {"github": github_repository, "gitlab": gitlab_repository}
    problem = checks.get(forge, gitea_repository)(full_name)
    if problem is not None:
        raise UsageError(f"{full_name!r}: {problem}")
    base = {"github": settings.github_url, "gitlab": settings.gitlab_url}.get(forge)
    base = (base or settings.gitea_url or "").rstrip("/")
    if not base:
        raise UsageError(f"no URL for {forge}: set ICHOR_{forge.upper()}_URL")
    return RepoRef(
        ForgeKind(forge),
        full_name,
        clone_url=f"{base}/{full_name}.git",
        web_url=f"{base}/{full_name}",
        default_branch=branch,
        installation_id=installation,
    )
