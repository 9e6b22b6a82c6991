"""The ``local`` forge: repositories on disk, results in files. No network at all.

It is the embedded default of ``make run``: deliveries for a repository found under
``ICHOR_LOCAL_REPOS`` are checked straight from that repository, and what a forge would show
(check results, the summary comment, pull requests) is written under
``<ICHOR_DATA_DIR>/local/``, where the status page and ``ichor-bot results`` read it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bot.errors import PermanentForgeError
from bot.forges.base import (
    CheckHandle,
    CheckOutput,
    ForgeComment,
    GitCredentials,
    LineCommentSync,
    LineFinding,
    Permission,
    PullRequestRef,
    Reaction,
)
from bot.forges.plans import (
    LineComment,
    PostedComment,
    SummaryAction,
    plan_line_comments,
    plan_summary,
    summary_body,
)
from bot.repos import RepoRef

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
RESULTS_FILE = "checks.jsonl"


def repository_path(root: Path, full_name: str) -> Path | None:
    """``root/<owner>/<name>`` (or ``<name>.git``) when it is a repository under ``root``."""
    parts = full_name.split("/")
    if not full_name or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return None
    for candidate in (root.joinpath(*parts), root.joinpath(*parts[:-1], parts[-1] + ".git")):
        resolved = candidate.resolve()
        if resolved.is_relative_to(root.resolve()) and (
            (resolved / ".git").exists() or (resolved / "HEAD").is_file()
        ):
            return resolved
    return None


class LocalForge:
    name = "local"

    def __init__(self, data_dir: Path, *, user: str = "local") -> None:
        self.root = data_dir / "local"
        self.user = user
        self._lock = threading.Lock()

    def _key(self, repo: RepoRef) -> str:
        return _SAFE.sub("_", repo.full_name)

    def _write(self, path: Path, data: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1, sort_keys=True)
        Path(tmp).replace(path)

    def _read(self, path: Path, default: Any) -> Any:
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return default

    def pull_head_ref(self, number: int) -> str:
        return f"refs/pull/{number}/head"  # never fetched: the repository is on disk

    def git_credentials(self, repo: RepoRef) -> GitCredentials | None:
        return None

    def start_check(
        self, repo: RepoRef, head_sha: str, *, external_id: str, resume: bool = False
    ) -> CheckHandle:
        record = {
            "repository": repo.full_name,
            "head_sha": head_sha,
            "external_id": external_id,
            "status": "in_progress",
            "started_at": time.time(),
        }
        with self._lock:
            self._write(self.root / "checks" / self._key(repo) / f"{head_sha}.json", record)
        return CheckHandle(head_sha, id=f"{repo.full_name}@{head_sha}")

    def complete_check(self, repo: RepoRef, check: CheckHandle, output: CheckOutput) -> None:
        path = self.root / "checks" / self._key(repo) / f"{check.head_sha}.json"
        with self._lock:
            record = self._read(path, {"repository": repo.full_name, "head_sha": check.head_sha})
            record.update(
                status="completed",
                completed_at=time.time(),
                conclusion=output.conclusion.value,
                title=output.title,
                summary=output.summary,
                text=output.text,
                annotations=[asdict(a) for a in output.annotations],
            )
            self._write(path, record)
            line = {
                k: record.get(k)
                for k in ("repository", "head_sha", "conclusion", "title", "completed_at")
            }
            with (self.root / RESULTS_FILE).open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, sort_keys=True) + "\n")

    def upsert_summary_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        path = self.root / "comments" / self._key(repo) / f"{number}.md"
        body = summary_body(body)
        with self._lock:
            try:
                shown = [PostedComment(number, path.read_text(encoding="utf-8"), by_bot=True)]
            except OSError:
                shown = []
            if plan_summary(shown, body).action is not SummaryAction.KEEP:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(body, encoding="utf-8")
        return path.resolve().as_uri()

    def sync_line_comments(
        self,
        repo: RepoRef,
        number: int,
        *,
        head_sha: str,
        base_sha: str,
        findings: Sequence[LineFinding],
        limit: int,
    ) -> LineCommentSync:
        """Line comments kept as JSON: ``{fingerprint: {path, line, body, resolved}}``."""
        path = self.root / "line-comments" / self._key(repo) / f"{number}.json"
        with self._lock:
            comments: dict[str, dict[str, Any]] = self._read(path, {})
            plan = plan_line_comments(
                (LineComment(fp, fp, resolved=bool(c["resolved"])) for fp, c in comments.items()),
                findings,
                limit,
            )
            for comment in plan.resolve:
                comments[comment.fingerprint]["resolved"] = True
            for comment in plan.reopen:
                comments[comment.fingerprint]["resolved"] = False
            for finding in plan.post:
                comments[finding.fingerprint] = {
                    "path": finding.path,
                    "line": finding.line,
                    "body": finding.body,
                    "head_sha": head_sha,
                    "resolved": False,
                }
            self._write(path, comments)
        return LineCommentSync(
            posted=len(plan.post),
            resolved=plan.resolved_findings,
            unchanged=plan.unchanged,
            over_limit=len(plan.over_limit),
        )

    def permission(self, repo: RepoRef, user: str) -> Permission:
        # One person drives a local forge: its operator.
        return Permission.ADMIN if user == self.user else Permission.READ

    def bot_login(self, repo: RepoRef) -> str:
        return "ichor-bot"

    def _thread_path(self, repo: RepoRef, number: int) -> Path:
        return self.root / "threads" / self._key(repo) / f"{number}.json"

    def add_reaction(self, repo: RepoRef, number: int, comment_id: str, reaction: Reaction) -> None:
        path = self.root / "reactions" / self._key(repo) / f"{number}.json"
        with self._lock:
            reactions: list[dict[str, str]] = self._read(path, [])
            reactions.append({"comment": comment_id, "reaction": reaction})
            self._write(path, reactions)

    def post_comment(self, repo: RepoRef, number: int, body: str) -> str | None:
        """Replies are kept per pull request, in order; the file is what a forge would show."""
        path = self._thread_path(repo, number)
        with self._lock:
            thread: list[dict[str, Any]] = self._read(path, [])
            comment_id = str(len(thread) + 1)
            thread.append({"id": comment_id, "author": "ichor-bot", "body": body})
            self._write(path, thread)
        return f"{path.resolve().as_uri()}#{comment_id}"

    def list_comments(self, repo: RepoRef, number: int) -> Sequence[ForgeComment]:
        with self._lock:
            thread: list[dict[str, Any]] = self._read(self._thread_path(repo, number), [])
        return [
            ForgeComment(str(c["id"]), str(c["author"]), str(c["body"]), author_is_bot=True)
            for c in thread
        ]

    def get_pull_request(self, repo: RepoRef, number: int) -> PullRequestRef:
        with self._lock:
            pulls: list[dict[str, Any]] = self._read(self._pulls_path(repo), [])
        for pull in pulls:
            if pull["number"] == number:
                return PullRequestRef(number, str(pull["url"]))
        raise PermanentForgeError(f"no pull request {number} in {repo.full_name}")

    def _pulls_path(self, repo: RepoRef) -> Path:
        return self.root / "pulls" / f"{self._key(repo)}.json"

    def find_pull_request(self, repo: RepoRef, head: str, base: str) -> PullRequestRef | None:
        with self._lock:
            pulls: list[dict[str, Any]] = self._read(self._pulls_path(repo), [])
        for pull in pulls:
            if pull["head"] == head and pull["base"] == base and pull["state"] == "open":
                body = pull.get("body")
                return PullRequestRef(
                    int(pull["number"]),
                    str(pull["url"]),
                    body=body if isinstance(body, str) else None,
                )
        return None

    def open_pull_request(
        self, repo: RepoRef, *, head: str, base: str, title: str, body: str
    ) -> PullRequestRef:
        with self._lock:
            path = self._pulls_path(repo)
            pulls: list[dict[str, Any]] = self._read(path, [])
            if any(p["head"] == head and p["base"] == base and p["state"] == "open" for p in pulls):
                raise PermanentForgeError(f"a pull request from {head} into {base} is already open")
            number = len(pulls) + 1
            url = f"local://{repo.full_name}/pulls/{number}"
            pulls.append(
                {
                    "number": number,
                    "url": url,
                    "head": head,
                    "base": base,
                    "title": title,
                    "body": body,
                    "state": "open",
                }
            )
            self._write(path, pulls)
        return PullRequestRef(number, url, body=body)

    def list_pull_requests(
        self, repo: RepoRef, base: str, *, limit: int
    ) -> Sequence[PullRequestRef]:
        with self._lock:
            pulls: list[dict[str, Any]] = self._read(self._pulls_path(repo), [])
        return [
            PullRequestRef(int(p["number"]), str(p["url"]), title=p.get("title"))
            for p in sorted(pulls, key=lambda p: -int(p["number"]))
            if p["base"] == base and p["state"] == "open"
        ][:limit]

    def update_pull_request_body(self, repo: RepoRef, number: int, body: str) -> None:
        with self._lock:
            path = self._pulls_path(repo)
            pulls: list[dict[str, Any]] = self._read(path, [])
            for pull in pulls:
                if pull["number"] == number:
                    pull["body"] = body
                    self._write(path, pulls)
                    return
        raise PermanentForgeError(f"no pull request {number} in {repo.full_name}")

    def close(self) -> None:
        return None


def recent_results(data_dir: Path, limit: int = 50) -> list[dict[str, Any]]:
    """The newest completed local checks first (what ``ichor-bot results`` prints)."""
    try:
        lines = (data_dir / "local" / RESULTS_FILE).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    out = []
    for line in reversed(lines[-limit:]):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def result_for(data_dir: Path, sha: str) -> dict[str, Any] | None:
    """The full local check record of a commit (a unique prefix of its sha will do)."""
    if len(sha) < 4 or not all(c in "0123456789abcdef" for c in sha.lower()):
        return None
    found = sorted((data_dir / "local" / "checks").glob(f"*/{sha.lower()}*.json"))
    if len(found) != 1:
        return None
    data: dict[str, Any] = json.loads(found[0].read_text(encoding="utf-8"))
    return data
