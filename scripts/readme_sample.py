"""Keep the generated parts of README.md and docs/ what the code says today.

Each block between ``<!-- sample:NAME -->`` and ``<!-- /sample:NAME -->``, in README.md or a
page of docs/, is regenerated: a sample of output by running the command it shows on the
repository it names, built fresh in a temporary directory; the issue-code table of
docs/gate.md from ``bot/gate/codes.py``. Every block is in some document, each as often as
wanted:

    python scripts/readme_sample.py           # exit 1 and say which block is stale, and where
    python scripts/readme_sample.py --write   # rewrite the stale blocks in place

``tests/test_readme.py`` calls :func:`stale_documents`, so a change of the gate's messages or
codes fails the tests until the documents are regenerated.
"""

from __future__ import annotations

import contextlib
import html
import io
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCUMENTS = (README, *sorted((ROOT / "docs").glob("*.md")))
sys.path.insert(0, str(ROOT))

from bot.cli.demo import build_demo, build_repository  # noqa: E402
from bot.cli.main import main  # noqa: E402
from bot.gate.codes import CODES  # noqa: E402
from bot.render.sarif import HELP_SECTION  # noqa: E402

QUICKSTART_CONFIG = "version: 1\ntargets:\n  - {name: prod, path: clusters/prod}\n"
QUICKSTART_FILES = {
    ".ichor.yaml": QUICKSTART_CONFIG.encode(),
    "clusters/prod/v1/configmaps/apps/settings.yaml": (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: apps}\n"
    ),
}


@contextlib.contextmanager
def _in_directory(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _run(arguments: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(arguments)
    return out.getvalue()


def _quickstart(work: Path) -> str:
    repo = work / "gitops"
    build_repository(repo, QUICKSTART_FILES, message="Quick start")
    with _in_directory(repo):
        output = _run(["check"])
    return _console(f"$ ichor-bot check\n{output}")


def _demo(work: Path) -> str:
    demo = work / "fixtures" / "demo"
    shutil.copytree(ROOT / "fixtures" / "demo" / "tree", demo / "tree")
    build_demo(demo)
    with _in_directory(work):
        output = _run(["check", "fixtures/demo/repo", "--rev", "HEAD"])
    return _console(f"$ ichor-bot check fixtures/demo/repo --rev HEAD\n{output}")


def _onboard(work: Path) -> str:
    """The dry run on the demo tree without its .ichor.yaml, from the description's start to
    the end of its overview table (the files and the rest are longer than a README wants)."""
    tree = work / "gitops"
    shutil.copytree(ROOT / "fixtures" / "demo" / "tree", tree)
    (tree / ".ichor.yaml").unlink()
    with _in_directory(work):
        output = _run(["onboard", "--dry-run", "gitops"])
    lines = output.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("==> pull request"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("| `clusters-staging`"))
    shown = "".join(lines[start : end + 1])
    pipe = "sed -n '/^==> pull request/,/^| .clusters-staging/p'"
    return _console(f"$ ichor-bot onboard --dry-run gitops | {pipe}\n{shown}")


def _console(text: str) -> str:
    return f"```console\n{text}```\n"


def _cell(text: str) -> str:
    """Markdown for a table cell on GitHub and on the site alike: a code span holding '|' is
    written as HTML (GitHub splits cells at a '|' in a code span unless it is '\\|', which
    the site would show)."""

    def code(match: re.Match[str]) -> str:
        span = match.group(1)
        return (
            f"<code>{html.escape(span, quote=False).replace('|', '&#124;')}</code>"
            if "|" in span
            else match[0]
        )

    text = re.sub(r"`([^`]+)`", code, text)
    if "|" in re.sub(r"<code>.*?</code>", "", text):
        raise ValueError(f"a '|' outside code in a table cell: {text!r}")
    return text


def _issue_codes(_: Path) -> str:
    """docs/gate.md's table of every issue code, from bot/gate/codes.py, each code linked to
    the section that explains it (the one its SARIF rule links to)."""
    rows = ["| code | severity | what it means | fix |", "|---|---|---|---|"]
    for code, info in CODES.items():
        section = HELP_SECTION.get(code)
        name = f"[`{code.value}`](#{section})" if section else f"`{code.value}`"
        rows.append(
            f"| {name} | {info.severity.value} | {_cell(info.summary)} | {_cell(info.fix)} |"
        )
    return "\n".join(rows) + "\n"


SAMPLES: dict[str, Callable[[Path], str]] = {
    "quickstart": _quickstart,
    "onboard": _onboard,
    "demo": _demo,
    "issue-codes": _issue_codes,
}


def _block(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- sample:{name} -->\n)(.*?)(<!-- /sample:{name} -->)", re.S)


def render(name: str) -> str:
    with tempfile.TemporaryDirectory() as work:
        return SAMPLES[name](Path(work))


def stale_blocks(text: str, wanted: dict[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """The blocks of one document whose text differs from what the code makes now:
    name -> (found, wanted). ``wanted`` holds blocks already rendered."""
    wanted = {} if wanted is None else wanted
    stale: dict[str, tuple[str, str]] = {}
    for name in SAMPLES:
        for match in _block(name).finditer(text):
            if name not in wanted:
                wanted[name] = render(name)
            if match.group(2) != wanted[name]:
                stale[name] = (match.group(2), wanted[name])
    return stale


def stale_documents(
    documents: dict[Path, str] | None = None,
) -> tuple[dict[Path, dict[str, tuple[str, str]]], list[str]]:
    """Every document's stale blocks, and the names of blocks no document holds."""
    if documents is None:
        documents = {path: path.read_text(encoding="utf-8") for path in DOCUMENTS}
    wanted: dict[str, str] = {}
    stale = {path: s for path, text in documents.items() if (s := stale_blocks(text, wanted))}
    held = {name for text in documents.values() for name in SAMPLES if _block(name).search(text)}
    return stale, sorted(set(SAMPLES) - held)


def rewrite(text: str, wanted: dict[str, str] | None = None) -> str:
    wanted = {} if wanted is None else wanted
    for name in SAMPLES:
        pattern = _block(name)
        if pattern.search(text) is None:
            continue
        if name not in wanted:
            wanted[name] = render(name)
        text = pattern.sub(lambda m, w=wanted[name]: m.group(1) + w + m.group(3), text)  # type: ignore[misc]
    return text


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def run(argv: list[str]) -> int:
    if argv not in ([], ["--write"]):
        print("usage: python scripts/readme_sample.py [--write]", file=sys.stderr)
        return 2
    stale, missing = stale_documents()
    for name in missing:
        print(f"no document holds a <!-- sample:{name} --> block", file=sys.stderr)
    if argv == ["--write"]:
        wanted: dict[str, str] = {}
        for path in stale:
            path.write_text(rewrite(path.read_text(encoding="utf-8"), wanted), encoding="utf-8")
            print(f"{_name(path)}: rewrote {', '.join(sorted(stale[path]))}")
        return 1 if missing else 0
    for path, blocks in stale.items():
        for name in blocks:
            print(
                f"{_name(path)}: sample '{name}' is stale; "
                "run: python scripts/readme_sample.py --write"
            )
    return 1 if stale or missing else 0


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
