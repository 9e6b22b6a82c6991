"""The GitLab change-PR scenario of :mod:`tests.e2e.test_gitlab_changes`: a repository whose
``prod`` target lets ``/approve`` edit ConfigMaps (``approval``), with a CustomResourceDefinition
and one of its objects, a relaxed ``staging`` target, and the members of
:class:`tests.e2e.gitlab_commands.CommandScenario`; one merge request from ``feature``, and
what the bot pushed and answered, with the token searched for everywhere it could leak."""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Mapping
from typing import Any

from tests.e2e.gitlab_commands import CommandScenario
from tests.e2e.harness import WorkerRun

CONFIG = """version: 1
targets:
  - name: prod
    path: clusters/prod
    approval: {kind: ConfigMap, field: data.state, reasonField: data.decision, fields: [data.mode]}
  - {name: staging, path: clusters/staging}
commands:
  min_permission: write
"""
SETTINGS = "clusters/prod/v1/configmaps/web/settings.yaml"
ORIGINAL = """# the web tier's settings
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings  # do not rename
  namespace: web
data:
  mode: prod
  state: pending
"""
CRD = "clusters/prod/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com.yaml"
WIDGETS = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"""
WIDGET = "clusters/prod/example.com/v1/widgets/web/small.yaml"
SMALL = """apiVersion: example.com/v1
kind: Widget
metadata: {name: small, namespace: web}
spec: {size: 1}
"""
BASE = {".ichor.yaml": CONFIG, SETTINGS: ORIGINAL, CRD: WIDGETS, WIDGET: SMALL}
FORK_PROJECT = 9999


class ChangeScenario(CommandScenario):
    """One merge request (``open_mr``) whose comments ask for change merge requests."""

    base_sha = ""

    def open_mr(
        self,
        iid: int,
        files: Mapping[str, str | None] | None = None,
        *,
        fork: bool = False,
        base: Mapping[str, str | None] | None = None,
    ) -> str:
        """The base on ``main`` (:data:`BASE` and ``base``) and merge request ``iid`` of
        ``files`` from ``feature`` (from a fork project when ``fork``), known to the fake; no
        check is run. Its head."""
        self.base_sha = self.base({**BASE, **(base or {})})
        head = self.work.commit(files or {"README.md": "changed\n"})
        self.work.set_ref(f"refs/merge-requests/{iid}/head", head)
        self.work.publish(self.bare)
        self.fake.add_merge_request(
            self.full_name,
            iid,
            head,
            self.base_sha,
            source_project_id=FORK_PROJECT if fork else None,
        )
        self.heads[iid] = head
        return head

    def ask(self, iid: int, body: str, author: str = "maintainer") -> tuple[str, WorkerRun]:
        """``author`` comments ``body``; the bot's one reply to it, and the worker's run."""
        note = self.comment(iid, body, author)
        replies = self.replies(iid, note["id"])
        run = self.runs[-1]
        assert len(replies) == 1, (replies, run.log[-3000:])
        return str(replies[0]["body"]), run

    def work_once(self) -> WorkerRun:
        run = super().work_once()
        for call in self.fake.calls:  # before the next comment resets them
            assert not self._leaks(call.body.decode("utf-8", "replace")), call.summary()
        return run

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self.bare), *args], check=True, capture_output=True, text=True
        ).stdout

    def rev(self, ref: str) -> str:
        return self.git("rev-parse", "--verify", "-q", ref).strip()

    def branches(self) -> list[str]:
        """The bot's branches on the forge."""
        listed = self.git("for-each-ref", "--format=%(refname:short)", "refs/heads/ichor/")
        return listed.split()

    def pushes(self) -> int:
        """Pushes that reached the forge's git (``POST git-receive-pack``)."""
        return len(self.fake.git.posts("git-receive-pack"))

    def change_mrs(self) -> list[dict[str, Any]]:
        """The merge requests the bot opened."""
        return [
            m
            for m in self.fake.merge_requests(self.full_name)
            if m["author"]["username"] == self.fake.bot_username
        ]

    def set_branch(self, branch: str, files: Mapping[str, str | None], parent: str) -> str:
        """Someone else's commit of ``files`` on ``parent``, made ``branch`` on the forge."""
        self.work.checkout("elsewhere", create_from=parent)
        sha = self.work.commit(files, "someone else's commit")
        self.work.checkout("feature")
        self.work.git("branch", "-D", "elsewhere")
        self.work.git("push", "-q", str(self.bare), f"{sha}:refs/heads/{branch}")
        return sha

    def _leaks(self, text: str) -> bool:
        token = self.fake.token
        basic = base64.b64encode(f"oauth2:{token}".encode()).decode()
        return token in text or basic in text

    def finish(self) -> None:
        """Nothing the bot wrote or ran holds the token: the workers' logs, every git argv
        (the harness's shim), every commit and file on the forge, every merge request and note
        (the API requests' bodies are searched as each run ends), the worker's files."""
        super().finish()
        for run in self.runs:
            assert not self._leaks(run.log)
            for argv in run.git_argvs():
                assert not any(self._leaks(arg) for arg in argv), argv
        assert self.runs and self.runs[-1].git_argvs(), "the shim recorded no git command"
        assert not self._leaks(self.git("log", "--all", "-p", "--format=%H%n%an %ae%n%B"))
        token = self.fake.token.encode()
        for path in self.data_dir.rglob("*"):  # the mirror's config, FETCH_HEAD, caches
            assert path.is_dir() or token not in path.read_bytes(), path
        for mr in self.fake.merge_requests(self.full_name):
            assert not self._leaks(f"{mr['title']}\n{mr['description']}")
            assert not any(
                self._leaks(n["body"]) for n in self.fake.notes(self.full_name, mr["iid"])
            )
