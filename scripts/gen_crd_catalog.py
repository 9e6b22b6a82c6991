#!/usr/bin/env python3
"""Generate ``bot/registry/crd_catalog.json``, the catalog of well-known CRD types.

Run by a maintainer to add a project or move one to a newer release; the output is committed.
Two steps, so the second needs nothing but a directory of YAML files:

    .venv/bin/python scripts/gen_crd_catalog.py collect --mirrors DIR --into CRDS [--sources F]
    .venv/bin/python scripts/gen_crd_catalog.py build CRDS [--output FILE|-]

``collect`` reads ``scripts/crd_catalog_sources.json`` (per project: repository, release tag,
the commit it must resolve to, the paths of its CRD manifests, its licence) and copies those
manifests out of local bare clones under DIR (``owner+name/repo``, ``owner+name`` or
``owner/name.git``) into ``CRDS/<project>/``, beside a ``source.json`` naming the commit. It
refuses a tag that resolves to another commit and a licence file that does not read as the
declared licence, so the provenance cannot drift silently.

``build`` reads every ``CRDS/<project>/source.json`` and the CustomResourceDefinitions in the
YAML files beside it (other documents are skipped) and writes the catalog: per type only group,
kind, plural, scope and each version's served and storage flags (no schema, no text), and per
project where it came from. Each CRD is read with the registry's own reader
(``bot.registry.crd``), so the catalog means what the gate means. A (group, kind) or a
(group, plural) claimed by two projects is an error: narrow one project's paths.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from bot.registry.catalog import CATALOG_FORMAT, parse_catalog
from bot.registry.crd import crd_facts, is_crd

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "scripts" / "crd_catalog_sources.json"
DEFAULT_OUTPUT = ROOT / "bot" / "registry" / "crd_catalog.json"
SOURCE_FILE = "source.json"
YAML_SUFFIXES = (".yaml", ".yml")
PROJECT_KEYS = ("name", "repository", "ref", "commit", "paths", "license", "note")
# How each declared licence's file begins (after blank lines): a cheap check, not a classifier.
LICENCE_MARKERS = {
    "Apache-2.0": "Apache License",
    "MIT": "The MIT License",
    "AGPL-3.0-only": "GNU AFFERO GENERAL PUBLIC LICENSE",
    "AGPL-3.0-or-later": "GNU AFFERO GENERAL PUBLIC LICENSE",
}
LICENCE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "COPYING")


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, reading a plain ``=`` (an enum value in some schemas) as the string
    it is: PyYAML resolves it to the YAML 1.1 ``value`` tag, which it cannot construct."""


_Loader.add_constructor("tag:yaml.org,2002:value", yaml.SafeLoader.construct_yaml_str)


class GenerationError(Exception):
    pass


# --- collect -------------------------------------------------------------------------------


def _git(git_dir: Path, *args: str) -> bytes:
    done = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, check=False)
    if done.returncode != 0:
        raise GenerationError(f"git {' '.join(args)} in {git_dir}: {done.stderr.decode().strip()}")
    return done.stdout


def _mirror(mirrors: Path, repository: str) -> Path:
    owner, name = repository.split("/")
    for candidate in (
        mirrors / f"{owner}+{name}" / "repo",
        mirrors / f"{owner}+{name}",
        mirrors / owner / f"{name}.git",
        mirrors / owner / name,
    ):
        if (candidate / "HEAD").is_file():
            return candidate
    raise GenerationError(f"no bare clone of {repository} under {mirrors}")


def _licence(git_dir: Path, commit: str, declared: str) -> None:
    marker = LICENCE_MARKERS.get(declared)
    if marker is None:
        raise GenerationError(f"licence {declared!r} has no marker in LICENCE_MARKERS")
    listed = _git(git_dir, "ls-tree", "--name-only", commit).decode().splitlines()
    for name in LICENCE_FILES:
        if name in listed:
            text = _git(git_dir, "cat-file", "blob", f"{commit}:{name}").decode("utf-8", "replace")
            if text.lstrip().upper().startswith(marker.upper()):
                return
            raise GenerationError(f"{name} at {commit} does not begin {marker!r} ({declared})")
    raise GenerationError(f"no licence file at {commit}")


def collect(mirrors: Path, into: Path, sources: Path = SOURCES) -> int:
    projects = json.loads(sources.read_text(encoding="utf-8"))
    for project in projects:
        git_dir = _mirror(mirrors, project.get("mirror") or project["repository"])
        commit = project["commit"]
        _git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}")
        # A tag must still point where it pointed (a ref may also be the commit itself).
        tagged = _git(git_dir, "rev-parse", f"{project['ref']}^{{commit}}").decode().strip()
        if tagged != commit:
            raise GenerationError(f"{project['name']}: {project['ref']} is {tagged}, not {commit}")
        _licence(git_dir, commit, project["license"])
        out = into / project["name"]
        listed = _git(
            git_dir, "ls-tree", "-r", "-z", "--name-only", commit, "--", *project["paths"]
        )
        files = [p for p in listed.decode().split("\0") if p.endswith(YAML_SUFFIXES)]
        if not files:
            raise GenerationError(f"{project['name']}: no YAML file under {project['paths']}")
        for path in files:
            target = out / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_git(git_dir, "cat-file", "blob", f"{commit}:{path}"))
        source = {k: project[k] for k in PROJECT_KEYS if k in project}
        (out / SOURCE_FILE).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
        print(f"{project['name']}: {len(files)} file(s) at {commit[:12]}", file=sys.stderr)
    return 0


