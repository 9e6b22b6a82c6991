"""The new, empty target proposed when no folder qualifies (design.md 6.6). Pure.

A repository with nothing to guard yet still gets a place for the operator to mirror a cluster
into: a folder that does not exist yet, with the bootstrap files the operator itself stages
(README.md and a fully commented ``.gittargetignore``, written by :mod:`bot.onboarding.proposal`)
and, when the repository uses SOPS, a ``.sops.yaml`` so that the Secrets written there are
encrypted for the repository's own recipients.

Those recipients are taken from the repository: the rule of its ``.sops.yaml`` that applies to
a file in the new folder (SOPS matches ``path_regex`` as Go does, from the config file's
folder), else its first rule with keys, else the recipients an encrypted file was encrypted
for. Only public keys are copied (age recipients, PGP fingerprints, KMS key names). The new
rule encrypts only ``data`` and ``stringData``, so ``apiVersion``, ``kind`` and ``metadata``
stay readable, as the gate requires.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any, Final

import yaml

from bot.gate.content.goregex import Unsupported, compile_pattern, search
from bot.gate.fixes import SOPS_ENCRYPTED_REGEX
from bot.git.snapshot import EntryKind, Snapshot
from bot.onboarding.detect import Candidate
from bot.onboarding.names import name_for
from bot.paths import basename, display_path, is_within, relative_to
from bot.yaml.documents import parse_yaml

EMPTY_PATH: Final = "cluster"
SOPS_CONFIG: Final = ".sops.yaml"
_SOPS_SUFFIXES: Final = (".sops.yaml", ".sops.yml")
# The key fields of a creation rule: who can decrypt. Everything else is the rule's own.
_KEY_FIELDS: Final = (
    "key_groups",
    "shamir_threshold",
    "age",
    "pgp",
    "kms",
    "aws_profile",
    "gcp_kms",
    "azure_keyvault",
    "hc_vault_transit_uri",
)
_MAX_READ: Final = 20  # files read looking for recipients: the first few tell
_MAX_BYTES: Final = 1 << 20


def empty_candidate(snapshot: Snapshot) -> Candidate:
    """``cluster``, or ``cluster-2`` ... when that path is taken."""
    taken = [entry.path for entry in snapshot]
    path, n = EMPTY_PATH, 1
    while any(is_within(p, path) for p in taken):
        n += 1
        path = f"{EMPTY_PATH}-{n}"
    return Candidate(name_for(path), path, 0, 0, False)


def uses_sops(snapshot: Snapshot) -> bool:
    return any(
        entry.kind is EntryKind.FILE
        and (basename(entry.path) == SOPS_CONFIG or entry.path.endswith(_SOPS_SUFFIXES))
        for entry in snapshot
    )


def sops_config(snapshot: Snapshot, target: str) -> tuple[bytes, str] | None:
    """The target's ``.sops.yaml`` and where its recipients came from, or None when the
    repository names none."""
    found = _from_configs(snapshot, target) or _from_encrypted(snapshot)
    if found is None:
        return None
    keys, source = found
    rule = {"path_regex": r"\.sops\.ya?ml$", "encrypted_regex": SOPS_ENCRYPTED_REGEX, **keys}
    text = (
        f"# The SOPS rules of the target {display_path(target)}, proposed by Ichor Bot's "
        "onboarding pull\n"
        f"# request with the recipients of {source}. The operator encrypts the Secrets it "
        "writes here\n"
        "# with them, and so does `sops --encrypt` run in this folder. Only data and "
        "stringData are\n"
        "# encrypted: apiVersion, kind and metadata stay readable, as the check requires.\n"
        + yaml.safe_dump({"creation_rules": [rule]}, sort_keys=False, default_flow_style=False)
    )
    return text.encode(), source


def _from_configs(snapshot: Snapshot, target: str) -> tuple[dict[str, Any], str] | None:
    """The keys of the repository's own rule for a file in ``target``: the nearest
    ``.sops.yaml`` above it first, as SOPS looks from the folder it runs in."""
    configs = sorted(
        (e for e in snapshot if e.kind is EntryKind.FILE and basename(e.path) == SOPS_CONFIG),
        key=lambda e: -e.path.count("/"),
    )
    for entry in configs[:_MAX_READ]:
        folder = posixpath.dirname(entry.path)
        if entry.size > _MAX_BYTES or not is_within(target, folder) or is_within(folder, target):
            continue  # the target's own (as proposed) is not where its recipients come from
        rules = _rules(entry.read())
        probe = relative_to(posixpath.join(target, "secret.sops.yaml"), folder)
        applying = [r for r in rules if _applies(r.get("path_regex"), probe)]
        for rule in applying or rules:
            keys = {k: rule[k] for k in _KEY_FIELDS if k in rule}
            if keys:
                return keys, f"the rule for this folder in {display_path(entry.path)}"
    return None


def _rules(data: bytes) -> list[Mapping[str, Any]]:
    documents = parse_yaml(data).documents
    value = documents[0].value if documents and documents[0].error is None else None
    rules = value.get("creation_rules") if isinstance(value, dict) else None
    return [r for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []


def _applies(pattern: object, path: str) -> bool:
    if pattern is None:
        return True
    if not isinstance(pattern, str):
        return False
    try:
        return search(compile_pattern(pattern), path)
    except Unsupported:
        return False  # cannot tell: another rule, or the first with keys, is taken


def _from_encrypted(snapshot: Snapshot) -> tuple[dict[str, Any], str] | None:
    """The age and PGP recipients the first encrypted file names."""
    files = [
        e
        for e in snapshot
        if e.kind is EntryKind.FILE and e.path.endswith(_SOPS_SUFFIXES) and e.size <= _MAX_BYTES
    ]
    for entry, data in zip(files[:_MAX_READ], snapshot.read_many(files[:_MAX_READ]), strict=True):
        for doc in parse_yaml(data).documents:
            sops = doc.value.get("sops") if isinstance(doc.value, dict) else None
            if not isinstance(sops, dict):
                continue
            keys = {
                "age": _joined(sops.get("age"), "recipient"),
                "pgp": _joined(sops.get("pgp"), "fp"),
            }
            keys = {k: v for k, v in keys.items() if v}
            if keys:
                return keys, f"the encrypted file {display_path(entry.path)}"
    return None


def _joined(items: object, key: str) -> str:
    if not isinstance(items, list):
        return ""
    found = [str(i[key]) for i in items if isinstance(i, dict) and isinstance(i.get(key), str)]
    return ",".join(dict.fromkeys(found))
