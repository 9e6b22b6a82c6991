"""Comment commands (design.md 5): the command lines of a new comment, as typed values.

A command line starts with ``/<verb>`` or ``/ichor <verb>`` (``/ichor`` alone asks for help)
at the start of a line outside code, quotes and HTML comments (see ``lines``). Verbs and the
words ``cancel`` and ``in`` match in any case (``/Approve``, ``/ichor RECHECK``); arguments
keep their case. A ``/word`` that is not a verb belongs to another tool and is skipped, as is
a verb glued to more (``/approved``, ``/approve.``); ``/ichor <word>`` with an unknown word is
an ``unknown-verb`` problem, answered with help. A mention before the command
(``@ichor-bot /approve``) does not start the line, so it is not a command.

``in <target>`` is read only as the last two words of a line. A line has at most one problem,
its first from the left. Pure and linear in the body; never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.commands.args import (
    CLUSTER_SCOPED,
    Word,
    bad_pattern_character,
    quoted_words,
    shown,
    valid_field,
    valid_kind,
    valid_name,
    valid_namespace,
    valid_target,
    value_problem,
)
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
from bot.commands.help import usage
from bot.commands.lines import command_lines

_WORD = re.compile(r"\S+")
_PREFIX = "ichor"

Parsed = Command | CommandProblem


def parse_comment(body: str) -> ParsedComment:
    """Every command line of ``body`` in order: the commands that may run and the problems of
    those that cannot. Only the first ``MAX_COMMANDS`` command lines are read."""
    commands: list[Command] = []
    problems: list[CommandProblem] = []
    for number, text in command_lines(body):
        parsed = parse_line(number, text)
        if parsed is None:
            continue
        if len(commands) + len(problems) == MAX_COMMANDS:
            return ParsedComment(tuple(commands), tuple(problems), truncated=True)
        if isinstance(parsed, CommandProblem):
            problems.append(parsed)
        else:
            commands.append(parsed)
    return ParsedComment(tuple(commands), tuple(problems), truncated=False)


def parse_line(line: int, text: str) -> Parsed | None:
    """One line that starts with ``/``: a command, a problem, or None when it is not ours."""
    if text[1:2].isspace():
        return None  # `/ approve`: the verb must follow the slash
    head, rest = _first_word(text[1:])
    word = _keyword(head)
    if word == _PREFIX:
        if not rest:
            return Help(line)
        head, rest = _first_word(rest)
        word = _keyword(head)
        if word not in VERBS:
            return CommandProblem(
                line,
                "unknown-verb",
                _PREFIX,
                head,
                f"/ichor: {shown(head)} is not a command; /help lists them",
            )
    elif word not in VERBS:
        return None
    return _PARSERS[_as_verb(word)](line, rest)


def _keyword(word: str) -> str:
    # ASCII only: no look-alike letter (the Kelvin sign lowers to `k`) may ever spell a verb.
    return word.lower() if word.isascii() else ""


def _as_verb(word: str) -> Verb:
    return next(verb for verb in VERBS if verb == word)


def _first_word(text: str) -> tuple[str, str]:
    parts = text.split(maxsplit=1)
    if not parts:
        return "", ""
    return parts[0], parts[1] if len(parts) > 1 else ""


def _problem(
    line: int, kind: ProblemKind, verb: Verb, argument: str | None, what: str
) -> CommandProblem:
    return CommandProblem(line, kind, verb, argument, f"/{verb}: {what}. Usage: {usage(verb)}")


def _no_arguments(verb: Verb, make: Callable[[int], Command]) -> Callable[[int, str], Parsed]:
    def parse(line: int, rest: str) -> Parsed:
        extra, _ = _first_word(rest)
        if extra:
            return _problem(
                line, "extra-argument", verb, extra, f"takes no arguments, not {shown(extra)}"
            )
        return make(line)

    return parse


def _object(line: int, verb: Verb, word: str) -> tuple[str | None, str] | CommandProblem:
    namespace, slash, name = word.partition("/")
    if not slash or not namespace or not name or "/" in name:
        return _problem(
            line,
            "bad-object",
            verb,
            word,
            f"{shown(word)} is not <ns>/<name> (<ns> is _ for a cluster-scoped object)",
        )
    if namespace != CLUSTER_SCOPED and not valid_namespace(namespace):
        return _problem(
            line,
            "bad-namespace",
            verb,
            namespace,
            f"{shown(namespace)} is not a namespace (lowercase letters, digits and '-', "
            "at most 63 characters; _ for a cluster-scoped object)",
        )
    if not valid_name(name):
        return _problem(
            line,
            "bad-name",
            verb,
            name,
            f"{shown(name)} is not an object name (lowercase letters, digits, '-' and '.', "
            "at most 253 characters)",
        )
    return (None if namespace == CLUSTER_SCOPED else namespace), name


def _split_target(words: list[Word]) -> tuple[list[Word], Word | None, bool]:
    """(the words before ``in <target>``, the target word, whether a lone ``in`` ends the
    line): the clause is read only as the last two words."""
    if len(words) >= 2 and _is_in(words[-2]):
        return words[:-2], words[-1], False
    if words and _is_in(words[-1]):
        return words[:-1], None, True
    return words, None, False


def _is_in(word: Word) -> bool:
    return not word.quoted and word.raw.lower() == "in"


def _target(
    line: int, verb: Verb, word: Word | None, dangling: bool
) -> str | CommandProblem | None:
    if dangling:
        return _problem(line, "missing-argument", verb, None, "'in' needs a <target> after it")
    if word is None:
        return None
    if not valid_target(word.raw):
        return _problem(
            line,
            "bad-target",
            verb,
            word.raw,
            f"{shown(word.raw)} is not a target name (lowercase letters, digits and '-')",
        )
    return word.raw


def _plain(rest: str) -> list[Word]:
    return [Word(m[0], m[0], False) for m in _WORD.finditer(rest)]


def _approve(line: int, rest: str) -> Parsed:
    words, unclosed = quoted_words(rest, values=True)
    if unclosed is not None:
        return _bad_quote(line, "approve", unclosed)
    if not words:
        return ApproveHead(line)
    if words[0].raw.lower() == "cancel":
        if len(words) > 1:
            return _problem(
                line,
                "extra-argument",
                "approve",
                words[1].raw,
                f"unexpected {shown(words[1].raw)} after cancel",
            )
        return ApproveCancel(line)
    body, target_word, dangling = _split_target(words)
    if not body:
        return _problem(line, "missing-argument", "approve", None, "needs <ns>/<name> before 'in'")
    ref = _object(line, "approve", body[0].raw)
    if isinstance(ref, CommandProblem):
        return ref
    fields: list[tuple[str, str]] = []
    for word in body[1:]:
        field = _field(line, word, {name for name, _ in fields})
        if isinstance(field, CommandProblem):
            return field
        fields.append(field)
    target = _target(line, "approve", target_word, dangling)
    if isinstance(target, CommandProblem):
        return target
    return ApproveObject(line, ref[0], ref[1], tuple(fields), target)


def _field(line: int, word: Word, seen: set[str]) -> tuple[str, str] | CommandProblem:
    name, equals, _ = word.raw.partition("=")
    if not equals or not valid_field(name):
        return _problem(
            line,
            "bad-field",
            "approve",
            word.raw,
            f"{shown(word.raw)} is not field=value (the field a dotted path: spec.approved)",
        )
    value = word.value[len(name) + 1 :]
    if not value and not word.quoted:
        return _problem(
            line,
            "bad-field",
            "approve",
            word.raw,
            f'{shown(word.raw)} has no value (write "" for an empty one)',
        )
    if name in seen:
        return _problem(
            line, "duplicate-field", "approve", name, f"the field {shown(name)} is given twice"
        )
    problem = value_problem(value)
    if problem is not None:
        return _problem(line, "bad-field", "approve", word.raw, f"{shown(word.raw)} {problem}")
    return name, value


def _reject(line: int, rest: str) -> Parsed:
    matches = list(_WORD.finditer(rest))
    if not matches:
        return _problem(line, "missing-argument", "reject", None, "needs <ns>/<name>")
    ref = _object(line, "reject", matches[0][0])
    if isinstance(ref, CommandProblem):
        return ref
    body, target_word, dangling = _split_target([Word(m[0], m[0], False) for m in matches])
    target = _target(line, "reject", target_word, dangling)
    if isinstance(target, CommandProblem):
        return target
    # The reason is the text between the object and `in <target>`, its spacing kept.
    reason = rest[matches[1].start() : matches[len(body) - 1].end()] if len(body) > 1 else ""
    problem = value_problem(reason, lines=True)
    if problem is not None:
        return _problem(line, "bad-reason", "reject", reason, f"the reason {problem}")
    return RejectObject(line, ref[0], ref[1], reason, target)


def _delete(line: int, rest: str) -> Parsed:
    body, target_word, dangling = _split_target(_plain(rest))
    if not body:
        return _problem(line, "missing-argument", "delete", None, "needs <kind> <ns>/<name>")
    if len(body) == 1:
        if "/" in body[0].raw:
            return _problem(
                line, "missing-argument", "delete", None, "needs <kind> before <ns>/<name>"
            )
        return _problem(line, "missing-argument", "delete", None, "needs <ns>/<name> after <kind>")
    kind = body[0].raw
    if not valid_kind(kind):
        return _problem(
            line,
            "bad-kind",
            "delete",
            kind,
            f"{shown(kind)} is not a kind (Kind or Kind.group: Deployment, Deployment.apps)",
        )
    ref = _object(line, "delete", body[1].raw)
    if isinstance(ref, CommandProblem):
        return ref
    if len(body) > 2:
        return _problem(
            line, "extra-argument", "delete", body[2].raw, f"unexpected {shown(body[2].raw)}"
        )
    target = _target(line, "delete", target_word, dangling)
    if isinstance(target, CommandProblem):
        return target
    return DeleteObject(line, kind, ref[0], ref[1], target)


def _ignore(line: int, rest: str) -> Parsed:
    words, unclosed = quoted_words(rest, values=False)
    if unclosed is not None:
        return _bad_quote(line, "ignore", unclosed)
    body, target_word, dangling = _split_target(words)
    if not body:
        return _problem(line, "missing-argument", "ignore", None, "needs <pattern>")
    pattern = body[0]
    if not pattern.value:
        return _problem(
            line, "bad-pattern", "ignore", pattern.raw, f"{shown(pattern.raw)} is an empty pattern"
        )
    if bad_pattern_character(pattern.value):
        return _problem(
            line,
            "bad-pattern",
            "ignore",
            pattern.raw,
            f"{shown(pattern.raw)} holds a control character",
        )
    if len(body) > 1:
        return _problem(
            line,
            "extra-argument",
            "ignore",
            body[1].raw,
            f'unexpected {shown(body[1].raw)} (quote a pattern with spaces: "a b")',
        )
    target = _target(line, "ignore", target_word, dangling)
    if isinstance(target, CommandProblem):
        return target
    return IgnorePattern(line, pattern.value, target)


def _bad_quote(line: int, verb: Verb, word: str) -> CommandProblem:
    return _problem(
        line,
        "bad-quote",
        verb,
        word,
        f"the quote in {shown(word)} is not closed before a space or the end",
    )


_PARSERS: dict[Verb, Callable[[int, str], Parsed]] = {
    "help": _no_arguments("help", Help),
    "recheck": _no_arguments("recheck", Recheck),
    "approve": _approve,
    "reject": _reject,
    "delete": _delete,
    "ignore": _ignore,
}
