"""Trim the recorded forge API descriptions to what the fake forges serve, for ``fixtures/``.

The fakes in ``tests/fakeforge`` validate every request and answer against the forges' own
API descriptions. The whole descriptions live in ``../shared/forge-data`` (several MB); the
tests carry only the path items the fakes serve (plus the few a test asks for on purpose),
with every ``$ref`` they reach, so ``make test`` needs nothing beside the clone.

    python scripts/trim_api_descriptions.py            # rewrite fixtures/forge-api/*.json
    python scripts/trim_api_descriptions.py --check    # exit 1 when a fixture is stale

A fake that gains a handler needs this run again (``tests/test_api_fixtures.py`` says so).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakeforge.gitea import FakeGitea  # noqa: E402
from tests.fakeforge.github import SUPPLEMENT, FakeGitHub, _handler_name  # noqa: E402
from tests.fakeforge.openapi import HTTP_METHODS  # noqa: E402

SHARED = ROOT.parent / "shared" / "forge-data"
OUT = ROOT / "fixtures" / "forge-api"


@dataclass(frozen=True)
class Source:
    name: str  # the fixture's file name
    source: Path  # the whole description
    served: frozenset[str]  # handler names the fake has
    extra: frozenset[str]  # path templates tests use although the fake does not serve them


def _handlers(cls: type) -> frozenset[str]:
    return frozenset(n[len("_op_") :] for n in dir(cls) if n.startswith("_op_"))


def sources() -> list[Source]:
    gitea_served = _handlers(FakeGitea)
    return [
        Source(
            "github-rest.json",
            SHARED / "github/openapi/github-rest-openapi.trimmed.json",
            _handlers(FakeGitHub),
            frozenset({"/repos/{owner}/{repo}/contents/{path}"}),
        ),
        Source(
            "gitea-1.27.1.json",
            SHARED / "gitea/swagger/gitea-1.27.1.swagger.v1.json",
            gitea_served,
            frozenset(),
        ),
        Source(
            "forgejo-16.0.1.json",
            SHARED / "gitea/swagger/forgejo-16.0.1.swagger.v1.json",
            gitea_served,
            frozenset({"/repos/{owner}/{repo}/pulls/{index}/reviews/{id}/comments"}),
        ),
    ]


def _github_name(method: str, template: str, op: dict[str, Any]) -> str:
    class _Op:  # the one attribute the fake's naming reads
        operation_id = op.get("operationId", f"{method} {template}")

    return _handler_name(_Op())  # type: ignore[arg-type]


def _refs(node: Any) -> Iterable[str]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                yield ref
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _lookup(document: dict[str, Any], ref: str) -> Any:
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _place(trimmed: dict[str, Any], document: dict[str, Any], ref: str) -> None:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/")]
    source: Any = document
    target = trimmed
    for part in parts[:-1]:
        source = source[part]
        target = target.setdefault(part, {})
    target[parts[-1]] = source[parts[-1]]


def _without_examples(node: Any) -> Any:
    """Media ``examples`` point at large sample bodies that no fake reads."""
    if isinstance(node, dict):
        return {k: _without_examples(v) for k, v in node.items() if k != "examples"}
    if isinstance(node, list):
        return [_without_examples(v) for v in node]
    return node


def trim(source: Source) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(source.source.read_text(encoding="utf-8"))
    github = source.name.startswith("github")
    kept: dict[str, Any] = {}
    for template, item in document["paths"].items():
        names = {
            _github_name(m, template, item[m]) if github else item[m].get("operationId", "")
            for m in HTTP_METHODS
            if m in item
        }
        if template in source.extra or names & source.served:
            kept[template] = _without_examples(item)
    trimmed: dict[str, Any] = {
        k: v for k, v in document.items() if k not in ("paths", "components", "definitions")
    }
    trimmed["paths"] = kept
    for section in ("parameters", "responses"):
        trimmed.pop(section, None)
    seen: set[str] = set()
    # The fake adds SUPPLEMENT's operations to the paths: what they reach must be kept too.
    pending = [*_refs(kept), *(_refs(SUPPLEMENT) if github else ())]
    while pending:
        ref = pending.pop()
        if ref in seen or not ref.startswith("#/"):
            continue
        seen.add(ref)
        _place(trimmed, document, ref)
        pending.extend(_refs(_lookup(document, ref)))
    return trimmed


def render(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare; write nothing")
    args = parser.parse_args(argv)
    stale = []
    OUT.mkdir(parents=True, exist_ok=True)
    for source in sources():
        data = render(trim(source))
        path = OUT / source.name
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(source.name)
        else:
            path.write_bytes(data)
            print(f"{path.relative_to(ROOT)}: {len(data):,} bytes")
    if stale:
        print(f"stale: {', '.join(stale)}; run python scripts/trim_api_descriptions.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
