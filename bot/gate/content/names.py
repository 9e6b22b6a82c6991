"""Object names and namespaces as the API server validates them, kind by kind.

Kubernetes checks ``metadata.name`` with a rule chosen per kind (the ``ValidateNameFunc`` each
kind's validation passes to ``ValidateObjectMeta``): most kinds, custom resources included, take
a DNS-1123 subdomain; a few take a stricter label; the RBAC kinds and a few others take any
name that is a safe URL path segment, the least every name must be since it is part of the
resource's URL. ``metadata.namespace`` is always a DNS-1123 label. An object the API server
refuses can never be what the operator mirrors, so the gate refuses it first.

The patterns are fixed, anchored and free of nested ambiguity, and each length is checked
before any pattern runs, so the time is bounded whatever a repository holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


@dataclass(frozen=True, slots=True)
class NameRule:
    what: str  # how a message names the rule
    max_length: int
    pattern: re.Pattern[str] | None  # None: only the path-segment rule
    explain: str


SUBDOMAIN = NameRule(
    "a DNS-1123 subdomain",
    253,
    _SUBDOMAIN,
    "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
)
LABEL = NameRule(
    "a DNS-1123 label",
    63,
    _LABEL,
    "lowercase letters, digits and '-', starting and ending with a letter or digit",
)
DNS1035 = NameRule(
    "a DNS-1035 label",
    63,
    _DNS1035,
    "lowercase letters, digits and '-', starting with a letter and ending with a letter or digit",
)
PATH_SEGMENT = NameRule("a URL path segment", 0, None, "anything but '.', '..', '/' and '%'")

# Kinds whose names are not DNS-1123 subdomains, by (group, kind). From Kubernetes'
# validation: Namespace (ValidateNamespaceName), StatefulSet (ValidateStatefulSetName, whose
# pods take its name as their hostname) and Service (ValidateServiceName, its DNS name). The
# RBAC kinds (minimalNameRequirements), CertificateSigningRequest (any name) and the kinds
# named after what they hold (APIService 'v1.', IPAddress '2001:db8::1') are checked only as
# path segments: a stricter rule would refuse names the API server accepts.
_RULES: dict[tuple[str, str], NameRule] = {
    ("", "Namespace"): LABEL,
    ("apps", "StatefulSet"): LABEL,
    ("", "Service"): DNS1035,
    **{
        ("rbac.authorization.k8s.io", kind): PATH_SEGMENT
        for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
    },
    ("certificates.k8s.io", "CertificateSigningRequest"): PATH_SEGMENT,
    ("apiregistration.k8s.io", "APIService"): PATH_SEGMENT,
    ("networking.k8s.io", "IPAddress"): PATH_SEGMENT,
}


def name_rule(group: str, kind: str) -> NameRule:
    return _RULES.get((group, kind), SUBDOMAIN)


def _broken(value: str, rule: NameRule) -> str | None:
    """Why ``value`` breaks ``rule``, or None when it keeps it."""
    if value in (".", "..") or "/" in value or "%" in value:
        return "no name may be '.' or '..' or hold '/' or '%'"
    if rule.pattern is None:
        return None
    if len(value) > rule.max_length:
        return f"it has {len(value)} characters, over {rule.max_length}"
    if rule.pattern.fullmatch(value) is None:
        return f"it may hold only {rule.explain}"
    return None


def suggest(value: str, rule: NameRule) -> str | None:
    """A name close to ``value`` that keeps ``rule``: lowercase, every run of other characters
    one '-', cut to length; None when nothing of ``value`` is left to keep."""
    allowed = "abcdefghijklmnopqrstuvwxyz0123456789" + ("." if rule is SUBDOMAIN else "")
    out: list[str] = []
    for ch in value.lower():
        if ch in allowed:
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    text = "".join(out)
    if rule is SUBDOMAIN:  # each dot-separated label starts and ends with a letter or digit
        text = ".".join(part.strip("-") for part in text.split(".") if part.strip("-"))
    if rule is DNS1035:
        text = text.lstrip("-0123456789")
    text = text[: rule.max_length].strip("-.")
    return text if text and _broken(text, rule) is None else None


def name_problem(group: str, kind: str, name: str) -> str | None:
    """Why the API server refuses ``name`` for an object of this kind, or None."""
    rule = name_rule(group, kind)
    why = _broken(name, rule)
    if why is None:
        return None
    return f"{kind} name {name!r} is not {rule.what}, as the API server requires: {why}"


def namespace_problem(namespace: str) -> str | None:
    """Why the API server refuses ``namespace`` as an object's namespace, or None."""
    why = _broken(namespace, LABEL)
    if why is None:
        return None
    return f"namespace {namespace!r} is not {LABEL.what}, as the API server requires: {why}"
