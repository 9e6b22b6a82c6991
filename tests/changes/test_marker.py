"""Which change a pull request is for: the marker an object's change writes and reads back."""

from __future__ import annotations

from bot.changes.marker import (
    change_trailer,
    marked_object,
    not_this_change,
    object_marker,
    taken_branch,
    trailer_change,
)
from bot.changes.pr_body import Impact, Requester, pr_body
from bot.gate.content.identity import Identity

IMPACT = Impact("prod", ("Deployment.apps web/frontend",), ("clusters/prod/frontend.yaml",))
DEPLOYMENT = ("apps", "Deployment", "web", "frontend")


def test_an_object_change_names_its_verb_and_whole_identity_in_its_first_line() -> None:
    marker = object_marker("delete", "prod", DEPLOYMENT)
    assert marker == '<!-- ichor:change delete ["prod","apps","Deployment","web","frontend"] -->'
    body = pr_body("x", Requester("maria"), IMPACT, marker)
    assert body.startswith(marker + "\n")
    assert marked_object(body) == ("delete", ("prod", DEPLOYMENT))
    assert not_this_change(body, "delete", "prod", DEPLOYMENT) is None


def test_an_identity_that_could_end_the_comment_is_still_one_marker() -> None:
    odd: Identity = ("x", "K", "web", 'a --> <b> & "c" ü \udcff')
    marker = object_marker("approve", "prod", odd)
    assert marker.count("-->") == 1 and "<b>" not in marker and marker.isascii()
    assert marked_object(f"text\n{marker}\nmore") == ("approve", ("prod", odd))


def test_a_body_that_names_another_object_or_none_is_not_this_changes() -> None:
    service = ("", "Service", "web", "frontend")
    theirs = pr_body("x", Requester("maria"), IMPACT, object_marker("delete", "prod", DEPLOYMENT))
    assert not_this_change(theirs, "delete", "prod", service) == (
        "it is for delete Deployment.apps web/frontend in prod"
    )
    assert not_this_change(theirs, "approve", "prod", DEPLOYMENT) is not None  # another verb
    edited = "I rewrote the description"
    for body in (edited, None, pr_body("x", Requester("maria"), IMPACT)):  # the last: no object
        assert not_this_change(body, "delete", "prod", DEPLOYMENT) == (
            "its description does not say which object it is for: was it edited?"
        )


def test_markers_a_person_wrote_are_read_as_none() -> None:
    two = (
        object_marker("delete", "prod", DEPLOYMENT)
        + "\n"
        + object_marker("delete", "prod", ("", "S", "", "x"))
    )
    assert marked_object(two) is None  # which one? neither
    doubled = (
        object_marker("delete", "prod", DEPLOYMENT)
        + "\n"
        + object_marker("delete", "prod", DEPLOYMENT)
    )
    assert marked_object(doubled) == ("delete", ("prod", DEPLOYMENT))
    for line in (
        '<!-- ichor:change delete ["a","b","c"] -->',
        '<!-- ichor:change delete ["a","b","c",4] -->',
        '<!-- ichor:change delete ["a","b","c","d"] -->',  # before markers named the target
        '<!-- ichor:change delete ["t","a","b","c",4] -->',
        "<!-- ichor:change delete [not json] -->",
        "<!-- ichor:change delete " + "[" * 100_000 + "]" * 100_000 + " -->",
        '<!-- ichor:change Delete ["t","a","b","c","d"] -->',
    ):
        assert marked_object(line) is None, line[:60]


def test_the_refusal_names_the_pull_request_the_branch_and_both_changes() -> None:
    why = not_this_change("edited", "delete", "prod", DEPLOYMENT)
    assert why is not None
    assert taken_branch(
        "https://f/o/r/pull/8",
        "ichor/delete-web-frontend-722fc79e",
        "delete",
        "prod",
        DEPLOYMENT,
        why,
    ) == (
        "https://f/o/r/pull/8 is open on ichor/delete-web-frontend-722fc79e, and it is not the "
        "pull request for delete Deployment.apps web/frontend in prod (its description does not "
        "say which object it is for: was it edited?): nothing was pushed while it is open"
    )


def test_one_identity_in_another_target_is_another_change() -> None:
    body = pr_body("x", Requester("maria"), IMPACT, object_marker("delete", "prod", DEPLOYMENT))
    assert not_this_change(body, "delete", "staging", DEPLOYMENT) == (
        "it is for delete Deployment.apps web/frontend in prod"
    )


def test_a_commit_trailer_names_its_change_and_reads_back() -> None:
    identity: Identity = ("apps", "Deployment", "web", "frontend")
    trailer = change_trailer("delete", "prod", identity)
    assert trailer == 'Ichor-Change: delete ["prod","apps","Deployment","web","frontend"]'
    message = (
        f"ichor: delete Deployment web/frontend\n\nDeletes it.\n\nRequested-by: maria\n{trailer}\n"
    )
    assert trailer_change(message) == ("delete", ("prod", identity))
    assert trailer_change("ichor: something\n\nRequested-by: maria\n") is None
    assert trailer_change('Ichor-Change: delete ["prod"]') is None
    assert trailer_change("Ichor-Change: delete [not json") is None
