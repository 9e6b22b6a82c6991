"""The type registry: which Kubernetes types a GitTarget may hold, and why not (design.md 3.5).

``build_registry`` joins the built-in types, the repository's CRDs and the target's recorded
capabilities; ``TypeRegistry.resolve`` answers with a full followability record.
"""

from bot.registry.capabilities import Capabilities, CapabilitiesError, parse_capabilities
from bot.registry.crd import CrdFacts, CrdVersion, crd_facts
from bot.registry.followability import Check, TypeRecord, Verdict
from bot.registry.policy import DEFAULT_POLICY, RegistryPolicy
from bot.registry.registry import TypeRegistry, build_registry

__all__ = [
    "DEFAULT_POLICY",
    "Capabilities",
    "CapabilitiesError",
    "Check",
    "CrdFacts",
    "CrdVersion",
    "RegistryPolicy",
    "TypeRecord",
    "TypeRegistry",
    "Verdict",
    "build_registry",
    "crd_facts",
    "parse_capabilities",
]
