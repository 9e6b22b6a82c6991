"""Files in the spool that cannot be read back are set aside, and draining goes on: a real
``ichor-bot serve`` spools while its private Redis is down, finds bad files next to the good
ones, and queues every good one once Redis is back.
"""

from __future__ import annotations

import uuid

import httpx
import redis

from tests.support.waiting import wait_until
from tests.web.conftest import OwnRedis, ServeProc


def test_unreadable_spool_files_are_quarantined(
    serve_process: ServeProc, own_redis: OwnRedis
) -> None:
    queue = f"test-{uuid.uuid4().hex[:12]}"
    server = serve_process(redis_url=own_redis.url, queue_name=queue)
    own_redis.kill()
    for _ in range(2):
        assert server.post(timeout=5).json()["status"] == "spooled"
    spool = server.data_dir / "spool"
    # Named to sort first, so each stands in front of the good ones.
    (spool / "00000000000000000000-000001-garbage.json").write_bytes(b"\xff{not json")
    (spool / "00000000000000000000-000002-shape.json").write_text('{"forge": "github"}')
    (spool / "00000000000000000000-000003-folder.json").mkdir()
    (spool / "00000000000000000000-000004-deep.json").write_text("[" * 100_000)
    own_redis.start()
    wait_until(lambda: not list(spool.glob("*.json")), "the spool drained")
    assert redis.Redis(port=own_redis.port).llen(f"rq:queue:{queue}") == 2
    quarantine = server.data_dir / "spool-quarantine"
    assert sorted(p.name.split("-")[-1] for p in quarantine.iterdir()) == [
        "deep.json",
        "folder.json",
        "garbage.json",
        "shape.json",
    ]
    assert "ichor_spool_quarantined_total 4.0" in httpx.get(server.url + "/metrics").text
    assert "garbage.json" in server.log.read_text()
    assert server.post(timeout=5).json()["status"] == "queued"
