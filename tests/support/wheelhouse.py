"""A local wheelhouse of what is installed here, so pip can install this package offline.

``pre-commit`` installs a ``language: python`` hook with ``pip install .`` into a fresh
environment. Tests run on loopback only, so pip is pointed (``PIP_NO_INDEX``,
``PIP_FIND_LINKS``) at wheels repacked from this environment's own installed distributions —
the runtime closure of ``ichor-bot`` — plus the setuptools wheel virtualenv ships, for the build.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.tags import sys_tags


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_closure(root: str) -> dict[str, metadata.Distribution]:
    """The installed distributions ``root`` needs at run time (extras it asks for included)."""
    found: dict[str, metadata.Distribution] = {}
    pending: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    seen: set[tuple[str, frozenset[str]]] = set()
    while pending:
        name, extras = pending.pop()
        if (_canonical(name), extras) in seen:
            continue
        seen.add((_canonical(name), extras))
        dist = metadata.distribution(name)
        found[_canonical(name)] = dist
        for line in dist.requires or ():
            requirement = Requirement(line)
            marker = requirement.marker
            wanted = marker is None or any(
                marker.evaluate({"extra": extra})  # over the running environment
                for extra in (extras or {""})
            )
            if wanted:
                pending.append((requirement.name, frozenset(requirement.extras)))
    return found


def repack(dist: metadata.Distribution, into: Path) -> Path:
    """An installed distribution back into a wheel: its RECORD's files, scripts left out (pip
    writes them anew from the entry points)."""
    dist_info = next(
        f for f in dist.files or () if f.parts[0].endswith(".dist-info") and f.name == "WHEEL"
    ).parent
    wheel_text = Path(str(dist.locate_file(dist_info / "WHEEL"))).read_text()
    supported = {str(tag) for tag in sys_tags()}
    tags = [t for t in re.findall(r"^Tag: (\S+)$", wheel_text, re.M) if t in supported]
    name = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    target = into / f"{name}-{dist.version}-{tags[0]}.whl"
    records: list[str] = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in dist.files or ():
            if file.parts[0] == ".." or "__pycache__" in file.parts or file.name == "RECORD":
                continue
            source = Path(str(dist.locate_file(file)))
            if not source.is_file():
                continue
            data = source.read_bytes()
            archive.writestr(str(file), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append(f"{file},sha256={digest.decode()},{len(data)}")
        records.append(f"{dist_info}/RECORD,,")
        archive.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return target


def build_wheelhouse(into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    for key, dist in runtime_closure("ichor-bot").items():
        if key != "ichor-bot":
            repack(dist, into)
    import virtualenv

    embedded = Path(virtualenv.__file__).parent / "seed" / "wheels" / "embed"
    for wheel in embedded.glob("setuptools-*.whl"):
        (into / wheel.name).write_bytes(wheel.read_bytes())
    return into
