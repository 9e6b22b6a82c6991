"""``RepositoryLookup.repository``: a repository named only by its full name (the change API),
described by each forge over real HTTP: clone URL, default branch, and on GitHub the App
installation that acts on it. An answer for another repository, or a clone URL that is not
the repository's, is refused: it is what the bot fetches from and pushes to."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.errors import PermanentForgeError
from bot.forges.base import RepositoryLookup
from bot.forges.gitea.adapter import GiteaForge
from bot.forges.github.adapter import GitHubForge
from bot.forges.gitlab.adapter import GitLabForge
from bot.forges.responses import described_repository
from bot.repos import ForgeKind, RepoRef
from tests.fakeforge import FakeGitHub
from tests.fakeforge.gitea import FakeGitea
from tests.fakeforge.gitlab import FakeGitLab


def looked_up(forge: GitHubForge | GitLabForge | GiteaForge, full_name: str) -> RepoRef:
    lookup: RepositoryLookup = forge  # each adapter is one
    assert isinstance(forge, RepositoryLookup)

    def main() -> RepoRef:
        try:
            return lookup.repository(full_name)
        finally:
            forge.close()

    return main()


@pytest.fixture
def github(tmp_path: Path) -> Iterator[FakeGitHub]:
    with FakeGitHub(tmp_path / "git") as fake:
        fake.add_repo("octo/gitops", installation_id=77, default_branch="trunk")
        yield fake
        assert fake.validation_errors == [] and fake.auth_failures == []


def github_forge(fake: FakeGitHub) -> GitHubForge:
    return GitHubForge(
        app_id=fake.app_id,
        private_key_pem=fake.private_key_pem,
        api_url=fake.url,
        web_url=fake.web_url,
    )


def test_github_names_the_installation_and_the_default_branch(github: FakeGitHub) -> None:
    repo = looked_up(github_forge(github), "octo/gitops")
    assert repo.forge is ForgeKind.GITHUB and repo.full_name == "octo/gitops"
    assert repo.installation_id == 77 and repo.default_branch == "trunk"
    assert repo.clone_url == github.clone_url("octo/gitops")
    assert repo.web_url.endswith("/octo/gitops")


def test_github_a_repository_without_the_app_is_a_permanent_error(github: FakeGitHub) -> None:
    with pytest.raises(PermanentForgeError):
        looked_up(github_forge(github), "octo/elsewhere")


def test_gitlab_describes_the_project(tmp_path: Path) -> None:
    with FakeGitLab() as fake:
        fake.add_project("group/sub/gitops", project_id=5, default_branch="main")
        repo = looked_up(GitLabForge(url=fake.url, token=fake.token, timeout=5), "group/sub/gitops")
        assert repo == RepoRef(
            ForgeKind.GITLAB,
            "group/sub/gitops",
            id="5",
            clone_url=f"{fake.url}/group/sub/gitops.git",
            web_url=f"{fake.url}/group/sub/gitops",
            default_branch="main",
        )
        with pytest.raises(PermanentForgeError):
            looked_up(GitLabForge(url=fake.url, token=fake.token, timeout=5), "group/nope")
        assert fake.validation_errors == []


def test_gitea_describes_the_repository(tmp_path: Path) -> None:
    with FakeGitea(tmp_path / "git") as fake:
        fake.add_repo("octo/gitops", default_branch="develop")
        repo = looked_up(GiteaForge(url=fake.url, token=fake.token), "octo/gitops")
        assert repo.forge is ForgeKind.GITEA and repo.default_branch == "develop"
        assert repo.clone_url == fake.clone_url("octo/gitops")
        assert fake.validation_errors == [] and fake.unimplemented == []


ANSWER = {
    "id": 9,
    "full_name": "octo/gitops",
    "clone_url": "https://git.example/octo/gitops.git",
    "html_url": "https://git.example/octo/gitops",
    "default_branch": "main",
}


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"full_name": "octo/other"}, "names 'octo/other'"),
        ({"clone_url": "https://git.example/evil/repo.git"}, "clone URL"),
        ({"clone_url": "git@git.example:octo/gitops.git"}, "clone URL"),
        ({"default_branch": "../main"}, "default branch"),
        ({"default_branch": None}, "no default_branch"),
    ],
)
def test_an_answer_that_is_not_the_repository_is_refused(change: dict[str, Any], why: str) -> None:
    with pytest.raises(PermanentForgeError, match=why):
        described_repository({**ANSWER, **change}, ForgeKind.GITEA, "octo/gitops", "Gitea GET")


def test_the_forges_answer_spells_the_name() -> None:
    repo = described_repository(ANSWER, ForgeKind.GITEA, "Octo/GitOps", "Gitea GET")
    assert repo.full_name == "octo/gitops" and repo.id == "9"
