"""A worker's teardown never waits out its pubsub reader's 60 s poll.

RQ sends UNSUBSCRIBE and then stops its pubsub thread, and redis-py 8's ``stop()`` joins it with
no timeout. A reader that takes the UNSUBSCRIBE reply before the stop flag is cleared goes back
to waiting, for up to RQ's ``sleep_time`` of 60 s, on a subscription that never comes: ``worker
--burst`` hung about a minute after "done, quitting", and so did a graceful shutdown. Here the
race is made certain (the reply is read first) rather than left to chance.

Redis at 127.0.0.1:6379; the shared one is only read and written, never stopped.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rq import Queue

from bot.queueing.worker import IchorWorker, Timings, worker_connection
from tests.support.redis_url import SHARED_REDIS_URL

# Far more than a teardown needs, far less than the 60 s the race cost: a hang, not a timing.
HANG = 30.0


@pytest.fixture
def worker() -> Iterator[IchorWorker]:
    connection = worker_connection(SHARED_REDIS_URL, outage_seconds=1)
    queue = Queue(f"teardown-{uuid.uuid4().hex[:8]}", connection=connection)
    made = IchorWorker([queue], connection=connection, timings=Timings(1.0, 5, 1.0))
    yield made
    connection.close()


def _returns(action: threading.Thread) -> bool:
    action.start()
    action.join(HANG)
    return not action.is_alive()


def _subscribed_then_reply_read(worker: IchorWorker) -> None:
    worker.subscribe()  # type: ignore[no-untyped-call]
    pubsub = worker.pubsub
    assert pubsub is not None
    assert pubsub.subscribed_event.wait(HANG)
    # The reader takes the UNSUBSCRIBE reply before anything stops it: the race, made certain.
    pubsub.unsubscribe()  # type: ignore[no-untyped-call]
    for _ in range(int(HANG / 0.01)):
        if not pubsub.subscribed:
            return
        threading.Event().wait(0.01)
    raise AssertionError("the reader never took the UNSUBSCRIBE reply")


def test_teardown_after_the_reader_took_the_reply_returns(worker: IchorWorker) -> None:
    _subscribed_then_reply_read(worker)
    assert _returns(threading.Thread(target=worker.unsubscribe, daemon=True))


def test_teardown_of_a_subscribed_reader_returns_and_stops_it(worker: IchorWorker) -> None:
    worker.subscribe()  # type: ignore[no-untyped-call]
    assert worker.pubsub is not None and worker.pubsub.subscribed_event.wait(HANG)
    thread: threading.Thread | None = getattr(worker, "pubsub_thread", None)
    assert thread is not None
    assert _returns(threading.Thread(target=worker.unsubscribe, daemon=True))
    thread.join(HANG)
    assert not thread.is_alive()


def test_a_burst_worker_quits_once_the_queue_is_empty(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ICHOR_")}
    env.update(
        ICHOR_REDIS_URL=SHARED_REDIS_URL,
        ICHOR_QUEUE_NAME=f"teardown-{uuid.uuid4().hex[:8]}",
        ICHOR_DATA_DIR=str(tmp_path),
        ICHOR_WORKER_ALIVE_FILE=str(tmp_path / "alive"),
    )
    done = subprocess.run(
        [str(Path(sys.executable).parent / "ichor-bot"), "worker", "--burst"],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "done, quitting" in done.stderr
    assert (tmp_path / "alive").exists()  # the probe's file, touched as the heartbeat began


def test_a_burst_workers_maintenance_never_forks_a_scheduler(worker: IchorWorker) -> None:
    """RQ 3.0 starts its scheduler process from the maintenance run after a job, burst or not:
    forked while the pubsub reader and the keeper run, it may inherit a held lock and never
    stop, and the burst worker then waits for it (a `worker --burst` in the suite hung past
    two minutes). A burst worker's maintenance only cleans the registries."""
    worker.work(burst=True, with_scheduler=True)  # an empty queue: starts, maintains, quits
    assert worker.scheduler is not None  # it enqueued the scheduled jobs when it started
    worker.last_cleaned_at = datetime.now(UTC)  # type: ignore[assignment]  # not the first run
    worker.run_maintenance_tasks()
    assert worker.scheduler._process is None  # no scheduler process was forked
