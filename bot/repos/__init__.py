"""Repositories as the forges name them: which forge (``ForgeKind``), the one repository type
from the delivery to the job (``RepoRef``), and each forge's rules for repository and ref names
(:mod:`bot.repos.names`).

The ground floor that the webhook parsers, the forge adapters, the stores and the jobs all
share; it imports nothing of the bot's other packages. Pure.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ForgeKind(enum.StrEnum):
    """Which forge: the route a delivery came in on; Forgejo is ``gitea`` (its flavor says
    which)."""

    GITHUB = "github"
    GITLAB = "gitlab"
    GITEA = "gitea"


@dataclass(frozen=True, slots=True)
class RepoRef:
    """A repository, as its delivery names it and every job acts on it (GitLab: the
    ``path_with_namespace``; ``id`` is GitLab's project id, when known)."""

    forge: ForgeKind
    full_name: str
    id: str | None = None
    clone_url: str | None = None  # the forge's HTTP(S) clone URL as sent, never an SSH one
    web_url: str = ""
    default_branch: str | None = None
    installation_id: int | None = None  # the GitHub App installation acting on it

    @property
    def git_url(self) -> str:
        """The URL git fetches from: the clone URL sent, else the web URL's ``.git``."""
        return self.clone_url or self.web_url + ".git"
