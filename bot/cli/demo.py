"""Builds the demo repository for ``make run``, and real git repositories for tests.

``python -m bot.cli.demo fixtures/demo`` turns ``fixtures/demo/tree`` into a git repository at
``fixtures/demo/repo`` with one commit, adding a symlink and a submodule entry that a plain
directory of fixtures cannot carry. Identity and dates are fixed, so the commit id is stable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from bot.git.repository import git_environment
from bot.paths import encode_path

_FIXED_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ichor Demo",
    "GIT_AUTHOR_EMAIL": "demo@ichor.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_NAME": "Ichor Demo",
    "GIT_COMMITTER_EMAIL": "demo@ichor.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
# What the demo adds on top of the tree: entries a directory of fixtures cannot hold.
DEMO_SYMLINKS = {"clusters/staging/current": "../prod"}
DEMO_GITLINKS = {"clusters/staging/vendor/charts": "0123456789abcdef0123456789abcdef01234567"}


def _git(repo: Path, *args: str | bytes) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        env={**git_environment(), **_FIXED_IDENTITY},
        check=False,
    )
    if proc.returncode != 0:
        shown = " ".join(a if isinstance(a, str) else a.decode(errors="replace") for a in args)
        raise RuntimeError(f"git {shown}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode().strip()


def build_repository(
    dest: Path,
    files: Mapping[str, bytes],
    *,
    symlinks: Mapping[str, str] | None = None,
    gitlinks: Mapping[str, str] | None = None,
    message: str = "snapshot",
) -> str:
    """Create (or add a commit to) a repository at ``dest`` holding exactly these entries."""
    if not (dest / ".git").exists():
        dest.mkdir(parents=True, exist_ok=True)
        _git(dest, "init", "--quiet", "--initial-branch=main")
    else:
        _git(dest, "rm", "-r", "--quiet", "--cached", "--ignore-unmatch", ".")
        for child in dest.iterdir():
            if child.name != ".git":
                shutil.rmtree(
                    child
                ) if child.is_dir() and not child.is_symlink() else child.unlink()
    root = os.fsencode(dest)
    for path, data in files.items():
        target = os.path.join(root, encode_path(path))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(data)
    for path, link in (symlinks or {}).items():
        target = os.path.join(root, encode_path(path))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(encode_path(link), target)
    _git(dest, "add", "--all", "--force")
    for path, sha in (gitlinks or {}).items():
        _git(dest, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
    _git(dest, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
    return _git(dest, "rev-parse", "HEAD")


def read_tree(tree: Path) -> dict[str, bytes]:
    """Every regular file under ``tree``, keyed by its POSIX path relative to ``tree``."""
    return {
        p.relative_to(tree).as_posix(): p.read_bytes()
        for p in sorted(tree.rglob("*"))
        if p.is_file()
    }


def build_demo(demo_dir: Path) -> str:
    repo = demo_dir / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    return build_repository(
        repo,
        read_tree(demo_dir / "tree"),
        symlinks=DEMO_SYMLINKS,
        gitlinks=DEMO_GITLINKS,
        message="Demo GitOps repository",
    )


DEMO_PULL_REPO = "demo/gitops"
# What the demo pull request adds to the prod target: one good object and one plaintext
# Secret, so its check shows a new issue with an annotation.
DEMO_PULL_FILES = {
    "clusters/prod/v1/configmaps/web/cache.yaml": (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cache\n  namespace: web\n"
        b"data:\n  size: 64Mi\n"
    ),
    "clusters/prod/v1/secrets/web/cache-password.yaml": (
        b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: cache-password\n  namespace: web\n"
        b"stringData:\n  password: swordfish\n"
    ),
}


def build_demo_pull(demo_dir: Path, repos: Path) -> Path:
    """A repository under ``repos`` for the ``local`` forge, with ``main`` and a pull request
    branch, and a GitHub ``pull_request`` delivery for it (returned) to replay."""
    repo = repos / DEMO_PULL_REPO
    if repo.exists():
        shutil.rmtree(repo)
    tree = read_tree(demo_dir / "tree")
    base = build_repository(repo, tree, message="Demo GitOps repository")
    _git(repo, "checkout", "--quiet", "-b", "add-cache")
    head = build_repository(repo, {**tree, **DEMO_PULL_FILES}, message="Add the cache")
    _git(repo, "checkout", "--quiet", "main")
    payload = json.loads(
        (demo_dir.parent / "webhooks/github/pull_request__opened.json").read_text()
    )
    owner, name = DEMO_PULL_REPO.split("/")
    for side, sha, ref in (("base", base, "main"), ("head", head, "add-cache")):
        payload["pull_request"][side].update(sha=sha, ref=ref, label=f"{owner}:{ref}")
        payload["pull_request"][side]["repo"].update(full_name=DEMO_PULL_REPO, name=name)
    payload["number"] = payload["pull_request"]["number"] = 1
    # The delivery's URLs name its repository too (ingress refuses one naming another).
    web = f"https://github.com/{DEMO_PULL_REPO}"
    for repository in (
        payload["repository"],
        payload["pull_request"]["base"]["repo"],
        payload["pull_request"]["head"]["repo"],
    ):
        repository.update(full_name=DEMO_PULL_REPO, name=name, html_url=web, clone_url=web + ".git")
    out = repos / "pull_request__opened.json"
    out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    demo_dir = Path(args[0] if args else "fixtures/demo")
    commit = build_demo(demo_dir)
    print(f"demo repository: {demo_dir / 'repo'} at {commit[:12]}", file=sys.stderr)
    if len(args) > 1:
        delivery = build_demo_pull(demo_dir, Path(args[1]))
        print(f"demo pull request: {DEMO_PULL_REPO} #1, delivery in {delivery}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
