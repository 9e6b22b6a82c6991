"""End to end on GitLab, what only GitLab does: opening a merge request whose answer was lost
is answered 409 the second time, and the merge request is found. The change commands
themselves, on every forge: :mod:`tests.e2e.test_changes`."""

from __future__ import annotations

from tests.e2e.drivers import GitLab
from tests.e2e.test_changes import BASE, CONFIG, NOTES


def test_a_lost_answer_to_opening_the_merge_request_opens_one(gitlab: GitLab) -> None:
    gitlab.base(BASE, config=CONFIG)
    gitlab.pull_request(gitlab.commit(NOTES), deliver=False)
    api = f"/api/v4/projects/{gitlab.project_id}"
    gitlab.fake.inject("POST", rf"{api}/merge_requests", status=502, after=True)
    reply = gitlab.ask("/ichor approve web/settings mode=canary")
    (mr,) = gitlab.bot_pulls()
    opened = [c for c in gitlab.calls() if "/merge_requests" in c and "/7" not in c]
    assert opened == [
        f"GET {api}/merge_requests 200",  # the readable branch's
        f"GET {api}/merge_requests 200",  # the hashed one's
        f"POST {api}/merge_requests 502",  # it was opened; the answer was lost
        f"POST {api}/merge_requests 409",
        f"GET {api}/merge_requests 200",
        f"GET {api}/merge_requests/{mr.number} 200",
    ]
    assert gitlab.pushes() == 1
    assert reply == f"Opened {mr.url} for `/approve`."
