"""Record what ``kustomize build`` makes of every kustomization folder of the shared corpora.

For each folder holding a ``kustomization.yaml`` (or ``.yml``, or ``Kustomization``) whose
kustomizations (its own and every one its ``resources:`` reach) use only the features the gate
accepts, this runs ``kubectl kustomize`` on a copy of the folder whose top kustomization also
asks for ``buildMetadata: [originAnnotations]``, and records each object it builds as
``[file, apiVersion, kind, namespace, name]`` (``file`` relative to the folder, from the origin
annotation). The trees named in ``CASES`` under ``fixtures/content/`` are recorded the same
way. Folders that use a refused feature, or that kustomize cannot build, are listed
with the reason. The gate's identities are compared with this record by
``tests/gate/content/test_kustomize_reference.py``; the record is checked in so the test needs no
kubectl.

    .venv/bin/python scripts/kustomize_reference.py [--corpora ../shared/corpora] \\
        [-o fixtures/content/kustomize_reference.json]
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from bot.gate.content.kustomize import (
    kustomization_facts,
    looks_like_kustomization,
    resolve_reference,
)
from bot.yaml.documents import parse_yaml

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
ORIGIN = "config.kubernetes.io/origin"
FIXTURES = ROOT / "fixtures" / "content"
CASES = ("kustomize_cases",)  # trees under fixtures/content/ recorded beside the corpora


def kustomization_in(tree: Path, folder: str) -> str | None:
    for name in NAMES:
        if (tree / folder / name).is_file():
            return posixpath.join(folder, name) if folder else name
    return None


def refused_features(tree: Path, folder: str) -> list[str]:
    """Feature codes the gate refuses, over every kustomization the folder's build reaches."""
    found: set[str] = set()
    pending, seen = [folder], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        path = kustomization_in(tree, current)
        if path is None:
            continue
        parsed = parse_yaml((tree / path).read_bytes())
        if parsed.error is not None:
            found.add("unparseable")
            continue
        doc = parsed.documents[0].value if parsed.documents else None
        if not isinstance(doc, dict) or not looks_like_kustomization(doc):
            found.add("not-a-kustomization")
            continue
        facts = kustomization_facts(doc)
        found.update(facts.features)
        for reference in (*facts.resources, *facts.patch_paths):
            resolved = resolve_reference(current, reference)
            inside = resolved is not None and (
                not folder or resolved == folder or resolved.startswith(folder + "/")
            )
            if not inside:
                found.add("outside-folder")
            elif resolved is not None and (tree / resolved).is_dir():
                pending.append(resolved)
    return sorted(found)


def build(tree: Path, folder: str, kubectl: str) -> tuple[list[list[str]] | None, str]:
    """The objects kustomize builds from ``folder``, or None and kustomize's complaint."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "folder"
        shutil.copytree(tree / folder, copy, symlinks=True)
        top = kustomization_in(copy, "")
        assert top is not None
        doc = next(iter(yaml.safe_load_all((copy / top).read_bytes())), None) or {}
        options = doc.get("buildMetadata") or []
        doc["buildMetadata"] = [*options, "originAnnotations"]
        (copy / top).write_text(yaml.safe_dump(doc, sort_keys=False))
        done = subprocess.run(
            [kubectl, "kustomize", str(copy)], capture_output=True, text=True, timeout=120
        )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return None, lines[-1][:300] if lines else f"exit {done.returncode}"
    objects: list[list[str]] = []
    output = parse_yaml(done.stdout.encode())
    assert output.error is None, output.error
    for document in output.documents:
        obj = document.value
        if not isinstance(obj, dict):
            continue
        meta = obj.get("metadata") or {}
        origin = yaml.safe_load((meta.get("annotations") or {}).get(ORIGIN, "")) or {}
        objects.append(
            [
                str(origin.get("path", "")),
                str(obj.get("apiVersion", "")),
                str(obj.get("kind", "")),
                str(meta.get("namespace") or ""),
                str(meta.get("name", "")),
            ]
        )
    return sorted(objects), ""


def folders(tree: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        if any(name in filenames for name in NAMES):
            rel = os.path.relpath(dirpath, tree)
            yield "" if rel == "." else Path(rel).as_posix()


def corpus_reference(tree: Path, kubectl: str) -> dict[str, Any]:
    built: dict[str, list[list[str]]] = {}
    refused: dict[str, str] = {}
    failed: dict[str, str] = {}
    for folder in folders(tree):
        features = refused_features(tree, folder)
        if features:
            refused[folder] = ", ".join(features)
            continue
        objects, complaint = build(tree, folder, kubectl)
        if objects is None:
            failed[folder] = complaint
        else:
            built[folder] = objects
    return {"built": built, "refused": refused, "build_failed": failed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=ROOT.parent / "shared" / "corpora")
    parser.add_argument(
        "-o", type=Path, default=ROOT / "fixtures" / "content" / "kustomize_reference.json"
    )
    parser.add_argument("--kubectl", default=shutil.which("kubectl") or "kubectl")
    args = parser.parse_args()
    version = subprocess.run(
        [args.kubectl, "version", "--client"], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    corpora = {
        corpus.name: corpus_reference(corpus / "tree", args.kubectl)
        for corpus in sorted(args.corpora.iterdir())
        if (corpus / "tree").is_dir()
    }
    fixtures = {name: corpus_reference(FIXTURES / name / "tree", args.kubectl) for name in CASES}
    record = {
        "kubectl": [line for line in version if line.strip()],
        "corpora": corpora,
        "fixtures": fixtures,
    }
    args.o.write_text(json.dumps(record, indent=None, sort_keys=True, separators=(",", ":")))
    for name, result in (corpora | fixtures).items():
        counts = {key: len(value) for key, value in result.items()}
        print(f"{name}: {counts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
