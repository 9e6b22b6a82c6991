"""Strict new objects and which of them approvals cover."""

from __future__ import annotations

from bot.approvals.approval import Approval
from bot.approvals.fingerprints import fingerprint
from bot.approvals.pending import NewObject, approval_status, strict_new_objects
from bot.gate.report import ManagedObject, Report, TargetReport, empty_counts

HEAD = "c" * 40


def obj(name: str, digest: str = "a", namespace: str = "prod") -> ManagedObject:
    return ManagedObject(("apps", "Deployment", namespace, name), f"t/{name}.yaml", 1, digest * 64)


def report(**targets: tuple[ManagedObject, ...]) -> Report:
    return Report(
        None,
        targets=tuple(
            TargetReport(name, name, (), empty_counts(), managed=objects)
            for name, objects in targets.items()
        ),
    )


def approval(approver: str, *objects: ManagedObject) -> Approval:
    return Approval(approver, HEAD, frozenset(fingerprint(o) for o in objects), "1")


def test_new_objects_are_those_of_strict_targets_the_base_lacks() -> None:
    web, api, db = obj("web"), obj("api"), obj("db")
    head = report(prod=(web, api, db), dev=(obj("x"),))
    base = report(prod=(obj("web", "b"),), dev=())
    new = strict_new_objects(head, base, {"prod": "strict", "dev": "relaxed"})
    assert new == (NewObject("prod", api), NewObject("prod", db))
    assert [(n.identity, n.path) for n in new] == [
        ("Deployment.apps prod/api", "t/api.yaml"),
        ("Deployment.apps prod/db", "t/db.yaml"),
    ]


def test_a_changed_object_is_not_new_but_a_moved_namespace_is() -> None:
    head = report(prod=(obj("web", "b"), obj("api", namespace="other")))
    base = report(prod=(obj("web"), obj("api")))
    new = strict_new_objects(head, base, {"prod": "strict"})
    assert [n.object.identity for n in new] == [("apps", "Deployment", "other", "api")]


def test_without_a_base_every_object_of_a_strict_target_is_new() -> None:
    head = report(prod=(obj("web"),), dev=(obj("api"),))
    assert len(strict_new_objects(head, None, {"prod": "strict"})) == 1
    # A target with no report at base: every object is new too.
    assert len(strict_new_objects(head, report(dev=()), {"prod": "strict", "dev": "strict"})) == 2


def test_a_relaxed_target_never_has_new_objects() -> None:
    head = report(prod=(obj("web"),))
    assert strict_new_objects(head, None, {"prod": "relaxed"}) == ()
    assert strict_new_objects(head, None, {}) == ()


def new_objects(*objects: ManagedObject) -> tuple[NewObject, ...]:
    return tuple(NewObject("prod", o) for o in objects)


def test_an_approval_covers_exactly_its_fingerprints() -> None:
    web, api = obj("web"), obj("api")
    given = approval("bob", web, api)
    status = approval_status(
        new_objects(web, api), [given], pr_author="alice", allow_author_approval=False
    )
    assert status.complete and status.waiting == ()
    assert status.approved == ((NewObject("prod", web), given), (NewObject("prod", api), given))
    # The same identity with another digest is a changed object: waiting again, alone.
    changed = obj("api", "e")
    status = approval_status(
        new_objects(web, changed), [given], pr_author="alice", allow_author_approval=False
    )
    assert status.waiting == (NewObject("prod", changed),)
    assert [o.identity for o, _ in status.approved] == ["Deployment.apps prod/web"]
    # The summary can say whose approval the change outdated, and at which commit.
    assert status.outdated == ((NewObject("prod", changed), given),)
    assert status.waiting_targets == ("prod",) and status.objects == 2 and not status.complete


def test_the_first_approval_that_covers_an_object_is_named() -> None:
    web = obj("web")
    first, second = approval("bob", web), approval("carol", web)
    status = approval_status(
        new_objects(web), [first, second], pr_author=None, allow_author_approval=False
    )
    assert status.approved == ((NewObject("prod", web), first),)


def test_the_authors_own_approval_counts_only_when_allowed() -> None:
    web = obj("web")
    own = approval("Alice", web)
    refused = approval_status(
        new_objects(web), [own], pr_author="alice", allow_author_approval=False
    )
    assert refused.waiting == (NewObject("prod", web),)
    allowed = approval_status(
        new_objects(web), [own], pr_author="alice", allow_author_approval=True
    )
    assert allowed.complete
    unknown_author = approval_status(
        new_objects(web), [own], pr_author=None, allow_author_approval=False
    )
    assert unknown_author.complete


def test_no_new_objects_is_complete() -> None:
    status = approval_status((), [], pr_author="alice", allow_author_approval=False)
    assert status.complete and status.objects == 0 and status.waiting_targets == ()
