"""Product policy for types: which are never mirrored, and which need sensitive handling.

Both sets name (group, resource) pairs, so a policy covers every version of a type.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RegistryPolicy:
    denied: frozenset[tuple[str, str]]
    sensitive: frozenset[tuple[str, str]]

    def is_denied(self, group: str, resource: str) -> bool:
        return (group, resource) in self.denied

    def is_sensitive(self, group: str, resource: str) -> bool:
        return (group, resource) in self.sensitive


# design.md 3.5. Each is runtime state owned by a controller (pods, endpoints, leases ...), a
# record of what happened (events, jobs), or cluster plumbing (flow control): mirroring them
# into Git would only churn or fight their owners.
DEFAULT_DENIED: frozenset[tuple[str, str]] = frozenset(
    {
        ("", "pods"),
        ("", "events"),
        ("events.k8s.io", "events"),
        ("", "endpoints"),
        ("discovery.k8s.io", "endpointslices"),
        ("coordination.k8s.io", "leases"),
        ("apps", "controllerrevisions"),
        ("flowcontrol.apiserver.k8s.io", "flowschemas"),
        ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
    }
)
DEFAULT_SENSITIVE: frozenset[tuple[str, str]] = frozenset({("", "secrets")})

DEFAULT_POLICY = RegistryPolicy(denied=DEFAULT_DENIED, sensitive=DEFAULT_SENSITIVE)
