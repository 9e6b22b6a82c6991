"""The buckets the request seam keeps rate limits under (:meth:`bot.forges.http.seam.Seam.rate`),
named once so the adapters that fill them and the work that reads them agree: on GitHub one per
App installation and one for the App itself (its JWT); on GitLab and Gitea the one token."""

from __future__ import annotations

from bot.repos import ForgeKind, RepoRef

APP_BUCKET = "app"  # GitHub: what the App asks as itself (deliveries, installations)
TOKEN_BUCKET = ""  # GitLab, Gitea: the one token


def installation_bucket(installation_id: int) -> str:
    return f"installation {int(installation_id)}"


def rate_bucket(repo: RepoRef) -> str:
    """Whose rate limit a request about ``repo`` spends."""
    if repo.forge is ForgeKind.GITHUB and repo.installation_id is not None:
        return installation_bucket(repo.installation_id)
    return TOKEN_BUCKET
