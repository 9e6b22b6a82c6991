"""Stable issue codes (design.md 3.1), each with what it means and the fix a person would make."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


class IssueCode(enum.StrEnum):
    FOREIGN_FILE = "foreign-file"
    FOREIGN_SYMLINK = "foreign-symlink"
    FOREIGN_SUBMODULE = "foreign-submodule"
    IGNORE_SHADOWS_MANAGED = "ignore-shadows-managed"
    INVALID_YAML = "invalid-yaml"
    NON_KRM_YAML = "non-krm-yaml"
    INVALID_NAME = "invalid-name"
    IMPURE_MANAGED_FILE = "impure-managed-file"
    DUPLICATE_IDENTITY = "duplicate-identity"
    MIXED_MANAGED_ALLOWLISTED = "mixed-managed-allowlisted"
    UNSUPPORTED_KUSTOMIZE = "unsupported-kustomize"
    INVALID_KUSTOMIZE = "invalid-kustomize"
    PLAINTEXT_SECRET = "plaintext-secret"  # noqa: S105 - an issue code, not a secret
    NOT_FOLLOWABLE = "not-followable"
    FILE_TOO_LARGE = "file-too-large"
    IGNORED_MANAGED_OBJECT = "ignored-managed-object"
    UNUSED_IGNORE_PATTERN = "unused-ignore-pattern"
    EMPTY_TARGET = "empty-target"


@dataclass(frozen=True, slots=True)
class CodeInfo:
    severity: Severity
    summary: str
    fix: str


CODES: dict[IssueCode, CodeInfo] = {
    IssueCode.FOREIGN_FILE: CodeInfo(
        Severity.ERROR,
        "A file in no accepted role of a GitTarget path.",
        "`git rm` it, move it out of the target, or add a pattern for it to the target's "
        ".gittargetignore.",
    ),
    IssueCode.FOREIGN_SYMLINK: CodeInfo(
        Severity.ERROR,
        "A symbolic link inside a GitTarget path (it could lead a writer out of the subtree).",
        "Replace the link with the file itself, or add a pattern for it to the target's "
        ".gittargetignore.",
    ),
    IssueCode.FOREIGN_SUBMODULE: CodeInfo(
        Severity.ERROR,
        "A git submodule (gitlink) inside a GitTarget path.",
        "Move the submodule out of the target (`git rm` it here), or add a pattern for it to the "
        "target's .gittargetignore.",
    ),
    IssueCode.IGNORE_SHADOWS_MANAGED: CodeInfo(
        Severity.ERROR,
        "A .gittargetignore pattern hides every managed file, or a path the operator writes.",
        "Remove the pattern, or narrow it so it names only what should be ignored.",
    ),
    IssueCode.INVALID_YAML: CodeInfo(
        Severity.ERROR,
        "A YAML file that does not parse.",
        "Fix the syntax at the line given, or ignore the file in .gittargetignore.",
    ),
    IssueCode.NON_KRM_YAML: CodeInfo(
        Severity.ERROR,
        "A YAML file whose documents are not Kubernetes objects.",
        "Move the file out of the target or ignore it in .gittargetignore.",
    ),
    IssueCode.INVALID_NAME: CodeInfo(
        Severity.ERROR,
        "An object name or namespace the API server refuses for its kind.",
        "Rename it: most kinds take a DNS-1123 subdomain (lowercase letters, digits, '-' and "
        "'.'); namespaces, Namespace and StatefulSet names a DNS-1123 label (no '.', at most 63 "
        "characters); Service names a DNS-1035 label (starting with a letter).",
    ),
    IssueCode.IMPURE_MANAGED_FILE: CodeInfo(
        Severity.ERROR,
        "A file with a managed object that also holds a non-KRM or invalid document.",
        "Remove the extra document so the file holds only Kubernetes objects.",
    ),
    IssueCode.DUPLICATE_IDENTITY: CodeInfo(
        Severity.ERROR,
        "The same object (group, kind, namespace, name) defined twice.",
        "Keep one definition and remove the other (the one no kustomization lists, if only "
        "one is built).",
    ),
    IssueCode.MIXED_MANAGED_ALLOWLISTED: CodeInfo(
        Severity.ERROR,
        "A managed object inside a kustomization file.",
        "Move the object into its own file.",
    ),
    IssueCode.UNSUPPORTED_KUSTOMIZE: CodeInfo(
        Severity.ERROR,
        "A kustomization using a feature outside the accepted set.",
        "Render its folder into plain objects (`kubectl kustomize DIR > DIR/rendered.yaml`), "
        "remove the files only that build reads and make the kustomization list only "
        "rendered.yaml; or move the folder out of the target.",
    ),
    IssueCode.INVALID_KUSTOMIZE: CodeInfo(
        Severity.ERROR,
        "A kustomization kustomize refuses to build: a resource or patch that names no file, a "
        "resource folder without a kustomization file, the same objects reached twice or in a "
        "cycle, or two kustomization files in one folder.",
        "Correct or remove the entry at the line given (each base once per build), or keep one "
        "kustomization file per folder; `kubectl kustomize FOLDER` shows the same refusal.",
    ),
    IssueCode.PLAINTEXT_SECRET: CodeInfo(
        Severity.ERROR,
        "A sensitive object stored in plain text.",
        "Encrypt its data with SOPS, keeping apiVersion, kind and metadata clear: "
        "`sops --encrypt --encrypted-regex '^(data|stringData)$' --in-place FILE`.",
    ),
    IssueCode.NOT_FOLLOWABLE: CodeInfo(
        Severity.ERROR,
        "A managed object whose type the operator cannot follow.",
        "It depends on the failing check named in the message: for not-served, record the type "
        "in the target's capabilities file (`ichor-bot types --suggest --path TARGET` writes "
        "it) or add its CustomResourceDefinition; for "
        "denied-by-policy, keep such objects outside the target or ignore their file in "
        ".gittargetignore. `ichor-bot types` shows every check.",
    ),
    IssueCode.FILE_TOO_LARGE: CodeInfo(
        Severity.ERROR,
        "A file over the size limit; it is not read.",
        "Split the file, or ignore it in .gittargetignore.",
    ),
    IssueCode.IGNORED_MANAGED_OBJECT: CodeInfo(
        Severity.WARNING,
        "An ignored YAML file holds a managed-looking object or sits on a placement path.",
        "Check that ignoring it is intended.",
    ),
    IssueCode.UNUSED_IGNORE_PATTERN: CodeInfo(
        Severity.WARNING,
        "A pattern in the root .gittargetignore matches no entry of the target.",
        "Remove the line, or correct it: patterns are relative to the target root, and "
        "leading spaces are part of the pattern.",
    ),
    IssueCode.EMPTY_TARGET: CodeInfo(
        Severity.WARNING,
        "A configured target path that does not exist or holds no entry: a typo in the path, "
        "or a target not yet bootstrapped.",
        "Check the target's path in .ichor.yaml; nothing is refused until files arrive.",
    ),
}
