"""The texts an onboarding pull request writes (design.md 6.6). Pure.

``.ichor.yaml`` names the proposed targets, relaxed, with a comment on every key; each target
gets a README.md and a fully commented ``.gittargetignore``, the bootstrap files the operator
itself stages, so a freshly onboarded target accepts its own files and ignores nothing until a
person edits it. Paths come from the repository: in YAML they are quoted whenever a plain
scalar could read as something else, in markdown they are escaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

import yaml

from bot.checks.markdown_text import inline_path
from bot.gate.policy import DEFAULT_PLACEMENT
from bot.onboarding.detect import Candidate
from bot.paths import display_path

_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar that reads back as exactly this string: plain when it is
    unambiguous (``clusters/prod``), else double-quoted (``"123"``, ``"on"``, ``"a: b"``)."""
    if _PLAIN.fullmatch(text) and yaml.safe_load(text) == text:
        return text
    return json.dumps(text)  # JSON's escapes are YAML's; ASCII only, so any encoding reads it


def _shown_path(path: str) -> str:
    return display_path(path) if path else "."


def _found(candidate: Candidate) -> str:
    if candidate.documents == 0:
        return "a new folder, for the operator to mirror a cluster into: nothing else qualified"
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

# The folders to guard: folders whose YAML is mostly Kubernetes objects, each one the check
# accepts or refuses only for issues with a fix (the pull request lists them).
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


def ichor_yaml(
    candidates: Sequence[Candidate], capabilities: Mapping[str, str] | None = None
) -> str:
    """The proposed ``.ichor.yaml``: version 1, one relaxed target per candidate, naming the
    capabilities file ``capabilities`` gives a target (by name), if any."""
    given = capabilities or {}
    lines = [_HEADER.rstrip("\n")]
    for candidate in candidates:
        lines += [
            f"  # {_comment(_found(candidate))}",
            f"  - name: {yaml_scalar(candidate.name)}",
            f"    path: {yaml_scalar(candidate.path or '.')}",
            "    mode: relaxed",
            f'    #placement: "{DEFAULT_PLACEMENT}"',
        ]
        written = given.get(candidate.name)
        if written is not None:
            lines += [
                "    # The types its objects use that Kubernetes itself does not serve, written "
                "by Ichor",
                "    # Bot from the repository's CRDs and a catalog: review it (the pull request "
                "says where",
                "    # each entry came from), or replace it with `kubectl api-resources -o wide`.",
                f"    capabilities: {yaml_scalar(written)}",
            ]
        elif candidate.path:  # at the root, a capabilities file would be inside the target
            lines.append(f"    #capabilities: {yaml_scalar(candidate.path + '.capabilities.txt')}")
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
