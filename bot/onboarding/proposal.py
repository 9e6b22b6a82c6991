"""The files an onboarding pull request adds (design.md 6.6). Pure.

``.ichor.yaml`` names the detected targets, relaxed, with a comment on every key; each target
gets a README.md and a fully commented ``.gittargetignore`` where it has none, the bootstrap
files the operator itself stages, so a freshly onboarded target accepts its own files and
ignores nothing until a person edits it. Paths come from the repository: in YAML they are
quoted whenever a plain scalar could read as something else, in markdown they are escaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

import yaml

from bot.changes.overlay import overlay
from bot.checks.markdown_text import inline_path
from bot.config.schema import parse_config
from bot.gate.policy import CONFIG_FILE, DEFAULT_PLACEMENT
from bot.gate.report import TargetReport
from bot.gate.run import run_gate
from bot.git.snapshot import Snapshot
from bot.ignore.rules import IGNORE_FILE
from bot.onboarding.body import onboarding_body as onboarding_body  # the builders, in one place
from bot.onboarding.detect import Candidate
from bot.paths import display_path, join

README = "README.md"
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")


def proposal_files(candidates: Sequence[Candidate], snapshot: Snapshot) -> dict[str, bytes]:
    """Path → content: ``.ichor.yaml``, then each target's README.md and ``.gittargetignore``
    unless the snapshot has one (a README.md in another case counts: on a checkout that folds
    case, two would collide)."""
    present = {entry.path.casefold() for entry in snapshot}
    files = {CONFIG_FILE: ichor_yaml(candidates).encode()}
    for candidate in candidates:
        readme = join(candidate.path, README)
        if readme.casefold() not in present:
            files[readme] = target_readme(candidate).encode()
        ignore = join(candidate.path, IGNORE_FILE)
        if snapshot.get(ignore) is None:
            files[ignore] = ignore_template(candidate).encode()
    return files


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar that reads back as exactly this string: plain when it is
    unambiguous (``clusters/prod``), else double-quoted (``"123"``, ``"on"``, ``"a: b"``)."""
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text:
        return text
    return json.dumps(text)  # JSON's escapes are YAML's; ASCII only, so any encoding reads it


def _shown_path(path: str) -> str:
    return display_path(path) if path else "."


def _found(candidate: Candidate) -> str:
    objects = f"{candidate.objects} Kubernetes object{'s' * (candidate.objects != 1)}"
    found = f"{objects} in {candidate.documents} YAML document{'s' * (candidate.documents != 1)}"
    if candidate.has_kustomization:
        found += ", with a kustomization.yaml at its top"
    return found


_HEADER = """\
# Ichor Bot's configuration for this repository, proposed by its onboarding pull request.
#
# Ichor Bot guards GitTarget paths: folders that a GitOps operator mirrors from a cluster and
# owns whole. On every push and pull request it checks each target below and reports the
# verdict as the check `ichor/acceptance`. Edit this file freely before merging. For a pull
# request it is read from the base branch, so a pull request cannot loosen its own gate.

# The format of this file; 1 is the only version.
version: 1

# The folders to guard, found by looking for folders whose YAML is mostly Kubernetes objects.
# A target's folder may hold Kubernetes objects (one per YAML document), kustomization.yaml
# files, README.md, .sops.yaml, harmless passengers such as LICENSE or *.md, and whatever its
# own .gittargetignore names; anything else is refused. Two targets may not overlap.
#
# Keys of a target:
#   name:  what comments, commands and the check call it: 1-63 of [a-z0-9-], unique.
#   path:  its folder, relative to the repository root ('.' is the whole repository).
#   mode:  relaxed, the check alone decides; strict, new objects also wait for an /approve.
# Optional keys, shown commented out under each target:
#   placement:    where the operator writes each object's file, relative to the target.
#   capabilities: a recorded API discovery file (custom types), kept outside every target.
targets:
"""

_COMMANDS = """\

# Who may run the comment commands that change things (/approve, /reject, /ignore ...), and
# whether a pull request's author may /approve the new objects of their own pull request.
# These are the defaults; remove the '#' to change them.
#commands:
#  min_permission: write          # read | triage | write | maintain | admin
#  allow_author_approval: false
"""


