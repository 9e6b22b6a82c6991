"""What the gate is asked to check: targets and their settings, already validated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from bot.registry.capabilities import Capabilities

# The bot's own configuration, at the repository root.
CONFIG_FILE = ".ichor.yaml"
DEFAULT_PLACEMENT = "{group}/{version}/{resource}/{namespace}/{name}.yaml"
# The ignore file is a handful of patterns; anything near this size is not one.
MAX_IGNORE_FILE_BYTES = 1 << 20
# YAML files over this size are refused as file-too-large and never parsed.
DEFAULT_MAX_YAML_BYTES = 4 << 20
# strict: new managed objects wait for /approve (design.md 5.1); the gate itself ignores it.
TargetMode = Literal["relaxed", "strict"]
# new: a pull request's check fails only for issues it introduces (design.md 4); the gate itself
# ignores it, as it ignores the mode: it is how the check weighs the report.
Enforce = Literal["all", "new"]


@dataclass(frozen=True, slots=True)
class TargetPolicy:
    name: str
    path: str  # repo-relative POSIX, "" for the repository root
    placement: str = DEFAULT_PLACEMENT
    capabilities: str | None = None  # repo-relative path of a recorded API discovery
    # Already read from outside the tree (``check --capabilities FILE``); wins over the path.
    loaded_capabilities: Capabilities | None = None
    mode: TargetMode = "relaxed"
    enforce: Enforce = "all"


@dataclass(frozen=True, slots=True)
class GatePolicy:
    targets: tuple[TargetPolicy, ...]
    max_yaml_bytes: int = DEFAULT_MAX_YAML_BYTES
