"""Where a command's audit record goes (design.md 6.4): the audit log and one line of the log.

:class:`AuditTrail` is what a command job calls once it knows its result. It stamps the time,
writes one ``audit ...`` line to the process log and appends the record to the store (Redis or
memory). A store that is down costs the stored record, never the command: the failure is
logged and the record is returned all the same, so the command's own result stands.

Every value in the log line is escaped (:func:`log_value`): an actor name or a result holds
whatever the forge or the comment gave, and must never forge a second line of the log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime

import redis

from bot.settings import Settings
from bot.state import keys
from bot.state.base import AuditLog, AuditRecord
from bot.state.memory import MemoryAudit
from bot.state.redis_state import RedisAudit

AUDIT_LOGGER = "ichor.audit"
# One field of a record at most this long: a result may quote a comment, a store is capped by
# records, not bytes, so the bytes are bounded here.
FIELD_LIMIT = 1_000
_BARE = re.compile(r"[A-Za-z0-9._/:@#+%~-]+")  # written as is: nothing to misread
_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def utc_now() -> datetime:
    """The clock an :class:`AuditTrail` is usually given."""
    return datetime.now(UTC)


def escape_text(text: str) -> str:
    """``text`` with every character that is not printable (controls, line and paragraph
    separators, bidi overrides, ...) and the backslash written as an escape: one line that
    shows what was there."""
    return "".join(_escaped(char) for char in text)


def _escaped(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def log_value(value: str | int | None) -> str:
    """One ``key=value`` value: bare when it is plain, else quoted and escaped; ``-`` for none."""
    if value is None:
        return "-"
    text = str(value)
    if _BARE.fullmatch(text) and text != "-":
        return text
    return '"' + escape_text(text).replace('"', '\\"') + '"'


def audit_line(record: AuditRecord) -> str:
    """``audit forge=… repo=… pr=… actor=… verb=… result=…``, then the optional fields that are
    set (``target``, ``object``, ``pr_url``, ``delivery``)."""
    fields: list[tuple[str, str | int | None]] = [
        ("forge", record.forge),
        ("repo", record.repo),
        ("pr", record.number),
        ("actor", record.actor),
        ("verb", record.verb),
        ("result", record.result),
    ]
    optional = [
        ("target", record.target),
        ("object", record.object),
        ("pr_url", record.pr_url),
        ("delivery", record.delivery),
    ]
    fields += [(k, v) for k, v in optional if v is not None]
    return "audit " + " ".join(f"{key}={log_value(value)}" for key, value in fields)


def _clip(text: str) -> str:
    return text if len(text) <= FIELD_LIMIT else text[: FIELD_LIMIT - 1] + "…"


def _clip_optional(text: str | None) -> str | None:
    return None if text is None else _clip(text)


def _utc(at: datetime) -> datetime:
    # Stored times are compared with --since and with each other: always aware, always UTC.
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


class AuditTrail:
    """Records commands: the store, and one line of ``logger`` (``ichor.audit`` by default)."""

    def __init__(
        self,
        log: AuditLog,
        *,
        clock: Callable[[], datetime],
        logger: logging.Logger | None = None,
    ) -> None:
        self._log = log
        self._clock = clock
        self._logger = logger or logging.getLogger(AUDIT_LOGGER)

    def record(
        self,
        *,
        forge: str,
        repo: str,
        actor: str,
        verb: str,
        result: str,
        number: int | None = None,
        target: str | None = None,
        object: str | None = None,  # shadows the builtin: the field's name in AuditRecord
        pr_url: str | None = None,
        delivery: str | None = None,
    ) -> AuditRecord:
        """Stamp, log and store one record; never raises for a store that is down."""
        entry = AuditRecord(
            time=_utc(self._clock()),
            forge=_clip(forge),
            repo=_clip(repo),
            actor=_clip(actor),
            verb=_clip(verb),
            result=_clip(result),
            number=number,
            target=_clip_optional(target),
            object=_clip_optional(object),
            pr_url=_clip_optional(pr_url),
            delivery=_clip_optional(delivery),
        )
        # The log line first: it is the copy that survives a store that is down.
        self._logger.info("%s", audit_line(entry))
        try:
            self._log.append(entry)
        except Exception as exc:  # Redis down, or worse: the command already happened
            self._logger.warning(
                "audit record not stored (%s: %s); the command's result stands",
                type(exc).__name__,
                escape_text(str(exc)),
            )
        return entry


def redis_audit(url: str, *, timeout: float = 2.0, stream: str = keys.AUDIT_STREAM) -> RedisAudit:
    """The audit stream on the Redis at ``url``, with short timeouts: a reader waits on it at
    most that long."""
    connection = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    return RedisAudit(connection, stream=stream)


def audit_source(
    settings: Settings, shared: AuditLog | None = None, *, timeout: float = 2.0
) -> tuple[AuditLog, Callable[[], None]]:
    """The audit log the page reads, and what closes it: ``shared`` when given (the in-process
    queue's), else the Redis stream when the bot runs on Redis, else an empty memory (no job
    of this process writes one)."""
    if shared is not None:
        return shared, lambda: None
    if settings.redis_url:
        # Short timeouts, as for the history: a page waits on this at most that long.
        connection = redis.Redis.from_url(
            settings.redis_url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        return RedisAudit(connection), connection.close
    return MemoryAudit(), lambda: None
