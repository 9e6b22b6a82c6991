"""The mirror store against a real smart-HTTP server: partial clones, exact fetches, secrets."""

from __future__ import annotations

import base64
import http.client
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from bot.cli.demo import build_repository
from bot.errors import GitStoreError, PermanentForgeError, TransientForgeError
from bot.forges.base import GitCredentials
from bot.git.repository import git_environment
from bot.git.store import GitStore, _scrub, _secrets
from bot.repos import ForgeKind, RepoRef
from tests.conftest import MakeRepo
from tests.support.git_http import GitHttpServer

TOKEN = "ghs_s3cretT0kenValue1234567890abcdef"
BASIC = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
HEADER = f"Authorization: Basic {BASIC}"
FILES = {
    "t/a.yaml": b"a: 1\n",
    "t/b.yaml": b"b: 2\n",
    "t/deep/c.yaml": b"c: 3\n",
    "other/x.txt": b"x\n",
    "other/y.txt": b"y\n",
    "top.txt": b"top\n",
}
GITLINKS = {"t/vendor": "2" * 40}


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    env = {**git_environment(), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], input=input, capture_output=True, env=env, check=True
    )
    return proc.stdout.decode().strip()


@dataclass
class ServedRepo:
    server: GitHttpServer
    store: GitStore
    work: Path
    bare: Path
    main: str
    pr_head: str
    handle: RepoRef
    creds: GitCredentials
    root: Path
    popen_calls: list[tuple[list[str], dict[str, str]]] = field(default_factory=list)

    def mirror_path(self) -> Path:
        return self.root / "mirrors" / "github" / "o%2Fr.git"

    def git_calls(self) -> list[tuple[list[str], dict[str, str]]]:
        return [(a, e) for a, e in self.popen_calls if "http-backend" not in a]


@pytest.fixture
def forge(
    tmp_path: Path, make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ServedRepo]:
    work = make_repo(FILES, gitlinks=GITLINKS, config=None)
    main = git(work, "rev-parse", "HEAD")
    served = tmp_path / "served"
    bare = served / "o" / "r.git"
    bare.parent.mkdir(parents=True)
    git(tmp_path, "clone", "--quiet", "--bare", str(work), str(bare))
    # A fork's pull request: its head lives only under refs/pull/7/head of the base repository.
    changed = {**FILES, "t/a.yaml": b"a: changed\n", "t/new.yaml": b"n\n"}
    pr_head = build_repository(work, changed, gitlinks=GITLINKS)
    git(work, "push", "--quiet", str(bare), "HEAD:refs/pull/7/head")

    calls: list[tuple[list[str], dict[str, str]]] = []
    real_popen = subprocess.Popen

    def recording_popen(args: Any, *a: Any, **kw: Any) -> Any:
        calls.append(([str(x) for x in args], dict(kw.get("env") or {})))
        return real_popen(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", recording_popen)
    with GitHttpServer(served, lambda value: value == f"Basic {BASIC}") as server:
        host = server.url.removeprefix("http://")
        root = tmp_path / "store"
        yield ServedRepo(
            server=server,
            store=GitStore(root, allowed_base_url=server.url, timeout=30),
            work=work,
            bare=bare,
            main=main,
            pr_head=pr_head,
            handle=RepoRef(ForgeKind.GITHUB, "o/r", clone_url=server.clone_url("o/r")),
            creds=GitCredentials(host, HEADER),
            root=root,
            popen_calls=calls,
        )


def missing_objects(mirror: Path, rev: str) -> set[str]:
    """Objects reachable from ``rev`` that are not local, listed without fetching any."""
    out = git(mirror, "rev-list", "--objects", "--missing=print", "--no-object-names", rev)
    return {line[1:] for line in out.split() if line.startswith("?")}


def test_first_fetch_is_partial_and_a_present_commit_needs_no_network(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
        assert mirror.path == forge.mirror_path()
        assert git(mirror.path, "rev-parse", "refs/ichor/heads/main") == forge.main
        blobs = {git(forge.bare, "rev-parse", f"{forge.main}:{p}") for p in FILES}
        assert blobs <= missing_objects(mirror.path, forge.main)  # no blob came
        config = git(mirror.path, "config", "--list", "--local")
        assert "remote.origin.promisor=true" in config
        assert "extensions.partialclone=origin" in config
        assert "remote.origin.fetch" not in config
        assert all(r.authorized for r in forge.server.requests)
        before = len(forge.server.requests)
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main.upper()])
        assert len(forge.server.requests) == before
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
    assert len(forge.server.requests) == before


