"""An object's identity as kustomize builds it: (group, kind, namespace, name).

The namespace is the object's own, replaced by the ``namespace:`` of a kustomization whose
``resources:`` reach its file (the outermost such kustomization wins, see
:mod:`bot.gate.content.context`); cluster-scoped types have none. kustomize's namespace transformer
also renames a core ``Namespace`` object to that namespace, so ``Namespace _`` in a folder whose
kustomization sets ``namespace: cert-manager`` is ``Namespace cert-manager``. Nothing else the
transformer sets (RoleBinding subjects, webhook and APIService service references) is part of
an identity, and the fields that rename objects (``namePrefix``, ``nameSuffix``) are refused.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.gate.content.facts import ObjectFacts
from bot.registry.followability import CLUSTER

Identity = tuple[str, str, str, str]  # group, kind, namespace, name


def object_identity(
    path: str, obj: ObjectFacts, scope: str | None, namespaces: Mapping[str, str]
) -> Identity:
    """The identity of ``obj`` in file ``path``; ``scope`` is its type's, when known.

    A type of unknown scope keeps its namespace, as kustomize (which knows only the built-in
    kinds) sets one on it too; the API server drops it for a cluster-scoped type.
    """
    set_by_kustomization = namespaces.get(path)
    name = obj.name
    if set_by_kustomization is not None and obj.group == "" and obj.kind == "Namespace":
        name = set_by_kustomization
    if scope == CLUSTER:
        return (obj.group, obj.kind, "", name)
    return (obj.group, obj.kind, set_by_kustomization or obj.namespace or "", name)


def identity_text(identity: Identity) -> str:
    """The one way an identity is written where people and approvals read it:
    ``Kind.group namespace/name``, the core group's kinds without ``.group`` and a
    cluster-scoped object's namespace as ``_`` (as comment commands name it):
    ``Deployment.apps web/frontend``, ``ConfigMap web/settings``, ``Namespace _/web``."""
    group, kind, namespace, name = identity
    shown_kind = f"{kind}.{group}" if group else kind
    return f"{shown_kind} {namespace or '_'}/{name}"
