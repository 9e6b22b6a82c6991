"""Comment commands (design.md 5), pure: ``parse_comment`` reads a new comment's command lines
into typed commands and usage problems; ``help_text`` and ``usage`` say what a person may
write. Who may run a command, and what it changes, is decided by the caller."""

from bot.commands.command import (
    MAX_COMMANDS,
    VERBS,
    ApproveCancel,
    ApproveHead,
    ApproveObject,
    Command,
    CommandProblem,
    DeleteObject,
    Help,
    IgnorePattern,
    ParsedComment,
    ProblemKind,
    Recheck,
    RejectObject,
    Verb,
)
from bot.commands.help import help_text, usage
from bot.commands.lines import MAX_BODY, MAX_LINE
from bot.commands.parse import parse_comment

__all__ = [
    "MAX_BODY",
    "MAX_COMMANDS",
    "MAX_LINE",
    "VERBS",
    "ApproveCancel",
    "ApproveHead",
    "ApproveObject",
    "Command",
    "CommandProblem",
    "DeleteObject",
    "Help",
    "IgnorePattern",
    "ParsedComment",
    "ProblemKind",
    "Recheck",
    "RejectObject",
    "Verb",
    "help_text",
    "parse_comment",
    "usage",
]
