"""A pull request's head evaluated without posting anything: what ``/approve`` approves.

The same fetch, configuration and gate runs as the check's, so an approval names exactly the
objects the check will ask about.
"""

from __future__ import annotations

from bot.checks.approvals import StrictObjects
from bot.checks.compare import CheckComparison
from bot.checks.pipeline import CheckServices, compare_revisions, read_config
from bot.checks.request import CheckRequest


def evaluate_head(
    request: CheckRequest, services: CheckServices
) -> tuple[CheckComparison, StrictObjects] | None:
    """The comparison and the strict targets' new objects at ``request``'s head; None when
    the base has no ``.ichor.yaml``."""
    credentials = services.forge.git_credentials(request.repo)
    with services.open_tree(request.repo) as tree:
        config, request = read_config(tree, credentials, request)
        if not config.present:
            return None
        return compare_revisions(tree, credentials, request, config, services)
