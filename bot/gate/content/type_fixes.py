"""Fixes for a managed object whose type the operator cannot follow (``not-followable``). Pure.

Each failing check is mended at its own source: a type the cluster serves is recorded in the
target's capabilities file (``types --suggest`` writes it), a type the built-in policy denies
stays out of the target. Ignoring the file of a denied type is the usual way to keep it out, but
not for a file a kustomization of the target lists among its resources: the ignore file would
then hide what kustomize builds (``ignore-shadows-managed``), so the fix takes it out of that
kustomization first.
"""

from __future__ import annotations

from bot.gate.content.builds import Builds
from bot.gate.fixes import append_lines_command, ignore_pattern_for, suggest_capabilities_command
from bot.gate.policy import TargetPolicy
from bot.ignore.rules import IGNORE_FILE
from bot.paths import display_path, join, relative_to
from bot.registry.followability import Reason


def not_followable_fix(
    reason: str | None, shown_type: str, target: TargetPolicy, path: str, builds: Builds
) -> str:
    """The fix for the check that failed: each source of the verdict is changed differently."""
    capabilities = (
        f"the capabilities file {display_path(target.capabilities)}"
        if target.capabilities
        else "a capabilities file (the target's 'capabilities' in .ichor.yaml)"
    )
    if reason in (Reason.NOT_SERVED, Reason.SUBRESOURCE_ONLY):
        fix = (
            f"If the cluster serves {shown_type}, record it in {capabilities}, a recording of "
            "the cluster's API discovery, or add its CustomResourceDefinition to the target; "
            "otherwise remove the object or correct its apiVersion and kind."
        )
        if reason == Reason.NOT_SERVED:
            fix += suggest_fix(target)
        return fix
    if reason == Reason.DENIED_BY_POLICY:
        ignore = append_lines_command(
            join(target.path, IGNORE_FILE), [ignore_pattern_for(relative_to(path, target.path))]
        )
        said = (
            f"The operator never follows {shown_type} (the type policy is built in; a "
            "repository cannot change it): keep such objects outside the target"
        )
        listing = [k for k in builds.listed_by(path) if builds.is_built(path)]
        if listing:
            which = ", ".join(display_path(k) for k in listing)
            return (
                f"{said}. {which} list{'s' * (len(listing) == 1)} this file among its "
                "resources, and the ignore file must not hide what kustomize builds: take "
                "its entry out of those resources (apply it from a folder outside the target "
                f"if the cluster still needs it), then ignore the file: {ignore}"
            )
        return f"{said}, or ignore the file: {ignore}"
    if reason == Reason.CATALOG_UNAVAILABLE:
        return (
            f"Add or fix {capabilities}: a recorded discovery document or the output of "
            "'kubectl api-resources -o wide'."
        )
    return (
        f"{shown_type} fails the {reason or 'type'} check ('ichor-bot types' shows every "
        "check): correct what declares the type (its CustomResourceDefinition or the "
        "capabilities file), or remove the object."
    )


def suggest_fix(target: TargetPolicy) -> str:
    """The command that writes the target's capabilities file; a person reviews what it wrote."""
    sources = "from the repository's CRDs and a catalog of well-known ones"
    command = suggest_capabilities_command(target.path, target.capabilities)
    if target.capabilities is not None:
        return f" To add every type the target uses to it, {sources}, run and review: {command}"
    if not target.path:
        return f" To list the entries every type the target uses needs, {sources}: {command}"
    return (
        f" To write that file for every type the target uses, {sources}, run this, review the "
        f"file and name it as the target's 'capabilities' in .ichor.yaml: {command}"
    )
