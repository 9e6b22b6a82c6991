"""A real git repository that tests grow commit by commit (fixed identity and dates)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from bot.git.repository import git_environment

_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


class WorkRepo:
    """A repository with a work tree; ``commit`` writes files (None deletes) and commits."""

    def __init__(self, path: Path, *, branch: str = "main") -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", branch)

    def git(self, *args: str) -> str:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args],
            capture_output=True,
            env={**git_environment(), **_ENV},
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
        return proc.stdout.decode().strip()

    def commit(self, files: Mapping[str, bytes | str | None], message: str = "change") -> str:
        for name, data in files.items():
            target = self.path / name
            if data is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.encode() if isinstance(data, str) else data)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def checkout(self, branch: str, *, create_from: str | None = None) -> None:
        if create_from is None:
            self.git("checkout", "-q", branch)
        else:
            self.git("checkout", "-q", "-B", branch, create_from)

    def set_ref(self, ref: str, sha: str) -> None:
        self.git("update-ref", ref, sha)

    def publish(self, bare: Path) -> Path:
        """Mirror every ref into a bare repository at ``bare`` (created when missing)."""
        if not bare.exists():
            bare.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["git", "init", "-q", "--bare", str(bare)], check=True, env=git_environment()
            )
        self.git("push", "-q", "--mirror", "--force", str(bare))
        return bare
