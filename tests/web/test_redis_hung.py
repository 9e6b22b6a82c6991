"""A real ``ichor-bot serve`` on a private Redis that hangs (SIGSTOP) or dies: every request is
still answered within its deadline, deliveries are spooled, and they reach the queue later.

The client timeouts are the deadlines (GitHub gives a delivery 10 s); before the web process
bounded its waits on Redis, a status page took minutes and a delivery several seconds.
"""

from __future__ import annotations

import concurrent.futures
import time
import uuid

import httpx
import redis

from tests.support.waiting import wait_until
from tests.web.conftest import OwnRedis, ServeProc, ServeProcess

DEADLINE = 3.0  # well above the 0.5 s the server waits on Redis, well below a socket timeout


def spooled_files(server: ServeProcess) -> int:
    return len(list((server.data_dir / "spool").glob("*.json")))


def answer_seconds(server: ServeProcess) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = server.post(timeout=DEADLINE)
    return time.perf_counter() - started, response


def test_a_hung_redis_blocks_no_request(serve_process: ServeProc, own_redis: OwnRedis) -> None:
    queue = f"test-{uuid.uuid4().hex[:12]}"
    server = serve_process(redis_url=own_redis.url, queue_name=queue)
    assert server.post().json()["status"] == "queued"
    for _ in range(3):  # the page looks jobs up: give it some
        server.post()
    own_redis.pause()
    try:
        seconds = []
        for _ in range(5):
            took, response = answer_seconds(server)
            assert (response.status_code, response.json()["status"]) == (202, "spooled")
            seconds.append(took)
        print(
            f"\nwebhook answer with Redis hung: {', '.join(f'{s * 1000:.0f} ms' for s in seconds)}"
        )
        with concurrent.futures.ThreadPoolExecutor(12) as pool:
            pages = [
                pool.submit(httpx.get, server.url + path, timeout=DEADLINE)
                for path in ("/", "/metrics", "/readyz") * 4
            ]
            answers = [p.result() for p in pages]
        assert [a.status_code for a in answers] == [200, 200, 503] * 4
        assert "ichor_queue_depth -1.0" in answers[1].text
        # Still answering while those look-ups wait on the hung Redis.
        assert answer_seconds(server)[1].status_code == 202
        assert spooled_files(server) == 6
    finally:
        own_redis.resume()
    wait_until(lambda: spooled_files(server) == 0, "the spool drained")
    assert redis.Redis(port=own_redis.port).llen(f"rq:queue:{queue}") == 10
    assert httpx.get(server.url + "/readyz", timeout=DEADLINE).status_code == 200


def test_a_killed_redis_spools_at_once(serve_process: ServeProc, own_redis: OwnRedis) -> None:
    server = serve_process(redis_url=own_redis.url)
    assert server.post().status_code == 202
    own_redis.kill()
    took, response = answer_seconds(server)
    assert (response.status_code, response.json()["status"]) == (202, "spooled")
    print(f"\nwebhook answer with Redis killed: {took * 1000:.0f} ms")
    assert httpx.get(server.url + "/readyz", timeout=DEADLINE).status_code == 503
    assert httpx.get(server.url + "/", timeout=DEADLINE).status_code == 200
    assert spooled_files(server) == 1
