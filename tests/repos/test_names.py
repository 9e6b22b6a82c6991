"""Repository and ref names from deliveries, by each forge's own rules."""

from __future__ import annotations

import pytest

from bot.repos.names import (
    clone_url_problem,
    gitea_repository,
    github_repository,
    gitlab_repository,
    ref_problem,
)

TRAVERSALS = [
    "octo/..",
    "octo/.",
    "../gitops",
    "octo/../gitops",
    "octo/gitops/..",
    "octo/gitops/extra",
    "octo",
    "octo/",
    "/gitops",
    "octo/git%2fops",
    "octo/git ops",
    "octo/gitops?x=1",
    "octo/gitops#x",
    "octo\\gitops",
    "octo/gité",
]


@pytest.mark.parametrize("value", TRAVERSALS)
@pytest.mark.parametrize("check", [github_repository, gitea_repository])
def test_owner_name_forges_refuse_what_leaves_the_path(check: object, value: str) -> None:
    assert callable(check)
    assert check(value) is not None


@pytest.mark.parametrize(
    "value", ["octo-org/gitops", "Octo/.github", "octo/a_b.c-d", "u_shortcode/repo", "0/1"]
)
def test_github_accepts_real_names(value: str) -> None:
    assert github_repository(value) is None


@pytest.mark.parametrize("value", ["-octo/gitops", "oc_to./x", "octo/" + "x" * 101])
def test_github_refuses(value: str) -> None:
    assert github_repository(value) is not None


@pytest.mark.parametrize("value", ["my-org/gitops", "_svc/infra.cfg", "o.k/x", "a/b-c_d.e"])
def test_gitea_accepts_real_names(value: str) -> None:
    assert gitea_repository(value) is None


@pytest.mark.parametrize("value", ["org/repo.git", "org/repo.wiki", "org/-", "-org/x", ".o/x"])
def test_gitea_refuses_reserved_names(value: str) -> None:
    assert gitea_repository(value) is not None


@pytest.mark.parametrize(
    "value", ["group/project", "group/sub/deeper/project", "_legacy/x.", "g/" * 19 + "p"]
)
def test_gitlab_accepts_namespaced_paths(value: str) -> None:
    assert gitlab_repository(value) is None


@pytest.mark.parametrize(
    "value",
    [
        *[v for v in TRAVERSALS if v != "octo/gitops/extra"],
        "group/project.git",
        "group/project.atom",
        "group/-project",
        "g/" * 21 + "p",
        "group//project",
    ],
)
def test_gitlab_refuses(value: str) -> None:
    assert gitlab_repository(value) is not None


@pytest.mark.parametrize(
    ("url", "name", "same"),
    [
        ("https://github.com/octo/gitops.git", "octo/gitops", True),
        ("https://github.com/Octo/GitOps", "octo/gitops", True),
        ("https://git.example.com/gitlab/group/sub/project.git", "group/sub/project", True),
        ("https://github.com/octo/other.git", "octo/gitops", False),
        ("https://github.com/evil/gitops.git", "octo/gitops", False),
        ("https://github.com/xocto/gitops.git", "octo/gitops", False),
        ("https://github.com/", "octo/gitops", False),
    ],
)
def test_clone_url_names_the_repository(url: str, name: str, same: bool) -> None:
    assert (clone_url_problem(url, name) is None) is same


@pytest.mark.parametrize(
    "ref",
    [
        "",
        "-x",
        "@",
        "a..b",
        "a/.hidden",
        ".hidden",
        "a.lock",
        "a/b.lock/c",
        "a/",
        "/a",
        "a//b",
        "a.",
        "a b",
        "a~1",
        "a^",
        "a:b",
        "a?",
        "a*",
        "a[",
        "a\\b",
        "a@{1}",
        "a\x7f",
        "x" * 1025,
    ],
)
def test_refs_git_would_refuse(ref: str) -> None:
    assert ref_problem(ref) is not None


@pytest.mark.parametrize(
    "ref", ["main", "refs/heads/feature/x", "release-1.2", "a.b", "user@host", "ünï"]
)
def test_refs_git_accepts(ref: str) -> None:
    assert ref_problem(ref) is None
