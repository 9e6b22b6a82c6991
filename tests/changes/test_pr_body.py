"""Change pull requests' titles and bodies: what a reviewer needs, nothing a request can forge."""

from __future__ import annotations

from bot.changes.pr_body import (
    MARKER,
    FieldChange,
    Impact,
    Requester,
    ignore_title,
    object_title,
    pr_body,
)

IMPACT = Impact(
    target="prod",
    objects=("TalosMachine.talos.dev _/node-1",),
    paths=("clusters/prod/machines/node-1.yaml",),
    fields=(FieldChange("spec.approvalState", "pending", "approved"),),
)


def test_titles() -> None:
    assert object_title("approve", "TalosMachine", None, "node-1") == (
        "ichor: approve TalosMachine _/node-1"
    )
    assert object_title("delete", "Deployment", "web", "api") == "ichor: delete Deployment web/api"
    assert ignore_title("/notes.txt", "prod") == "ichor: ignore /notes.txt in prod"
    assert len(object_title("approve", "K", "n", "x" * 500)) == 200
    assert "\n" not in ignore_title("a\nb", "prod")


def test_the_body_names_the_requester_the_link_and_the_impact() -> None:
    body = pr_body(
        "Sets the approval of one object.",
        Requester("maria", "https://github.example/o/r/pull/7#issuecomment-1"),
        IMPACT,
    )
    assert body.startswith(MARKER + "\n")
    assert "[this comment](https://github.example/o/r/pull/7#issuecomment-1)" in body
    assert "approvalState" in body and "pending" in body and "approved" in body
    assert "node-1.yaml" in body
    assert "**The gate on the result**: accepted" in body


def test_an_api_request_names_the_client() -> None:
    body = pr_body("x", Requester("ichor-ui", via_api=True), IMPACT)
    assert "change API by ichor-ui" in body and "this comment" not in body
    named = pr_body("x", Requester("maria", via_api=True, client="ichor-ui"), IMPACT)
    assert "change API by maria (client ichor-ui)." in named


def test_what_a_requester_wrote_cannot_mention_link_or_inject() -> None:
    hostile = Impact(
        target="prod",
        objects=("@everyone [x](https://evil.example) <img src=x>",),
        paths=("a/`b`.yaml",),
        fields=(FieldChange("spec.x", None, "<script>alert(1)</script>"),),
    )
    body = pr_body("x", Requester("@admin", "javascript:alert(1)"), hostile)
    assert "@everyone" not in body and "@admin" not in body
    assert "](https://evil.example)" not in body and "<img" not in body and "<script>" not in body
    assert "javascript:" not in body
    assert "*(none)*" in body  # the field was added
