"""Names and namespaces by the API server's rule for each kind."""

from __future__ import annotations

import pytest

from bot.gate.content.names import (
    DNS1035,
    LABEL,
    PATH_SEGMENT,
    SUBDOMAIN,
    name_problem,
    name_rule,
    namespace_problem,
    suggest,
)


@pytest.mark.parametrize(
    ("group", "kind", "rule"),
    [
        ("", "ConfigMap", SUBDOMAIN),
        ("apps", "Deployment", SUBDOMAIN),
        ("example.com", "Widget", SUBDOMAIN),  # custom resources too
        ("", "Namespace", LABEL),
        ("apps", "StatefulSet", LABEL),
        ("", "Service", DNS1035),
        ("rbac.authorization.k8s.io", "ClusterRole", PATH_SEGMENT),
        ("rbac.authorization.k8s.io", "RoleBinding", PATH_SEGMENT),
        ("certificates.k8s.io", "CertificateSigningRequest", PATH_SEGMENT),
    ],
)
def test_the_rule_of_each_kind(group: str, kind: str, rule: object) -> None:
    assert name_rule(group, kind) is rule


@pytest.mark.parametrize(
    ("group", "kind", "name", "valid"),
    [
        ("", "ConfigMap", "web.settings-1", True),
        ("", "ConfigMap", "Bad_Name.UPPER", False),
        ("", "ConfigMap", "-web", False),
        ("", "ConfigMap", "a..b", False),
        ("", "ConfigMap", "a" * 253, True),
        ("", "ConfigMap", "a" * 254, False),
        ("", "Namespace", "team.a", False),
        ("", "Namespace", "a" * 64, False),
        ("", "Service", "1st", False),
        ("", "Service", "web-1", True),
        ("rbac.authorization.k8s.io", "ClusterRole", "system:aggregate-to-view", True),
        ("rbac.authorization.k8s.io", "ClusterRole", "a/b", False),
        ("rbac.authorization.k8s.io", "ClusterRole", "..", False),
    ],
)
def test_names(group: str, kind: str, name: str, valid: bool) -> None:
    assert (name_problem(group, kind, name) is None) is valid


def test_messages_say_the_rule_and_what_breaks_it() -> None:
    assert name_problem("apps", "Deployment", "Bad_Name.UPPER") == (
        "Deployment name 'Bad_Name.UPPER' is not a DNS-1123 subdomain, as the API server "
        "requires: it may hold only lowercase letters, digits, '-' and '.', starting and "
        "ending with a letter or digit"
    )
    assert namespace_problem("web") is None
    assert "64 characters, over 63" in (namespace_problem("a" * 64) or "")


def test_hostile_names_take_no_time() -> None:
    # The length is checked before any pattern runs.
    assert name_problem("", "ConfigMap", "a" * 1_000_000 + "_") is not None
    assert name_problem("", "ConfigMap", "a-" * 100 + "_") is not None


@pytest.mark.parametrize(
    ("value", "rule", "suggested"),
    [
        ("Bad_Name.UPPER", SUBDOMAIN, "bad-name.upper"),
        ("1st.web", DNS1035, "st-web"),
        ("team.a", LABEL, "team-a"),
        ("___", LABEL, None),
    ],
)
def test_suggestions_keep_the_rule(value: str, rule: object, suggested: str | None) -> None:
    assert suggest(value, rule) == suggested  # type: ignore[arg-type]
