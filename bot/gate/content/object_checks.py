"""What refuses one managed object before it gets an identity: a name or namespace the API
server refuses (:mod:`bot.gate.content.names`), a sensitive object or a ``*.sops.yaml`` file's
object that is not really SOPS-encrypted (:mod:`bot.gate.content.sops`)."""

from __future__ import annotations

from bot.gate.codes import IssueCode
from bot.gate.content.facts import ObjectFacts
from bot.gate.content.identity import Identity
from bot.gate.content.names import LABEL, name_rule, suggest
from bot.gate.fixes import rename_fix, sops_encrypt_command
from bot.gate.report import Issue
from bot.paths import basename
from bot.registry.followability import CLUSTER, TypeRecord

SOPS_SUFFIXES = (".sops.yaml", ".sops.yml")


def plaintext_issues(path: str, line: int, obj: ObjectFacts, record: TypeRecord) -> list[Issue]:
    """A sensitive object, or any object of a *.sops.yaml file, not really SOPS-encrypted."""
    in_sops_file = basename(path).endswith(SOPS_SUFFIXES)
    if (not in_sops_file and not record.sensitive) or (obj.sops and obj.sops_error is None):
        return []
    if obj.empty_token_secret and not in_sops_file:
        return []  # a token Secret with no data: the cluster fills it in, nothing here is secret
    shown = f"{obj.kind} '{obj.name}'"
    if obj.sops_error is not None:
        line, why = obj.sops_error
        where = "is in a *.sops.yaml file but is" if in_sops_file else "is sensitive and"
        message = f"{shown} {where} not SOPS-encrypted: {why}"
    elif in_sops_file:
        message = (
            f"{shown} is in a *.sops.yaml file but is not SOPS-encrypted (no top-level sops key)"
        )
    else:
        message = f"{shown} is sensitive and stored in plain text; encrypt it with SOPS"
    fix = sops_encrypt_command(path)
    return [Issue.of(IssueCode.PLAINTEXT_SECRET, path, message, line=line, fix=fix)]


def invalid_name_issues(
    path: str, obj: ObjectFacts, identity: Identity, record: TypeRecord
) -> list[Issue]:
    """The name and namespace the API server would be sent, checked where the file sets them.

    A kustomization's ``namespace:`` replaces the object's own (and names a core Namespace):
    such values are checked once, at the kustomization, so only what the file itself decides
    is reported here. A cluster-scoped type's namespace is dropped by the API server.
    """
    issues: list[Issue] = []
    if obj.name_error is not None and identity[3] == obj.name:
        line, why = obj.name_error
        fix = rename_fix("metadata.name", suggest(obj.name, name_rule(obj.group, obj.kind)))
        issues.append(Issue.of(IssueCode.INVALID_NAME, path, why, line=line, fix=fix))
    own_namespace = identity[2] == (obj.namespace or "")
    if obj.namespace_error is not None and record.scope != CLUSTER and own_namespace:
        line, why = obj.namespace_error
        message = f"{obj.kind} '{obj.name}': {why}"
        fix = rename_fix("metadata.namespace", suggest(obj.namespace or "", LABEL))
        issues.append(Issue.of(IssueCode.INVALID_NAME, path, message, line=line, fix=fix))
    return issues
