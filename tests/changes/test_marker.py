"""Which change a pull request is for: the marker an object's change writes."""

from __future__ import annotations

from bot.changes.body import Impact, Requester, pr_body
from bot.changes.marker import object_marker
from bot.gate.content.identity import Identity

IMPACT = Impact("prod", ("Deployment.apps web/frontend",), ("clusters/prod/frontend.yaml",))
DEPLOYMENT = ("apps", "Deployment", "web", "frontend")


def test_an_object_change_names_its_verb_and_whole_identity_in_its_first_line() -> None:
    marker = object_marker("delete", DEPLOYMENT)
    assert marker == '<!-- ichor:change delete ["apps","Deployment","web","frontend"] -->'
    body = pr_body("x", Requester("maria"), IMPACT, marker)
    assert body.startswith(marker + "\n")


def test_an_identity_that_could_end_the_comment_is_still_one_marker() -> None:
    odd: Identity = ("x", "K", "web", 'a --> <b> & "c" ü \udcff')
    marker = object_marker("approve", odd)
    assert marker.count("-->") == 1 and "<b>" not in marker and marker.isascii()
