"""The status page's views as values: durations, the index's filters, a repository's page."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from bot.state.base import AuditRecord
from bot.state.check_facts import CheckFacts, Finding, TargetLine, Waiting
from bot.state.history import CheckEntry, DeliveryEntry
from bot.web.check_view import Timing, check_view, queued_at, seconds, verdict
from bot.web.repo_view import Filters, change_pulls, page_query, repository_view

WEB = "https://github.example/acme/gitops"


def _entry(
    number: int | None,
    branch: str,
    *,
    at: float,
    conclusion: str = "failure",
    targets: tuple[TargetLine, ...] = (),
    waiting: tuple[Waiting, ...] = (),
    findings: tuple[Finding, ...] = (),
    repo: str = "acme/gitops",
    forge: str = "github",
) -> CheckEntry:
    facts = CheckFacts(branch, targets, findings, len(findings), waiting)
    sha = f"{int(at):040x}"[-40:]
    return CheckEntry(
        at, forge, repo, number, sha, conclusion, "t", "", (), 0, f"d{at}", WEB, "",
        f"job-{at}", at - 5, facts,
    )  # fmt: skip


def _target(name: str, verdict: str) -> TargetLine:
    return TargetLine(name, f"clusters/{name}", verdict, "accepted", 1, 0, verdict == "refused")


def test_durations_read_as_people_say_them() -> None:
    assert [seconds(s) for s in (0.04, 9.94, 12.4, 60, 185, 3600, 7380, -3)] == [
        "0.0 s", "9.9 s", "12 s", "1 min", "3 min 5 s", "1 h", "2 h 3 min", "0.0 s",
    ]  # fmt: skip
    timing = Timing(100.0, 101.5, 130.0)
    assert (timing.waited, timing.ran, timing.total) == ("1.5 s", "28 s", "30 s")
    assert Timing(None, None, 5.0).ran is None and Timing(None, 1.0, 5.0).waited is None


def test_queued_is_the_answer_that_queued_this_run_of_the_job() -> None:
    def answered(at: float, status: int = 202, job: str | None = "j") -> DeliveryEntry:
        return DeliveryEntry(at, "github", status, "queued", job_id=job)

    kept = [answered(50.0), answered(90.0), answered(95.0, 200), answered(99.0, job="k")]
    assert queued_at("j", 100.0, kept) == 90.0  # a redelivery queued it again at 90
    assert queued_at("j", 40.0, kept) is None  # the delivery is no longer kept
    assert queued_at("j", 89.0, kept) == 90.0  # answered just after the job started
    assert queued_at("", 100.0, kept) is None and queued_at("j", None, kept) is None


def test_a_check_view_links_where_the_result_was_posted() -> None:
    finding = Finding("prod", "clusters/prod/a.yaml", 3, "error", "foreign-file", "x", True)
    old = dataclasses.replace(finding, path="clusters/prod/b.txt", line=None, new=False)
    entry = _entry(7, "feature", at=1000.0, findings=(finding, old))
    view = check_view(entry, [], findings=True)
    assert view.pull == f"{WEB}/pull/7" and view.where == "#7"
    assert [r.link for r in view.new] == [f"{WEB}/blob/{entry.head_sha}/clusters/prod/a.yaml#L3"]
    assert [r.link for r in view.existing] == [f"{WEB}/blob/{entry.head_sha}/clusters/prod/b.txt"]
    local = dataclasses.replace(entry, posted_to="local", web_url=None)
    shown = check_view(local, [], findings=True)
    assert shown.pull is None and shown.new[0].link is None
    assert verdict("failure") == ("✗", "failure") and verdict("odd") == ("", "odd")
    assert check_view(_entry(None, "main", at=1.0), []).where == "main"


def test_filters_are_plain_query_parameters_checked_against_known_values() -> None:
    filters = Filters.from_query({"forge": "gitlab", "repo": " a/b ", "verdict": "failure"})
    assert filters == Filters("gitlab", "a/b", "failure") and filters.active
    assert Filters.from_query({"forge": "<x>", "verdict": "' or 1"}) == Filters()
    entry = _entry(1, "f", at=1.0, forge="gitlab", repo="a/b")
    assert filters.check(entry)
    assert not filters.check(dataclasses.replace(entry, conclusion="success"))
    assert not Filters(forge="github").check(entry)
    assert page_query({"forge": "gitlab", "x": "y"}, refresh="0") == "?forge=gitlab&refresh=0"
    assert page_query({"refresh": "0"}, refresh=None) == ""


def test_a_repository_page_from_what_the_status_page_keeps() -> None:
    prod_refused = (_target("prod", "refused"),)
    waiting = (Waiting("platform", "v1/Namespace pay", "clusters/platform/ns.yaml"),)
    checks = [  # newest first, as the store reads them
        _entry(
            None, "main", at=900.0, conclusion="success", targets=(_target("prod", "accepted"),)
        ),
        _entry(12, "bulk", at=800.0, targets=prod_refused),
        _entry(None, "main", at=700.0, targets=prod_refused),  # an older push of main
        _entry(13, "ichor/approve-web-cache", at=600.0, conclusion="success"),
        _entry(14, "ns", at=500.0, targets=(_target("platform", "accepted"),), waiting=waiting),
        _entry(15, "x", at=400.0, repo="acme/other"),  # another repository
        _entry(16, "x", at=300.0, forge="gitlab"),  # the same name on another forge
    ]
    at = datetime(2026, 1, 1, tzinfo=UTC)
    records = [
        AuditRecord(at, "github", "acme/gitops", "al", "approve", "pr-opened", 12, "prod",
                    "web/cache", f"{WEB}/pull/13"),
        AuditRecord(at, "github", "acme/gitops", "al", "approve", "pr-existing", 12, "prod",
                    "web/cache", f"{WEB}/pull/13"),
        AuditRecord(at, "github", "acme/gitops", "bo", "reject", "pr-opened", 14,
                    pr_url=f"{WEB}/pull/17"),
        AuditRecord(at, "github", "acme/gitops", "cy", "help", "done", 14),
        AuditRecord(at, "gitlab", "acme/gitops", "dy", "help", "done", 1),
    ]  # fmt: skip
    view = repository_view("github", "acme/gitops", checks, [], records, {"github": WEB})
    assert [v.where for v in view.latest] == ["main", "#12", "#13", "#14"]
    assert [(r.target.name, r.target.verdict, r.check.where) for r in view.targets] == [
        ("platform", "accepted", "#14"),
        ("prod", "accepted", "main"),  # the branch's state first, not a pull request's
    ]
    assert [p.where for p in view.targets[1].refusing] == ["#12"]
    assert [(w.waiting.identity, w.check.where) for w in view.waiting] == [
        ("v1/Namespace pay", "#14")
    ]
    changes = [(c.number, c.check.where if c.check else None) for c in view.changes]
    assert changes == [(13, "#13"), (17, None)]  # each once; #17 has no check kept
    assert len(view.commands) == 4 and view.web_url == WEB
    assert [r.pr_url for r in change_pulls(records, {})] == [f"{WEB}/pull/13", f"{WEB}/pull/17"]
