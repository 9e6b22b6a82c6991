"""The state on Redis, shared by every web and worker process.

Heads are a sorted set per pull request, scored by a global sequence in the order they
arrived. The web process records a pull request's head inside the queue's submit script
(:mod:`bot.queueing.redis_queue`), atomically with its job, so a job never runs for a head
that was not recorded; that script embeds :data:`RECORD_HEAD_LUA`, the same statement
:meth:`RedisHeads.record_head` runs on its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import redis

from bot.approvals.approval import Approval
from bot.approvals.codec import approval_from_dict, approval_to_dict, shown_from_json, shown_to_json
from bot.approvals.seen import SHOWN_KEPT, ShownCheck
from bot.forges.base import Permission
from bot.state import keys as key_names
from bot.state.base import PERMISSION_TTL, AuditRecord, StateStore
from bot.state.locks import RedisRepoLock
from bot.state.records import audit_from_json, audit_to_json

# Long enough for any pull request's life; forgetting only costs one listing of comments.
LINE_COMMENT_MEMORY_SECONDS = 180 * 24 * 3600
# Heads are kept as long as the deliveries' dedupe markers.
HEAD_TTL_SECONDS = 7 * 24 * 3600


# Record head {sha} in sorted set {heads} (sequence {sequence}, expiry {ttl}); {redelivery} is
# true for a failed job's redelivery, which never rewinds a newer head. Placeholders are Lua
# expressions, so the submit script can embed the statement with its own KEYS and ARGV.
RECORD_HEAD_LUA = """
if not ({redelivery}) or not redis.call('ZSCORE', {heads}, {sha}) then
  redis.call('ZADD', {heads}, redis.call('INCR', {sequence}), {sha})
