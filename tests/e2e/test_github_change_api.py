"""End to end on GitHub: ``POST /api/v1/changes`` → ``ichor-bot serve`` → Redis → a real
``ichor-bot worker`` → a real ``git push`` (through ``git http-backend``, which requires the
installation token) → a pull request on the fake GitHub, exactly once; the HTTP answer is the
job's. The API names the repository only: the worker asks GitHub for its installation and
default branch."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.web.changes_api import api_delivery_id
from bot.yaml.edit import new_file
from tests.e2e.harness import Bot, WorkerProcess, running_bot
from tests.fakeforge import FakeGitHub
from tests.fakeforge.fixtures import fake_github  # noqa: F401 - the fixture
from tests.support.gitops import configmap
from tests.support.gitrepo import WorkRepo

TOKEN = "e2e-api-token-0123456789abcdef"
CONFIG = """version: 1
targets:
  - name: prod
    path: clusters/prod
    mode: strict
    approval:
      kind: ConfigMap
      field: data.state
      fields: [data.mode]
      newFilePath: clusters/prod/new
  - {name: staging, path: clusters/staging}
"""
DOCUMENT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "settings-2", "namespace": "web"},
    "data": {"mode": "canary", "state": "approved"},
}
NEW_FILE = "clusters/prod/new/settings-2.yaml"
BRANCH = "ichor/create-web-settings-2"  # readable: no other object holds it


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    web = {"ICHOR_API_TOKENS": f"ui={TOKEN}", "ICHOR_API_WAIT_SECONDS": "90"}
    with running_bot(tmp_path_factory.mktemp("bot"), web_env=web) as running:
        yield running


class Repository:
    """A strict repository on the fake GitHub, and a worker that keeps taking jobs."""

    def __init__(self, fake: FakeGitHub, bot: Bot, tmp_path: Path) -> None:
        self.fake, self.bot = fake, bot
        self.full_name = f"e2e-{uuid.uuid4().hex[:8]}/gitops"
        bot.repositories.add(self.full_name)
        fake.add_repo(self.full_name, installation_id=42)
        self.bare = fake.make_bare_repo(self.full_name)
        work = WorkRepo(tmp_path / "work")
        work.commit(
            {
                ".ichor.yaml": CONFIG,
                "clusters/prod/v1/configmaps/web/settings.yaml": configmap("settings"),
                "clusters/staging/v1/configmaps/web/settings.yaml": configmap("settings"),
            },
            "base",
        )
        work.publish(self.bare)
        self.worker: WorkerProcess = bot.start_worker(fake.env(), tmp_path / "worker-data")

    def post(self, body: dict[str, Any], *, token: str = TOKEN) -> httpx.Response:
        key = str(uuid.uuid4())
        self.bot.deliveries.append(f"github-{api_delivery_id('ui', key)}")  # cleaned after
        return httpx.post(
            f"{self.bot.url}/api/v1/changes",
            json=body,
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key},
            timeout=120,
        )

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.bare), *args], check=True, capture_output=True, text=True
        ).stdout

    def pulls(self) -> list[dict[str, Any]]:
        return [p for p in self.fake.pulls(self.full_name) if p["head"]["ref"].startswith("ichor/")]

    def pushes(self) -> int:
        return len(self.fake.git.posts("git-receive-pack"))


@pytest.fixture
def repo(fake_github: FakeGitHub, bot: Bot, tmp_path: Path) -> Iterator[Repository]:  # noqa: F811
    scenario = Repository(fake_github, bot, tmp_path)
    try:
        yield scenario
    finally:
        scenario.worker.kill()


def test_a_create_opens_one_pull_request_adding_the_new_file(repo: Repository) -> None:
    body = {
        "forge": "github",
        "repository": repo.full_name,
        "target": "prod",
        "verb": "create",
        "document": DOCUMENT,
        "requester": "maria",
    }
    first = repo.post(body)
    assert first.status_code == 200, (first.text, repo.worker.log[-3000:])
    answer = first.json()
    (pull,) = repo.pulls()
    assert answer == {"pull_request_url": pull["html_url"], "branch": BRANCH, "created": True}
    assert pull["head"]["ref"] == BRANCH and pull["base"]["ref"] == "main"
    assert pull["title"] == "ichor: create ConfigMap web/settings-2"
    assert "change API by maria (client ui)" in pull["body"]
    assert "**The gate on the result**: accepted" in pull["body"]
    # The pushed commit adds exactly the new file, on the default branch's tip.
    main = repo.git("rev-parse", "main").strip()
    assert repo.git("rev-parse", f"{BRANCH}^").strip() == main
    assert repo.git("diff", "--name-status", main, BRANCH).split() == ["A", NEW_FILE]
    assert repo.git("show", f"{BRANCH}:{NEW_FILE}").encode() == new_file(DOCUMENT)
    message = repo.git("log", "-1", "--format=%an%n%B", BRANCH)
    assert (
        message.startswith("ichor-bot[bot]\n") and "Requested-by: maria (change API: ui)" in message
    )

    # The same request again (a new key: a new job): the same pull request, nothing pushed.
    pushed = repo.pushes()
    again = repo.post(body)
    assert again.status_code == 200, again.text
    assert again.json() == {**answer, "created": False}
    assert repo.pushes() == pushed and len(repo.pulls()) == 1

    # A bad token: 401, and nothing queued or pushed.
    refused = repo.post(body, token="not-the-token-0123456789")
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
    assert repo.pushes() == pushed
    assert repo.fake.validation_errors == [] and repo.fake.auth_failures == []
    assert "ghs_" not in repo.worker.log  # no installation token in what the worker printed


def test_a_refusal_is_409_and_pushes_nothing(repo: Repository) -> None:
    body = {
        "forge": "github",
        "repository": repo.full_name,
        "verb": "approve",
        "object": {"kind": "ConfigMap", "namespace": "web", "name": "settings"},
        "fields": {"data.image": "x"},
    }
    response = repo.post(body)
    assert response.status_code == 409, (response.text, repo.worker.log[-3000:])
    assert "approval.fields" in response.json()["error"]
    assert repo.pushes() == 0 and repo.pulls() == []
