"""The change API's job: the queued event becomes the engine's change, every run leaves one
audit record (actor: the token's name), and what cannot be done is an answer, not a crash —
except a forge error worth retrying, which the queue retries."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from bot.changes.plan import CreateChange, ObjectChange
from bot.errors import TransientForgeError
from bot.repos import ForgeKind, RepoRef
from bot.settings import Settings
from bot.state.memory import memory_state
from bot.webhooks import ChangeApiEvent, event_to_dict
from workers.change_api import change_of
from workers.context import WorkerContext, build_context
from workers.jobs import JOBS, run_delivery

DOCUMENT = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}


def event(
    verb: str = "approve", forge: ForgeKind = ForgeKind.GITHUB, **extra: object
) -> ChangeApiEvent:
    values: dict[str, object] = {
        "repo": RepoRef(forge, "acme/gitops"),
        "actor": "ui",
        "requester": "maria",
        "verb": verb,
        "target": "prod",
        "kind": "ConfigMap",
        "namespace": "web",
        "name": "settings",
        "document": None,
        "fields": (("data.mode", "canary"),),
        "reason": "",
        "request": "d" * 64,
        **extra,
    }
    return ChangeApiEvent(**values)  # type: ignore[arg-type]


def context(tmp_path: Path, **settings: object) -> WorkerContext:
    values: dict[str, object] = {"data_dir": tmp_path / "data", **settings}
    return build_context(Settings(**values), memory_state())  # type: ignore[arg-type]


def test_the_table_sends_change_api_events_here() -> None:
    from workers.change_api import change_api_job

    assert JOBS[ChangeApiEvent] is change_api_job


def test_the_event_becomes_the_engines_change() -> None:
    approve = change_of(event())
    assert approve == ObjectChange(
        "approve",
        "web",
        "settings",
        "maria",
        kind="ConfigMap",
        fields=(("data.mode", "canary"),),
        target="prod",
    )
    reject = change_of(event("reject", fields=(), reason="wrong rack", namespace=None))
    assert isinstance(reject, ObjectChange)
    assert (reject.verb, reject.reason, reject.namespace) == ("reject", "wrong rack", None)
    create = change_of(event("create", fields=(), document=orjson.dumps(DOCUMENT).decode()))
    assert create == CreateChange(DOCUMENT, "maria", "prod")


def test_a_forge_that_cannot_push_is_a_refusal_with_an_audit_record(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    (repos / "acme" / "gitops" / ".git").mkdir(parents=True)  # what the local forge serves
    ctx = context(tmp_path, local_repos=repos)
    summary = run_delivery(ctx, "github", "api-1", event_to_dict(event()))
    assert summary["result"] == "refused" and summary["created"] is False
    assert summary["reason"] == "this forge cannot take change pull requests"
    assert summary["request"] == "d" * 64  # the web app tells a reused key by it
    (record,) = ctx.state.audit.recent()
    assert (record.actor, record.verb, record.repo, record.target) == (
        "ui",
        "approve",
        "acme/gitops",
        "prod",
    )
    assert record.object == "ConfigMap web/settings" and record.delivery == "api-1"
    assert record.result == "refused: this forge cannot take change pull requests"


def test_a_forge_that_is_not_configured_is_an_error_answer(tmp_path: Path) -> None:
    ctx = context(tmp_path)  # no ICHOR_GITEA_URL
    summary = run_delivery(ctx, "gitea", "api-2", event_to_dict(event(forge=ForgeKind.GITEA)))
    assert summary["result"] == "error" and "Gitea" in str(summary["reason"])
    (record,) = ctx.state.audit.recent()
    assert record.result.startswith("error: ") and record.forge == "gitea"


def test_a_transient_forge_error_is_raised_for_the_queue_to_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = context(tmp_path)

    def down(forge: str, full_name: str) -> object:
        raise TransientForgeError("GitHub GET /repos/acme/gitops: 502")

    monkeypatch.setattr(ctx, "adapter_for", down)
    with pytest.raises(TransientForgeError):
        run_delivery(ctx, "github", "api-3", event_to_dict(event()))
    (record,) = ctx.state.audit.recent()
    assert record.result == "error: GitHub GET /repos/acme/gitops: 502 (tried again)"
