"""The shared Redis the tests use: 127.0.0.1:6379, one database per pytest-xdist worker.

Tests that share the machine's Redis name their keys by repository and queue, and some of those
names are fixed (``acme/gitops``); two xdist workers running such tests at once would read each
other's keys. Each worker gets a database of its own (``gw0`` → 1, ``gw1`` → 2, …; a run without
xdist uses 0), so within a database tests run one after another as before.
``ICHOR_TEST_REDIS_DB`` moves the whole range, for two checkouts testing on one machine.
"""

from __future__ import annotations

import os

DATABASES = 16  # redis-server's default


def shared_database() -> int:
    base = int(os.environ.get("ICHOR_TEST_REDIS_DB", "0"))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    offset = int(worker.removeprefix("gw")) + 1 if worker.startswith("gw") else 0
    return (base + offset) % DATABASES


SHARED_REDIS_URL = f"redis://127.0.0.1:6379/{shared_database()}"
