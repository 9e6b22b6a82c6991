"""Which tree and which targets a command works on: shared by ``check`` and ``types``."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

from bot.config import load_config
from bot.config_paths import normalize_repo_path
from bot.dir_snapshot import read_directory
from bot.errors import UsageError
from bot.gate.policy import CONFIG_FILE, GatePolicy, TargetPolicy
from bot.gate.report import ConfigIssue
from bot.git_snapshot import GitRepository
from bot.snapshot import Snapshot


def add_tree_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """``PATH``, ``--rev`` and ``--path``: how every command names its tree and targets."""
    parser.add_argument(
        "repo", nargs="?", default=".", metavar="PATH", help="repository (default: .)"
    )
    parser.add_argument("--rev", help=f"{verb} the committed tree at this revision (e.g. HEAD)")
    parser.add_argument(
        "--path",
        dest="target",
        metavar="TARGET",
        help=f"{verb} this one repo-relative path as a target; .ichor.yaml is not read",
    )


def open_snapshot(repo: str, rev: str | None) -> Snapshot:
    """The git objects at ``rev``, or the directory as it is on disk when ``rev`` is None."""
    if rev is not None:
        return GitRepository(repo).snapshot(rev)
    return read_directory(repo)


def adhoc_target(path_argument: str) -> TargetPolicy:
    """A target for ``--path``, named after its last segment."""
    try:
        path = normalize_repo_path(path_argument)
    except ValueError as exc:
        raise UsageError(f"--path {path_argument!r}: {exc}") from None
    last = path.rpartition("/")[2].lower()
    name = re.sub(r"[^a-z0-9-]+", "-", last).strip("-")[:63].strip("-")
    return TargetPolicy(name or "root", path)


@dataclass(frozen=True, slots=True)
class Targets:
    """The policy to run, or the configuration issues that stop the run."""

    policy: GatePolicy | None
    config_issues: tuple[ConfigIssue, ...] = ()


def resolve_targets(snapshot: Snapshot, repo: str, adhoc: TargetPolicy | None) -> Targets:
    """``--path``'s target when given (see :func:`adhoc_target`), else ``.ichor.yaml``'s."""
    if adhoc is not None:
        return Targets(GatePolicy((adhoc,)))
    result = load_config(snapshot)
    if not result.present:
        raise UsageError(
            f"no {CONFIG_FILE} in {repo}; add one, or pass --path TARGET to work on one path "
            "without configuration"
        )
    if result.config is None:
        return Targets(None, result.issues)
    return Targets(result.config.gate_policy())
