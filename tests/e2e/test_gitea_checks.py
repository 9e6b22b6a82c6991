"""End to end on Gitea and Forgejo, what only their webhooks say: a pull request moved to
another base branch (an ``edited`` delivery naming the old base) is checked against the new
one. The check itself, on every forge: :mod:`tests.e2e.test_checks`."""

from __future__ import annotations

from tests.e2e.drivers import Gitea


def test_a_retargeted_pull_request_is_checked_against_its_new_base(gitea: Gitea) -> None:
    # release is older than main: the issue main already has is new against release.
    release = gitea.base()
    base = gitea.commit({"clusters/prod/old-notes.txt": "old\n"})
    head = gitea.commit({"clusters/prod/new-notes.txt": "new\n"})
    gitea.local.set_ref("refs/heads/release", release)
    gitea.pull_request(head, base=base)
    gitea.work()
    assert "1 new issue, 1 already on base" in gitea.summary()

    gitea.fake.update_pull(gitea.full_name, gitea.number, base_ref="release", base_sha=release)
    payload = gitea.pull_request(head, base=release, deliver=False)
    payload["action"] = "edited"
    payload["changes"] = {"ref": {"from": "main"}}
    payload["pull_request"]["base"].update(ref="release", label="release")
    gitea.deliver(payload)
    gitea.work()
    assert gitea.states(head) == gitea.checked(gitea.FAILED, gitea.FAILED)
    assert "2 new issues" in gitea.summary()  # the one summary, edited in place
