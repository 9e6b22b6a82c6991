"""No delivery is missed for good (design.md 7), end to end on every forge: a pull request is
opened while the bot is down, so its webhook never reaches it. When a worker starts again, its
sweep asks GitHub to deliver it again (GitHub keeps the App's deliveries) or, on GitLab, Gitea
and Forgejo, reconciles the repository's open pull requests; either way the pull request ends
with a verdict, and a second sweep runs nothing twice.

The real ``ichor-bot serve`` and ``ichor-bot worker`` on Redis; the fake forges check every
request against the forge's API description or documented rules (the redelivery itself is the
fake GitHub sending the delivery, signed, to the web process, as GitHub does).
"""

from __future__ import annotations

import re

import httpx

from bot.reconcile.events import EVENT_NAME
from bot.state import keys
from bot.state.history import RedisHistory
from tests.e2e.drivers import Forge, GitHub
from tests.e2e.harness import SECRET
from tests.support.gitops import configmap

EXTRA = {"clusters/prod/v1/configmaps/web/extra.yaml": configmap("extra")}


def sweeping(forge: Forge) -> None:
    """The next worker sweeps when it starts, as after a restart (the interval's lock, which
    an earlier test's worker may hold on this module's queue, is let go)."""
    forge.worker_env["ICHOR_RECONCILE_INTERVAL"] = "300"
    forge.bot.redis.delete(keys.sweep_lock(forge.bot.queue))


def reconciled_jobs(forge: Forge) -> list[str]:
    """The jobs the reconciler queued for this repository, from the status page's records."""
    history = RedisHistory(forge.bot.redis_url, forge.bot.queue)
    try:
        listed = history.deliveries()
    finally:
        history.close()
    return [
        d.job_id
        for d in listed
        if d.event == EVENT_NAME and d.repository == forge.full_name and d.job_id
    ]


def test_a_pull_request_opened_while_the_bot_was_down_ends_with_a_verdict(forge: Forge) -> None:
    forge.base()
    head = forge.commit(EXTRA)
    payload = forge.pull_request(head, deliver=False)  # the bot is down: nothing reaches it
    lost = None
    if isinstance(forge, GitHub):  # GitHub tried, and kept the delivery and its failure
        forge.fake.set_webhook(f"{forge.bot.url}/webhooks/github", SECRET)
        lost = forge.fake.add_delivery("pull_request", payload, status_code=502)
        forge.bot.deliveries.append(f"github-{lost['guid']}")  # the harness cleans it up
    sweeping(forge)
    run = forge.work()  # a worker starts again

    assert forge.states(head) == forge.checked(forge.PASSED)
    assert forge.verdict() == (forge.PASSED, "1 touched target accepted")
    if isinstance(forge, GitHub):
        assert lost is not None
        # Through GitHub's redelivery (same GUID), not a check of the reconciler's own.
        (check_run,) = forge.check_runs()
        assert check_run["external_id"] == lost["guid"]
        attempts = [d for d in forge.fake.hook_deliveries() if d["guid"] == lost["guid"]]
        assert [(d["redelivery"], d["status_code"]) for d in attempts] == [
            (False, 502),
            (True, 202),
        ]
        assert reconciled_jobs(forge) == []
        assert "asked GitHub to deliver" in run.log
    else:
        (job,) = reconciled_jobs(forge)
        assert forge.bot.job_status(job) == "finished"
        forge.bot.deliveries.append(job)  # the harness cleans it up

    # Another sweep (another restart) finds the head done: nothing runs twice.
    forge.reset_calls()
    sweeping(forge)
    forge.work()
    assert forge.states(head) == forge.checked(forge.PASSED)
    writes = [c for c in forge.calls() if c.startswith(("POST", "PUT", "PATCH"))]
    assert [c for c in writes if "/access_tokens" not in c] == [], forge.calls()
    if isinstance(forge, GitHub):
        assert lost is not None
        assert len([d for d in forge.fake.hook_deliveries() if d["guid"] == lost["guid"]]) == 2
        # The head is known done from the bot's own record: the forge is not even asked.
        assert forge.calls()[-1] == f"GET /repos/{forge.full_name}/pulls 200"
    else:
        assert len(reconciled_jobs(forge)) == 1

    # The status page says when the repository was reconciled and what was found.
    page = httpx.get(forge.bot.url + "/", timeout=10).text
    part = page.split('<section id="sweeps">', 1)[1].split("</section>", 1)[0]
    rows = [
        " ".join(re.sub(r"<[^>]+>", " ", r).split())
        for r in re.findall(r"<tr>(.*?)</tr>", part, re.S)
    ]
    (mine,) = [r for r in rows if f" {forge.full_name} " in r]
    assert f"{forge.route} {forge.full_name} 1 1 0 0 0" in mine
    forge.bot.redis.delete(keys.sweep_lock(forge.bot.queue))