# --- build ---------------------------------------------------------------------------------


def _documents(path: Path) -> Iterator[object]:
    try:
        yield from yaml.load_all(path.read_text(encoding="utf-8"), Loader=_Loader)
    except yaml.YAMLError as exc:
        raise GenerationError(f"{path}: not YAML: {str(exc).splitlines()[0]}") from None


def _versions(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    facts = crd_facts(obj)
    assert facts is not None
    raw = obj["spec"].get("versions") or []
    storage = {v.get("name"): v.get("storage") is True for v in raw if isinstance(v, Mapping)}
    return [
        {"name": v.name, "served": v.served, "storage": storage.get(v.name, False)}
        for v in facts.versions
    ]


def project_types(directory: Path, project: str) -> list[dict[str, Any]]:
    """Every CRD in the YAML files under ``directory``, one entry per (group, kind)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(p for p in directory.rglob("*") if p.suffix in YAML_SUFFIXES):
        for obj in _documents(path):
            if not is_crd(obj):
                continue
            assert isinstance(obj, Mapping)
            facts = crd_facts(obj)
            assert facts is not None
            if not facts.usable or facts.scope is None or facts.problems:
                problems = "; ".join(facts.problems) or "incomplete identity"
                raise GenerationError(f"{path}: CRD {facts.name!r}: {problems}")
            entry = {
                "group": facts.group,
                "kind": facts.kind,
                "plural": facts.plural,
                "scope": facts.scope,
                "versions": _versions(obj),
                "project": project,
            }
            key = (facts.group, facts.kind)
            if key in found and found[key] != entry:
                raise GenerationError(
                    f"{path}: {facts.kind}.{facts.group} is defined twice, differently"
                )
            found[key] = entry
    return list(found.values())


def _check_unique(types: Sequence[dict[str, Any]]) -> None:
    kinds: dict[tuple[str, str], str] = {}
    plurals: dict[tuple[str, str], str] = {}
    for t in types:
        for seen, key in ((kinds, (t["group"], t["kind"])), (plurals, (t["group"], t["plural"]))):
            if key in seen and seen[key] != t["project"]:
                raise GenerationError(
                    f"{'/'.join(key)} is in {seen[key]} and in {t['project']}: narrow the paths"
                )
            if key in seen:
                raise GenerationError(f"{'/'.join(key)} twice in {t['project']}")
            seen[key] = t["project"]


def render(crds: Path) -> str:
    """The JSON text: compact, one project or type per line so a change reads well in review."""
    projects: list[dict[str, Any]] = []
    types: list[dict[str, Any]] = []
    for source in sorted(crds.glob(f"*/{SOURCE_FILE}")):
        project = json.loads(source.read_text(encoding="utf-8"))
        found = project_types(source.parent, project["name"])
        if not found:
            raise GenerationError(f"{source.parent}: no CustomResourceDefinition")
        projects.append({k: project[k] for k in PROJECT_KEYS if k in project})
        types.extend(found)
    if not projects:
        raise GenerationError(f"no */{SOURCE_FILE} under {crds}")
    _check_unique(types)
    types.sort(key=lambda t: (t["group"], t["kind"]))

    def dump(value: object) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    lines = ["{", f'"catalog":{CATALOG_FORMAT},', '"generator":"scripts/gen_crd_catalog.py",']
    lines.append('"projects":[')
    lines.append(",\n".join(dump(p) for p in projects))
    lines.append("],")
    lines.append('"types":[')
    lines.append(",\n".join(dump(t) for t in types))
    lines.append("]}")
    text = "\n".join(lines) + "\n"
    parse_catalog(json.loads(text))  # the hand-joined text must read back as a catalog
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    steps = parser.add_subparsers(dest="step", required=True)
    collect_step = steps.add_parser("collect", help="copy the CRD manifests out of bare clones")
    collect_step.add_argument("--mirrors", type=Path, required=True, help="dir of bare clones")
    collect_step.add_argument("--into", type=Path, required=True, help="dir to fill")
    collect_step.add_argument("--sources", type=Path, default=SOURCES, help="the project list")
    build_step = steps.add_parser("build", help="write the catalog from collected manifests")
    build_step.add_argument("crds", type=Path, help="the dir `collect` filled")
    build_step.add_argument("--output", default=str(DEFAULT_OUTPUT), help="file to write, or -")
    args = parser.parse_args(argv)
    try:
        if args.step == "collect":
            return collect(args.mirrors, args.into, args.sources)
        text = render(args.crds)
    except (GenerationError, OSError, ValueError, KeyError, TypeError) as exc:
        print(f"gen_crd_catalog: {exc}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