def ichor_yaml(candidates: Sequence[Candidate]) -> str:
    """The proposed ``.ichor.yaml``: version 1, one relaxed target per candidate."""
    lines = [_HEADER.rstrip("\n")]
    for candidate in candidates:
        lines += [
            f"  # {_comment(_found(candidate))}",
            f"  - name: {yaml_scalar(candidate.name)}",
            f"    path: {yaml_scalar(candidate.path or '.')}",
            "    mode: relaxed",
            f'    #placement: "{DEFAULT_PLACEMENT}"',
        ]
        if candidate.path:  # at the root, a capabilities file would be inside the target
            lines.append(f"    #capabilities: {yaml_scalar(candidate.name + '.capabilities.yaml')}")
    return "\n".join(lines) + "\n" + _COMMANDS


def _comment(text: str) -> str:
    # A comment ends at the line's end; a path cannot hold a newline, but a comment must never
    # turn into YAML even so.
    return text.replace("\r", " ").replace("\n", " ")


def target_readme(candidate: Candidate) -> str:
    """The README.md of a target: what the folder is and what may live in it."""
    path = inline_path(_shown_path(candidate.path))
    return f"""\
# GitTarget path {path}

This folder is the target `{candidate.name}` of the repository's `.ichor.yaml`. Ichor Bot
checks it on every push and pull request (the check `ichor/acceptance`), and a GitOps operator
may mirror a cluster into it and own it whole. So that both can trust what is here, it holds
only:

- Kubernetes objects in YAML files: every document has `apiVersion`, `kind` and
  `metadata.name`, and a Secret is encrypted with SOPS (`*.sops.yaml`);
- `kustomization.yaml` files that use the fields kustomize builds without plugins or
  generators;
- this README.md, `.sops.yaml`, and harmless passengers: other `*.md` files, `LICENSE`,
  `NOTICE`, `COPYING`, `.gitignore`, `.gitattributes`, `.gitkeep`;
- whatever `.gittargetignore` in this folder names. As proposed it ignores nothing: every
  line of it is a commented example.

Anything else is refused, and the check names each file with its fix. `ichor-bot check` at
the repository root shows the same report before you push.
"""


def ignore_template(candidate: Candidate) -> str:
    """A ``.gittargetignore`` in which every line is a comment: a no-op until edited."""
    where = _comment(_shown_path(candidate.path))
    return f"""\
# .gittargetignore of the target {candidate.name} ({where}).
#
# Files this names are left alone: Ichor Bot does not check them and the operator never
# manages them. Every line here is a comment, so nothing is ignored yet. To use an example,
# delete the '#' at the start of its line (only the '#': a leading space would become part of
# the pattern).
#
# The syntax is .gitignore's: one pattern per line, relative to this folder. A '/' at the
# start anchors a pattern here, a '/' at the end matches folders only, '*' matches within one
# name, '**' across folders, and '!' takes back what an earlier line ignored. Only this file,
# at the top of the target, is read; a .gittargetignore in a subfolder is refused.
#
# Accepted without a line here: README.md and other *.md files, LICENSE, NOTICE, COPYING,
# .gitignore, .gitattributes, .gitkeep, .keep, .sops.yaml and kustomization.yaml.
#
# Never hide the objects themselves ('*', '**', '/', '*.yaml', '**/*.yaml' or a path where an
# object's file belongs): the check refuses such a line, because the operator would no
# longer see its own files.
#
# A folder of documentation, or of scripts:
#/docs/
#/scripts/
#
# Loose notes anywhere in the target:
#*.txt
#
# YAML kept here but not managed (examples, or values for a chart kept elsewhere) ...
#/examples/*.yaml
# ... except one file, which stays managed:
#!/examples/namespace.yaml
"""


def proposal_reports(snapshot: Snapshot, files: Mapping[str, bytes]) -> dict[str, TargetReport]:
    """The gate on the tree the proposal makes (``snapshot`` with ``files`` written), by
    target name: what the onboarding body shows. Empty when the proposed ``.ichor.yaml`` has
    issues, which a proposal built by :func:`proposal_files` never has."""
    result = parse_config(files[CONFIG_FILE])
    if result.config is None:
        return {}
    report = run_gate(overlay(snapshot, files), result.config.gate_policy())
    return {target.name: target for target in report.targets}
