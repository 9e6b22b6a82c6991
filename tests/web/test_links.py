"""Links to the forge from the status page: per forge, and never anywhere else."""

from __future__ import annotations

import pytest

from bot.web.links import blob_url, commit_url, pull_url, repository_url

SHA = "ab" * 20
WEB = "https://forge.example/acme/gitops"


@pytest.mark.parametrize(
    ("forge", "expected"),
    [
        ("github", f"{WEB}/blob/{SHA}/clusters/prod/a.yaml#L7"),
        ("gitlab", f"{WEB}/-/blob/{SHA}/clusters/prod/a.yaml#L7"),
        ("gitea", f"{WEB}/src/commit/{SHA}/clusters/prod/a.yaml#L7"),
    ],
)
def test_the_file_and_line_on_each_forge(forge: str, expected: str) -> None:
    assert blob_url(forge, WEB, SHA, "clusters/prod/a.yaml", 7) == expected


def test_a_file_without_a_line_and_odd_names() -> None:
    assert blob_url("github", WEB, SHA, "a b/c#d?.yaml") == f"{WEB}/blob/{SHA}/a%20b/c%23d%3F.yaml"
    assert blob_url("github", WEB, SHA, "x.yaml", 0) == f"{WEB}/blob/{SHA}/x.yaml"
    markup = blob_url("github", WEB, SHA, '<script>/"><img src=x>.txt', 1) or ""
    assert "<" not in markup and '"' not in markup and markup.endswith("#L1")


@pytest.mark.parametrize(
    ("forge", "web", "sha", "path"),
    [
        ("local", WEB, SHA, "a.yaml"),  # the local forge has no pages
        ("github", None, SHA, "a.yaml"),
        ("github", "javascript:alert(1)", SHA, "a.yaml"),
        ("github", "//evil.example/x", SHA, "a.yaml"),
        ("github", WEB, "HEAD", "a.yaml"),  # only a commit id pins the line
        ("github", WEB, SHA, "../../other/repo/a.yaml"),  # never out of the repository
        ("github", WEB, SHA, "a//b.yaml"),
        ("github", WEB, SHA, ""),
        ("github", WEB, SHA, "caf\udce9.yaml"),  # not UTF-8: no URL names it
    ],
)
def test_no_link_rather_than_a_wrong_one(forge: str, web: str | None, sha: str, path: str) -> None:
    assert blob_url(forge, web, sha, path, 3) is None


def test_pull_requests_and_commits_per_forge() -> None:
    assert pull_url("github", WEB, 4) == f"{WEB}/pull/4"
    assert pull_url("gitlab", WEB, 4) == f"{WEB}/-/merge_requests/4"
    assert pull_url("gitea", WEB + "/", 4) == f"{WEB}/pulls/4"
    assert pull_url("github", WEB, None) is None
    assert commit_url("gitlab", WEB, SHA) == f"{WEB}/-/commit/{SHA}"
    assert repository_url('https://h.example/"><x') == "https://h.example/%22%3E%3Cx"