def test_pull_request_head_comes_from_the_base_repository(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        refs = ["refs/heads/main", "refs/pull/7/head"]
        mirror.fetch(forge.creds, refs, want=[forge.main, forge.pr_head])
        assert git(mirror.path, "rev-parse", "refs/ichor/pull/7/head") == forge.pr_head
        assert mirror.changed_paths(forge.main, forge.pr_head) == ["t/a.yaml", "t/new.yaml"]
        # A force-pushed head replaces the stored one.
        forced = build_repository(forge.work, {"t/a.yaml": b"forced\n"}, message="forced")
        git(forge.work, "push", "--quiet", "--force", str(forge.bare), "HEAD:refs/pull/7/head")
        mirror.fetch(forge.creds, ["refs/pull/7/head"], want=[forced])
        assert git(mirror.path, "rev-parse", "refs/ichor/pull/7/head") == forced
    urls = {r.path.rsplit("/", 1)[0] for r in forge.server.requests}
    assert urls == {"/o/r.git", "/o/r.git/info"}


def test_a_commit_on_no_fetched_ref_is_fetched_by_id(forge: ServedRepo) -> None:
    other = build_repository(forge.work, {"z.txt": b"z\n"}, message="elsewhere")
    git(forge.work, "push", "--quiet", str(forge.bare), "HEAD:refs/heads/elsewhere")
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main, other])
        assert git(mirror.path, "cat-file", "-t", other) == "commit"
        with pytest.raises(GitStoreError, match="f" * 40):
            mirror.fetch(forge.creds, ["refs/heads/main"], want=["f" * 40])
        # A vanished ref still lets the wanted commit be fetched by id.
        mirror.fetch(forge.creds, ["refs/pull/99/head"], want=[forge.pr_head])
        with pytest.raises(PermanentForgeError, match="couldn't find remote ref"):
            mirror.fetch(forge.creds, ["refs/pull/99/head"])


