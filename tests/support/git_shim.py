"""A ``git`` on PATH that records the argv of every git process a test's code starts.

Patching ``subprocess.Popen`` sees only what Python starts; the shim sees every ``git`` looked up
on PATH, so a test can say no process ever had the token among its arguments.
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path


def install_git_shim(directory: Path, log: Path) -> Path:
    """Write a ``git`` into ``directory`` that appends its argv (NUL-separated, one record per
    line) to ``log`` and runs the real git; put ``directory`` first on PATH to use it."""
    directory.mkdir(parents=True, exist_ok=True)
    real = shutil.which("git")
    assert real is not None
    shim = directory / "git"
    shim.write_text(
        "#!/bin/sh\n"
        f"printf '%s\\0' \"$@\" >> '{log}'\n"
        f"printf '\\n' >> '{log}'\n"
        f"exec '{real}' \"$@\"\n"
    )
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    return directory


def recorded_argvs(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    records = log.read_bytes().split(b"\0\n")
    return [[a.decode("utf-8", "replace") for a in r.split(b"\0")] for r in records if r]
