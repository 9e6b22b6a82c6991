"""Folders onboarding never proposes as targets, nor anything inside them (design.md 6.6). Pure.

A GitTarget path holds what a cluster runs. These folders hold YAML that is not that, however
much of it looks like Kubernetes objects:

- hidden folders (``.github``, ``.archive``): tooling and retired files;
- folders ``.ichor.yaml`` cannot name (a ``\\`` in the path, a name that is not UTF-8);
- Helm charts: a folder holding ``Chart.yaml``, or ``values.yaml`` beside a ``templates/``
  folder (its templates are not objects); a folder that contains a chart is not proposed
  either (the gate would refuse the chart's files), though qualifying folders beside the chart
  are, and a folder named ``charts`` holds charts by convention;
- test data and examples: ``test``, ``tests``, ``testdata`` (Go's), ``e2e``, ``fixtures``,
  ``examples``, ``samples``, ``docs``: objects written to exercise or explain something;
- tooling and other people's code: ``hack`` (Kubernetes projects' scripts), ``scripts``,
  ``vendor``, ``third_party``, ``node_modules``.

Names are compared case-insensitively, as a checkout on a case-folding file system would.
"""

from __future__ import annotations

from typing import Final

from bot.config.paths import normalize_repo_path

CHART_FILE: Final = "Chart.yaml"
HIDDEN: Final = "a hidden folder: tooling or retired files"
UNNAMEABLE: Final = ".ichor.yaml cannot name this path"
CHART: Final = "a Helm chart: its templates are not objects"
TEST_DATA: Final = "test data, examples or documentation, not what a cluster runs"
TOOLING: Final = "tooling or vendored code, not what a cluster runs"

_BY_NAME: Final = {
    **dict.fromkeys(
        (
            "test",
            "tests",
            "testdata",
            "test-data",
            "test_data",
            "testing",
            "e2e",
            "fixtures",
            "examples",
            "example",
            "samples",
            "docs",
        ),
        TEST_DATA,
    ),
    **dict.fromkeys(("hack", "scripts", "vendor", "third_party", "node_modules"), TOOLING),
    "charts": CHART,
}


def skip_reason(path: str, *, chart: bool = False) -> str | None:
    """Why the folder ``path`` (not the root) is never proposed, or None; ``chart`` says it
    looks like a Helm chart. A folder below a skipped one is skipped too: the caller passes
    that on."""
    if path == "":
        return None
    name = path.rpartition("/")[2]
    if name.startswith("."):
        return HIDDEN
    if not configurable(path):
        return UNNAMEABLE
    if chart:
        return CHART
    return _BY_NAME.get(name.casefold())


def configurable(path: str) -> bool:
    """Whether ``.ichor.yaml`` can name ``path``: a valid target path, in UTF-8 (a name that
    is not UTF-8 cannot be written in the file). Everything below such a folder shares it."""
    if path == "":
        return True
    try:
        normalize_repo_path(path)
        path.encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return False
    return True
