"""A pull request's head evaluated without posting anything: what ``/approve`` approves.

The same fetch, configuration and gate runs as the check's, so an approval names exactly the
objects the check will ask about.
"""

from __future__ import annotations

import asyncio

from bot.checks.approvals import StrictObjects
from bot.checks.compare import CheckComparison
from bot.checks.pipeline import CheckServices, compare_revisions, entered_in_thread, read_config
from bot.checks.request import CheckRequest


async def evaluate_head(
    request: CheckRequest, services: CheckServices
) -> tuple[CheckComparison, StrictObjects] | None:
    """The comparison and the strict targets' new objects at ``request``'s head; None when
    the base has no ``.ichor.yaml``."""
    credentials = await services.forge.git_credentials(request.repo)
    async with entered_in_thread(services.open_tree(request.repo)) as tree:
        config, request = await asyncio.to_thread(read_config, tree, credentials, request)
        if not config.present:
            return None
        return await asyncio.to_thread(
            compare_revisions, tree, credentials, request, config, services
        )