end
redis.call('EXPIRE', {heads}, {ttl})
"""

_RECORD_HEAD_SCRIPT = RECORD_HEAD_LUA.format(
    heads="KEYS[1]", sequence="KEYS[2]", sha="ARGV[1]", ttl="ARGV[2]", redelivery="ARGV[3] == '1'"
)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisHeads:
    def __init__(self, connection: redis.Redis) -> None:
        self._redis = connection
        self._script = connection.register_script(_RECORD_HEAD_SCRIPT)

    def record_head(self, pull: str, sha: str, *, redelivery: bool) -> None:
        keys = [key_names.head(pull), key_names.HEAD_SEQUENCE]
        self._script(keys, [sha, HEAD_TTL_SECONDS, "1" if redelivery else "0"])

    def latest_head(self, pull: str) -> str | None:
        newest = self._redis.zrevrange(key_names.head(pull), 0, 0)
        return _text(newest[0]) if newest else None


class RedisCheckedHeads:
    """A set of shas per pull request, kept as long as its heads."""

    def __init__(self, connection: redis.Redis) -> None:
        self._redis = connection

    def checked(self, pull: str, sha: str) -> bool:
        return bool(self._redis.sismember(key_names.checked(pull), sha))

    def remember_checked(self, pull: str, sha: str) -> None:
        pipe = self._redis.pipeline(transaction=False)
        pipe.sadd(key_names.checked(pull), sha)
        pipe.expire(key_names.checked(pull), HEAD_TTL_SECONDS)
        pipe.execute()


class RedisLineComments:
    def __init__(self, connection: redis.Redis) -> None:
        self._redis = connection

    def has_line_comments(self, pull: str) -> bool:
        return bool(self._redis.exists(key_names.line_comments(pull)))

    def remember_line_comments(self, pull: str) -> None:
        self._redis.set(key_names.line_comments(pull), "1", ex=LINE_COMMENT_MEMORY_SECONDS)


# Approvals live as long as a pull request may stay open; lost ones are rebuilt from the forge.
APPROVAL_TTL_SECONDS = 180 * 24 * 3600
AUDIT_MAX_LEN = 10_000
AUDIT_PAGE = 200  # entries read per round trip when listing
_KNOWN = "_"  # a field present in every approvals hash: "recorded, maybe none"


class RedisApprovals:
    """A hash per pull request: approver -> approval JSON (with its order), plus a field that
    tells "no approvals" from "nothing recorded"."""

    def __init__(self, connection: redis.Redis) -> None:
        self._redis = connection

    def approvals(self, pull: str) -> tuple[Approval, ...] | None:
        raw = self._redis.hgetall(key_names.approvals(pull))
        if not raw:
            return None
        found: list[tuple[int, Approval]] = []
        for field, value in raw.items():
            if _text(field) == _KNOWN:
                continue
            try:
                entry = json.loads(value)
                found.append((int(entry["order"]), approval_from_dict(entry["approval"])))
            except (ValueError, KeyError, TypeError):
                continue  # a damaged entry is lost, like an expired one
        return tuple(a for _, a in sorted(found, key=lambda pair: pair[0]))

    def _write(self, pipe: Any, key: str, approval: Approval, order: int) -> None:
        entry = {"order": order, "approval": approval_to_dict(approval)}
        pipe.hset(key, approval.approver, json.dumps(entry, sort_keys=True))

    def record(self, pull: str, approval: Approval) -> None:
        key = key_names.approvals(pull)
        order = int(self._redis.hincrby(key, _KNOWN, 1))
        pipe = self._redis.pipeline()
        self._write(pipe, key, approval, order)
        pipe.expire(key, APPROVAL_TTL_SECONDS)
        pipe.execute()

    def withdraw(self, pull: str, approver: str) -> Approval | None:
        key = key_names.approvals(pull)
        pipe = self._redis.pipeline()
        pipe.hget(key, approver)
        pipe.hdel(key, approver)
        pipe.hincrby(key, _KNOWN, 1)
        pipe.expire(key, APPROVAL_TTL_SECONDS)
        raw, *_ = pipe.execute()
        if raw is None:
            return None
        try:
            return approval_from_dict(json.loads(raw)["approval"])
        except (ValueError, KeyError, TypeError):
            return None

    def restore(self, pull: str, approvals: Sequence[Approval]) -> None:
        key = key_names.approvals(pull)
        pipe = self._redis.pipeline()
        pipe.delete(key)
        pipe.hset(key, _KNOWN, len(approvals))
        for order, approval in enumerate(approvals):
            self._write(pipe, key, approval, order)
        pipe.expire(key, APPROVAL_TTL_SECONDS)
        pipe.execute()


class RedisShownChecks:
    """A list per pull request, oldest first, trimmed to the newest ``SHOWN_KEPT``."""

    def __init__(self, connection: redis.Redis) -> None:
        self._redis = connection

    def shown(self, pull: str) -> tuple[ShownCheck, ...] | None:
        raw = self._redis.lrange(key_names.shown(pull), 0, -1)
        if not raw:
            return None
        found: list[ShownCheck] = []
        for entry in raw:
            try:
                found.append(shown_from_json(_text(entry)))
            except (ValueError, KeyError, TypeError):
                continue  # a damaged entry shows nothing: its objects wait
        return tuple(found)

    def record_shown(self, pull: str, check: ShownCheck) -> None:
        key = key_names.shown(pull)
        pipe = self._redis.pipeline(transaction=True)
        pipe.rpush(key, shown_to_json(check))
        pipe.ltrim(key, -SHOWN_KEPT, -1)
        pipe.expire(key, LINE_COMMENT_MEMORY_SECONDS)
        pipe.execute()


class RedisAudit:
    """A capped stream: the newest ``AUDIT_MAX_LEN`` records (approximately)."""

    def __init__(
        self,
        connection: redis.Redis,
        *,
        stream: str = key_names.AUDIT_STREAM,
        max_len: int = AUDIT_MAX_LEN,
    ) -> None:
        self._redis = connection
        self._stream = stream
        self._max_len = max_len

    def append(self, record: AuditRecord) -> None:
        self._redis.xadd(
            self._stream, {"record": audit_to_json(record)}, maxlen=self._max_len, approximate=True
        )

    def recent(
        self, *, repo: str | None = None, since: datetime | None = None, limit: int = 100
    ) -> list[AuditRecord]:
        # Page by page, newest first: a page view wants 20 records, not the whole stream.
        found: list[AuditRecord] = []
        newest, read = "+", 0
        while len(found) < limit and read < self._max_len:
            page = self._redis.xrevrange(self._stream, max=newest, count=AUDIT_PAGE) or []
            for entry_id, fields in page:
                newest = "(" + _text(entry_id)  # the next page starts below this entry
                record = _audit_entry(fields)
                if record is None:
                    continue
                if since is not None and record.time < since:
                    return found  # newest first: everything further is older
                if repo is None or record.repo == repo:
                    found.append(record)
                    if len(found) >= limit:
                        return found
            read += len(page)
            if len(page) < AUDIT_PAGE:
                break
        return found


def _audit_entry(fields: Any) -> AuditRecord | None:
    raw = (fields or {}).get(b"record") or (fields or {}).get("record")
    if raw is None:
        return None
    try:
        return audit_from_json(_text(raw))
    except (ValueError, KeyError, TypeError):
        return None  # a damaged entry is skipped, like an expired one


class RedisPermissions:
    def __init__(self, connection: redis.Redis) -> None:
        self._redis = connection

    @staticmethod
    def _key(forge: str, repo: str, user: str) -> str:
        return key_names.permission(forge, repo, user)

    def get(self, forge: str, repo: str, user: str) -> Permission | None:
        raw = self._redis.get(self._key(forge, repo, user))
        if raw is None:
            return None
        try:
            return Permission[_text(raw)]
        except KeyError:
            return None

    def put(self, forge: str, repo: str, user: str, permission: Permission) -> None:
        self._redis.set(self._key(forge, repo, user), permission.name, ex=PERMISSION_TTL)


class RedisOnboarding:
    """No expiry: a repository that declined the proposal is never offered it again."""

    def __init__(self, connection: redis.Redis) -> None:
        self._redis = connection

    def proposed(self, repo_key: str) -> bool:
        return bool(self._redis.exists(key_names.onboarding_proposed(repo_key)))

    def remember_proposed(self, repo_key: str) -> None:
        self._redis.set(key_names.onboarding_proposed(repo_key), "1")

    def declined(self, repo_key: str) -> bool:
        return bool(self._redis.exists(key_names.onboarding_declined(repo_key)))

    def remember_declined(self, repo_key: str) -> None:
        self._redis.set(key_names.onboarding_declined(repo_key), "1")

    def forget_declined(self, repo_key: str) -> None:
        self._redis.delete(key_names.onboarding_declined(repo_key))


def redis_state(connection: redis.Redis) -> StateStore:
    return StateStore(
        RedisHeads(connection),
        RedisLineComments(connection),
        RedisApprovals(connection),
        RedisShownChecks(connection),
        RedisAudit(connection),
        RedisPermissions(connection),
        RedisRepoLock(connection),
        RedisOnboarding(connection),
        RedisCheckedHeads(connection),
    )
