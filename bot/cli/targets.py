"""Which tree and which targets a command works on: shared by ``check`` and ``types``."""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass

from bot.config.paths import normalize_repo_path
from bot.config.schema import load_config
from bot.errors import UsageError
from bot.gate.policy import CONFIG_FILE, GatePolicy, TargetPolicy
from bot.gate.report import ConfigIssue
from bot.git.directory import read_directory
from bot.git.repository import GitRepository
from bot.git.snapshot import EntryKind, Snapshot
from bot.paths import display_path
from bot.registry.capabilities import (
    MAX_CAPABILITIES_BYTES,
    Capabilities,
    CapabilitiesError,
    parse_capabilities,
)

# A common misspelling of CONFIG_FILE: pointed at, never read, so one name means one thing.
MISNAMED_CONFIG_FILE = ".ichor.yml"


def add_tree_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--rev``, ``--path``, ``--capabilities``: how every command names its tree and targets."""
    parser.add_argument(
        "--rev",
        help=f"{verb} the committed tree at this revision, e.g. HEAD (default: the directory "
        "on disk, uncommitted files included)",
    )
    parser.add_argument(
        "--path",
        dest="target",
        metavar="TARGET",
        help=f"{verb} this one repo-relative directory as an ad-hoc target; .ichor.yaml is not "
        "read (default: the targets of .ichor.yaml)",
    )
    parser.add_argument(
        "--capabilities",
        metavar="FILE",
        help="with --path: the target's recorded API discovery or `kubectl api-resources -o "
        "wide` output, a file on disk (default: built-in types and the target's CRDs only)",
    )


def read_capabilities_file(path: str | None, target: str | None) -> Capabilities | None:
    """``--capabilities FILE``, read at the edge: a problem is a usage error naming the file."""
    if path is None:
        return None
    if target is None:
        raise UsageError(
            "--capabilities needs --path; a target of .ichor.yaml names its file with its "
            "'capabilities' key"
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CAPABILITIES_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--capabilities {path}: {exc.strerror}") from None
    try:
        return parse_capabilities(data)
    except CapabilitiesError as exc:
        raise UsageError(f"--capabilities {path}: {exc}") from None


def open_snapshot(repo: str, rev: str | None) -> Snapshot:
    """The git objects at ``rev``, or the directory as it is on disk when ``rev`` is None."""
    if not os.path.lexists(repo):
        raise UsageError(f"{repo}: no such file or directory")
    if rev is not None:
        return GitRepository(repo).snapshot(rev)
    return read_directory(repo)


def adhoc_target(path_argument: str, capabilities: Capabilities | None = None) -> TargetPolicy:
    """A target for ``--path``, named after its last segment."""
    try:
        path = normalize_repo_path(path_argument)
    except ValueError as exc:
        raise UsageError(f"--path {path_argument!r}: {exc}") from None
    last = path.rpartition("/")[2].lower()
    name = re.sub(r"[^a-z0-9-]+", "-", last).strip("-")[:63].strip("-")
    return TargetPolicy(name or "root", path, loaded_capabilities=capabilities)


def _require_directory(snapshot: Snapshot, path: str, repo: str) -> None:
    """``--path`` must name a directory of the tree: a typo would otherwise be ACCEPTED, empty."""
    if not path:
        return
    shown = display_path(path)
    entry = snapshot.get(path)
    if entry is not None and entry.kind is EntryKind.FILE:
        raise UsageError(
            f"--path {shown} is a file; a target is a directory (pass a file as PATH to check "
            "the target that holds it)"
        )
    if entry is None and next(iter(snapshot.under(path)), None) is None:
        raise UsageError(f"--path {shown} names nothing in {repo}: no such directory")


@dataclass(frozen=True, slots=True)
class Targets:
    """The policy to run, or the configuration issues that stop the run."""

    policy: GatePolicy | None
    config_issues: tuple[ConfigIssue, ...] = ()


def resolve_targets(
    snapshot: Snapshot, repo: str, adhoc: TargetPolicy | None, rev: str | None = None
) -> Targets:
    """``--path``'s target when given (see :func:`adhoc_target`), else ``.ichor.yaml``'s."""
    if adhoc is not None:
        _require_directory(snapshot, adhoc.path, repo)
        return Targets(GatePolicy((adhoc,)))
    result = load_config(snapshot)
    if not result.present:
        if rev is not None:
            _require_committed_config(repo, rev)
        hint = "add one, or pass --path TARGET to work on one path without configuration"
        if snapshot.get(MISNAMED_CONFIG_FILE) is not None:
            hint = f"found {MISNAMED_CONFIG_FILE}: rename it to {CONFIG_FILE}, the only name read"
        at = f" at {rev}" if rev is not None else ""
        raise UsageError(f"no {CONFIG_FILE} in {repo}{at}; {hint}")
    if result.config is None:
        return Targets(None, result.issues)
    return Targets(result.config.gate_policy())


def _require_committed_config(repo: str, rev: str) -> None:
    """With ``--rev``, a configuration written but not committed is the likely mistake (the
    first run in a new repository): say so rather than that there is none."""
    if not os.path.lexists(os.path.join(repo, CONFIG_FILE)):
        return
    state = (
        "it is staged but not committed"
        if GitRepository(repo).in_index(CONFIG_FILE)
        else "the one on disk is not committed"
    )
    raise UsageError(
        f"no {CONFIG_FILE} at {rev}: {state}; commit it, or leave out --rev to check the files "
        "on disk"
    )
