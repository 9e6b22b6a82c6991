"""The state on Redis, shared by every web and worker process.

Heads are a sorted set per pull request, scored by a global sequence in the order they
arrived. The web process records a pull request's head inside the queue's submit script
(:mod:`bot.queueing.redis_queue`), atomically with its job, so a job never runs for a head
that was not recorded; that script embeds :data:`RECORD_HEAD_LUA`, the same statement
:meth:`RedisHeads.record_head` runs on its own.
"""

from __future__ import annotations

from typing import Any

import redis

from bot.state.base import StateStore

HEAD_SEQUENCE_KEY = "ichor:heads-sequence"
# Long enough for any pull request's life; forgetting only costs one listing of comments.
LINE_COMMENT_MEMORY_SECONDS = 180 * 24 * 3600
# Heads are kept as long as the deliveries' dedupe markers.
HEAD_TTL_SECONDS = 7 * 24 * 3600


def head_key(pull: str) -> str:
    return f"ichor:heads:{pull}"


def line_comments_key(pull: str) -> str:
    return f"ichor:line-comments:{pull}"


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
        keys = [head_key(pull), HEAD_SEQUENCE_KEY]
        self._script(keys, [sha, HEAD_TTL_SECONDS, "1" if redelivery else "0"])

    def latest_head(self, pull: str) -> str | None:
        newest = self._redis.zrevrange(head_key(pull), 0, 0)
        return _text(newest[0]) if newest else None


class RedisLineComments:
    def __init__(self, connection: redis.Redis) -> None:
        self._redis = connection

    def has_line_comments(self, pull: str) -> bool:
        return bool(self._redis.exists(line_comments_key(pull)))

    def remember_line_comments(self, pull: str) -> None:
        self._redis.set(line_comments_key(pull), "1", ex=LINE_COMMENT_MEMORY_SECONDS)


def redis_state(connection: redis.Redis) -> StateStore:
    return StateStore(RedisHeads(connection), RedisLineComments(connection))
