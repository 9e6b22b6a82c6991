"""``ichor-bot onboard``: what it refuses before it reaches a forge, and the repository it acts
on."""

from __future__ import annotations

import pytest

from bot.cli.main import main
from bot.cli.onboard import repo_ref
from bot.errors import UsageError
from bot.settings import Settings


def test_github_needs_the_installation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["onboard", "github", "acme/gitops"]) == 2
    assert "--installation" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["onboard"], "name the forge and the repository"),
        (["onboard", "github"], "name the forge and the repository"),
        (["onboard", "svn", "acme/gitops"], "'svn': the forge is one of github, gitlab, gitea"),
        (["onboard", "gitlab", "g/x", "--rev", "HEAD"], "--rev and --forge are for --dry-run"),
    ],
)
def test_without_dry_run_a_forge_and_a_repository_are_named(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    assert said in capsys.readouterr().err


def test_the_repository_is_named_on_the_forge_s_urls() -> None:
    settings = Settings(github_url="https://git.example.com/")
    repo = repo_ref(settings, "github", "acme/gitops", 42, None)
    assert repo.clone_url == "https://git.example.com/acme/gitops.git"
    assert repo.web_url == "https://git.example.com/acme/gitops"
    assert repo.installation_id == 42 and repo.default_branch is None
    gitlab = repo_ref(Settings(), "gitlab", "group/sub/gitops", None, "trunk")
    assert gitlab.clone_url == "https://gitlab.com/group/sub/gitops.git"
    assert gitlab.default_branch == "trunk"


@pytest.mark.parametrize(
    ("forge", "name"), [("github", "../etc"), ("github", "a/b/c"), ("gitea", "owner")]
)
def test_names_are_validated_before_they_reach_a_url(forge: str, name: str) -> None:
    settings = Settings(gitea_url="https://gitea.example.com")
    with pytest.raises(UsageError):
        repo_ref(settings, forge, name, 1, None)


def test_gitea_needs_its_url() -> None:
    with pytest.raises(UsageError, match="ICHOR_GITEA_URL"):
        repo_ref(Settings(), "gitea", "owner/gitops", None, None)
