"""``ichor-bot types --suggest``: write the capabilities file a ``--path`` target needs.

The file's text goes to standard output or ``--output FILE``; what could not be found goes to
standard error, one line each. The target's current file may be given with ``--capabilities``
and be the ``--output`` too: it is read before anything is written, and it is the first source
of entries (see ``bot.registry.suggest``).
"""

from __future__ import annotations

import argparse
import sys

from bot.cli.targets import adhoc_target, open_snapshot, read_capabilities_file, resolve_targets
from bot.errors import UsageError
from bot.gate.suggest import suggest_for_target
from bot.registry.builtin import crd_catalog
from bot.registry.suggest import Suggestion


def check_suggest_arguments(args: argparse.Namespace) -> None:
    if args.output is not None and not args.suggest:
        raise UsageError("--output needs --suggest; the listing goes to standard output")
    if not args.suggest:
        return
    if args.target is None:
        raise UsageError(
            "--suggest writes one target's capabilities file: name the target with --path TARGET"
        )
    if args.format != "text":
        raise UsageError(
            "--suggest writes a capabilities file, which has one format; drop --format"
        )


def run_suggest(args: argparse.Namespace) -> int:
    check_suggest_arguments(args)
    recorded = read_capabilities_file(args.capabilities, args.target)
    target = adhoc_target(args.target)  # without the recording: its types must be written out
    with open_snapshot(args.repo, args.rev) as snapshot:
        resolve_targets(snapshot, args.repo, target)  # --path must name a directory
        suggestion = suggest_for_target(
            snapshot,
            target,
            catalog=crd_catalog(),
            recorded=recorded,
            recorded_name=f"{args.capabilities} (given with --capabilities)",
        )
    if args.output is None:
        sys.stdout.write(suggestion.text)
        sys.stdout.flush()
    else:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(suggestion.text)
        except OSError as exc:
            raise UsageError(f"--output {args.output}: {exc.strerror}") from None
    for line in summary_lines(suggestion, args.output):
        print(f"ichor-bot: {line}", file=sys.stderr)
    return 0


def summary_lines(suggestion: Suggestion, output: str | None) -> list[str]:
    """What a person should look at: types left out, and entries that still do not suffice."""
    written, missing = suggestion.written, suggestion.missing
    where = f" to {output}" if output is not None else ""
    lines = [
        f"{len(suggestion.types)} type(s) need an entry: {len(written)} written{where}, "
        f"{len(missing)} not found"
    ]
    for t in missing:
        lines.append(f"warning: not found: {t.name}" + (f" ({t.note})" if t.note else ""))
    for t in written:
        if t.summary is not None and t.summary != "followable":
            lines.append(f"warning: {t.name} is still {t.summary}")
    return lines