def test_prefetch_fetches_only_missing_blobs_in_one_request(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
        posts = len(forge.server.posts())
        paths = ["t", "top.txt", "no/such/dir", "t/vendor"]  # a gitlink is skipped
        assert mirror.prefetch_blobs(forge.creds, forge.main, paths) == 4
        assert len(forge.server.posts()) == posts + 1
        requests = len(forge.server.requests)
        assert mirror.prefetch_blobs(forge.creds, forge.main, ["t/"]) == 0
        assert len(forge.server.requests) == requests
        # Read locally with every transport forbidden: a lazy fetch would fail.
        blob = git(mirror.path, "rev-parse", f"{forge.main}:t/deep/c.yaml")
        content = git(mirror.path, "-c", "protocol.allow=never", "cat-file", "blob", blob)
        assert content == "c: 3"
        assert len(missing_objects(mirror.path, forge.main)) == 2  # other/x.txt, other/y.txt
        # The whole tree: only what is still missing, again in one request.
        assert mirror.prefetch_blobs(forge.creds, forge.main, [""]) == 2
        assert len(forge.server.posts()) == posts + 2
        requests = len(forge.server.requests)
        with mirror.repository().snapshot(forge.main) as snap:
            assert snap.get("t/deep/c.yaml") is not None
            contents = snap.read_many([e for e in snap if e.kind.value == "file"])
            assert b"x\n" in contents
        assert len(forge.server.requests) == requests


def test_a_complete_prefetch_is_remembered_and_a_new_mirror_forgets_it(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
        assert mirror.prefetch_blobs(forge.creds, forge.main, ["t"]) > 0
        calls = len(forge.git_calls())
        assert mirror.prefetch_blobs(forge.creds, forge.main, ["t"]) == 0
        assert len(forge.git_calls()) == calls  # no git process at all
    # The data dir is wiped while the worker runs: the new mirror is listed again.
    shutil.rmtree(forge.mirror_path())
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
        assert mirror.prefetch_blobs(forge.creds, forge.main, ["t"]) > 0


def test_local_commands_never_fetch_lazily(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
        requests = len(forge.server.requests)
        with pytest.raises(GitStoreError):
            mirror.changed_paths(forge.main, forge.pr_head)  # not fetched yet
        with pytest.raises(GitStoreError, match="fetch it first"):
            mirror.prefetch_blobs(forge.creds, forge.pr_head, [""])
        assert len(forge.server.requests) == requests


def test_the_token_stays_off_argv_and_disk(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main", "refs/pull/7/head"], want=[forge.pr_head])
        mirror.prefetch_blobs(forge.creds, forge.pr_head, [""])
    calls = forge.git_calls()
    assert calls
    for argv, env in calls:
        assert not any(TOKEN in a or BASIC in a for a in argv), argv
        assert "GIT_ASKPASS" not in env and env.get("GIT_TERMINAL_PROMPT") == "0"
    fetches = [env for argv, env in calls if "fetch" in argv]
    assert fetches
    for argv, env in calls:  # commands that read locally never hold the credential
        if "fetch" not in argv:
            assert not any(TOKEN in v or BASIC in v for v in env.values()), argv
    for env in fetches:
        pairs = {
            env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
            for i in range(int(env["GIT_CONFIG_COUNT"]))
        }
        assert pairs[f"http.{forge.server.url}/.extraHeader"] == HEADER
        assert pairs["credential.helper"] == "" and pairs["protocol.version"] == "2"
    for path in forge.root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert TOKEN.encode() not in data and BASIC.encode() not in data, path


def test_a_wrong_token_is_permanent_and_not_echoed(forge: ServedRepo) -> None:
    bad_token = "ghs_wrongwrongwrongwrong"
    bad_basic = base64.b64encode(f"x-access-token:{bad_token}".encode()).decode()
    creds = GitCredentials(forge.creds.host, f"Authorization: Basic {bad_basic}")
    with forge.store.open(forge.handle) as mirror:
        with pytest.raises(PermanentForgeError) as info:
            mirror.fetch(creds, ["refs/heads/main"], want=[forge.main])
        with pytest.raises(PermanentForgeError):
            mirror.fetch(None, ["refs/heads/main"], want=[forge.main])
    assert bad_token not in str(info.value) and bad_basic not in str(info.value)
    assert [r.status for r in forge.server.requests] == [401, 401]


def test_a_server_error_is_transient(forge: ServedRepo) -> None:
    forge.server.fail_next = 1
    with forge.store.open(forge.handle) as mirror:
        with pytest.raises(TransientForgeError, match="500"):
            mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])  # the retry works


def test_a_silent_server_times_out_as_transient(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)  # accepts connections, never answers
        base = f"http://127.0.0.1:{listener.getsockname()[1]}"
        store = GitStore(tmp_path, allowed_base_url=base, timeout=1.0)
        with store.open(RepoRef(ForgeKind.GITHUB, "o/r", clone_url=f"{base}/o/r.git")) as mirror:
            started = time.monotonic()
            with pytest.raises(TransientForgeError, match="timed out"):
                mirror.fetch(None, ["refs/heads/main"])
            assert time.monotonic() - started < 5


REFUSED_URLS = [
    "http://evil.example/o/r.git",
    "http://127.0.0.2:{port}/o/r.git",
    "http://127.0.0.1:1/o/r.git",
    "https://127.0.0.1:{port}/o/r.git",
    "http://x-access-token:t@127.0.0.1:{port}/o/r.git",
    "http://@127.0.0.1:{port}/o/r.git",
    "http://evil.example#@127.0.0.1:{port}/o/r.git",
    "file:///etc/o/r.git",
    "ext::sh -c touch% /tmp/pwned",
    "http://127.0.0.1:{port}/o/r.git?x=1",
    "http://127.0.0.1:{port}/o/r.git#frag",
    "http://127.0.0.1:{port}/../../o/r.git",
    "http://127.0.0.1:{port}/%2e%2e/o/r.git",
    "http://127.0.0.1:{port}/o/r.git\n",
    "http://127.0.0.1:{port}",
    "http://127.0.0.1:{port}/",
]


def test_foreign_clone_urls_are_refused_before_git_runs(forge: ServedRepo) -> None:
    port = forge.server.url.rsplit(":", 1)[1]
    for url in REFUSED_URLS:
        handle = RepoRef(ForgeKind.GITHUB, "o/r", clone_url=url.format(port=port))
        with (
            pytest.raises(PermanentForgeError, match="refusing clone URL"),
            forge.store.open(handle),
        ):
            pass
    assert forge.git_calls() == []
    assert not forge.root.exists()


def test_https_base_refuses_plain_http(tmp_path: Path) -> None:
    store = GitStore(tmp_path, allowed_base_url="https://github.com")
    store.check_clone_url("https://github.com/o/r.git")
    store.check_clone_url("https://GitHub.com:443/o/r")
    with pytest.raises(PermanentForgeError):
        store.check_clone_url("http://github.com/o/r.git")
    store.check_credentials(GitCredentials("github.com", HEADER))
    with pytest.raises(PermanentForgeError):
        store.check_credentials(GitCredentials("gitlab.com", HEADER))


def test_credentials_for_another_host_are_refused_before_git_runs(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        forge.popen_calls.clear()
        with pytest.raises(PermanentForgeError, match="do not belong"):
            mirror.fetch(GitCredentials("evil.example", HEADER), ["refs/heads/main"])
        assert forge.git_calls() == []


def test_repository_names_cannot_escape_the_store(forge: ServedRepo) -> None:
    names = ["../x", "..", "../../etc/passwd", "a/../../b", ".git", "o/..", "o/r/../../.."]
    paths = set()
    for name in names:
        with forge.store.open(
            RepoRef(cast(ForgeKind, "../forge"), name, clone_url=forge.handle.git_url)
        ) as mirror:
            assert mirror.path.resolve().parent.parent == (forge.root / "mirrors").resolve()
            assert not mirror.path.name.startswith(".")
            paths.add(mirror.path)
    assert len(paths) == len(names)  # distinct names, distinct mirrors
    locks = [p for p in forge.root.rglob("*.lock") if p.is_file()]
    assert len(locks) == len(names)
    assert all(p.resolve().parent.parent == (forge.root / "locks").resolve() for p in locks)
    for name in ["", "/abs", "o//r", "o/r/"]:
        handle = RepoRef(ForgeKind.GITHUB, name, clone_url=forge.handle.git_url)
        with pytest.raises(PermanentForgeError), forge.store.open(handle):
            pass


def test_a_renamed_repository_updates_the_origin(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
    (forge.bare.parent / "renamed.git").symlink_to(forge.bare)
    renamed = RepoRef(ForgeKind.GITHUB, "o/r", clone_url=forge.server.clone_url("o/renamed"))
    with forge.store.open(renamed) as mirror:
        assert git(mirror.path, "config", "remote.origin.url") == renamed.clone_url
        mirror.fetch(forge.creds, ["refs/pull/7/head"], want=[forge.pr_head])
    assert forge.server.requests[-1].path.startswith("/o/renamed.git/")


def test_a_mirror_is_unusable_after_its_lock_is_released(forge: ServedRepo) -> None:
    with forge.store.open(forge.handle) as mirror:
        pass
    with pytest.raises(GitStoreError, match="outside"):
        mirror.fetch(forge.creds, ["refs/heads/main"])


def test_concurrent_jobs_on_one_repository_take_turns(forge: ServedRepo) -> None:
    events: list[tuple[str, float]] = []
    inside = threading.Event()

    def first() -> None:
        with forge.store.open(forge.handle) as mirror:
            inside.set()
            mirror.fetch(forge.creds, ["refs/heads/main"], want=[forge.main])
            time.sleep(0.3)
            events.append(("first out", time.monotonic()))

    def second() -> None:
        inside.wait()
        with forge.store.open(forge.handle) as mirror:
            events.append(("second in", time.monotonic()))
            mirror.fetch(forge.creds, ["refs/pull/7/head"], want=[forge.pr_head])

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert [name for name, _ in events] == ["first out", "second in"]
    assert events[1][1] >= events[0][1]


def test_the_server_reads_chunked_bodies(forge: ServedRepo) -> None:
    request = b"0014command=ls-refs\n00010009peel\n0000"
    conn = http.client.HTTPConnection(forge.server.url.removeprefix("http://"), timeout=10)
    chunks = iter([request[:10], request[10:]])
    headers = {
        "Authorization": f"Basic {BASIC}",
        "Content-Type": "application/x-git-upload-pack-request",
        "Git-Protocol": "version=2",
        "Transfer-Encoding": "chunked",
    }
    conn.request(
        "POST", "/o/r.git/git-upload-pack", body=chunks, headers=headers, encode_chunked=True
    )
    response = conn.getresponse()
    body = response.read()
    conn.close()
    assert response.status == 200
    assert forge.main.encode() in body and b"refs/pull/7/head" in body
    assert forge.server.requests[-1].chunked


def test_the_server_passes_gzip_bodies_to_http_backend(forge: ServedRepo, tmp_path: Path) -> None:
    # Protocol v0 gzips a request body over 1 KiB: enough wants for 40 branches.
    lines = "".join(f"create refs/heads/b{i} {forge.main}\n" for i in range(40))
    git(forge.bare, "update-ref", "--stdin", input=lines.encode())
    url = forge.server.clone_url("o/r")
    header = f"http.extraHeader={HEADER}"
    dest = tmp_path / "v0.git"
    git(tmp_path, "-c", header, "-c", "protocol.version=0", "clone", "-q", "--bare", url, str(dest))
    assert git(dest, "rev-parse", "refs/heads/b39") == forge.main
    assert any(r.content_encoding == "gzip" for r in forge.server.posts())


def test_a_gitea_token_in_the_basic_user_name_is_scrubbed_in_every_form() -> None:
    # Gitea's git credential is Basic base64("<token>:x-oauth-basic"): the token is the user.
    token = "d0c5e3a9f1b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9"
    basic = base64.b64encode(f"{token}:x-oauth-basic".encode()).decode()
    secrets = _secrets(GitCredentials("h", f"Authorization: Basic {basic}"))
    empty_password = base64.b64encode(f"{token}:".encode()).decode()
    text = (
        f"fatal: Authentication failed for 'http://{token}@h/o/r.git' / {basic} / "
        f"{empty_password} / {empty_password.rstrip('=')} / {token}:x-oauth-basic"
    )
    scrubbed = _scrub(text, secrets)
    assert token not in scrubbed and basic not in scrubbed
    assert empty_password.rstrip("=") not in scrubbed
    assert "x-oauth-basic" not in secrets  # a fixed half, not a secret


def test_every_form_of_the_secret_is_scrubbed() -> None:
    text = f"{HEADER} / Basic {BASIC} / {TOKEN} / x-access-token:{TOKEN}"
    assert TOKEN not in _scrub(text, _secrets(GitCredentials("h", HEADER)))
    assert BASIC not in _scrub(text, _secrets(GitCredentials("h", HEADER)))
    bearer = _secrets(GitCredentials("h", f"Authorization: Bearer {TOKEN}"))
    scrubbed = _scrub(text, bearer)
    assert TOKEN not in scrubbed and BASIC not in scrubbed
