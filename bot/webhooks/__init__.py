"""Webhook deliveries from GitHub, GitLab and Gitea/Forgejo: verified, parsed, forge-neutral.

The web app calls ``verify_<forge>`` on the raw body, then ``parse_delivery``; the event it
gets travels to a queue job as ``event_to_dict`` and comes back with ``event_from_dict``.
"""

from bot.webhooks.events import (
    ACTIONABLE,
    ApiVerb,
    ChangeAction,
    ChangeApiEvent,
    ChangeRequestEvent,
    CheckRerequestEvent,
    CommentEvent,
    Delivery,
    Event,
    Flavor,
    Ignored,
    InstallationEvent,
    MergeGroupAction,
    MergeGroupEvent,
    PingEvent,
    PushEvent,
    RepositoryAddedEvent,
    RequestedActionEvent,
    delivery_from_dict,
    delivery_to_dict,
    event_from_dict,
    event_to_dict,
    is_actionable,
)
from bot.webhooks.parse import parse_delivery
from bot.webhooks.payload import WebhookError
from bot.webhooks.verify import Verification, verify_gitea, verify_github, verify_gitlab

__all__ = [
    "ACTIONABLE",
    "ApiVerb",
    "ChangeAction",
    "ChangeApiEvent",
    "ChangeRequestEvent",
    "CheckRerequestEvent",
    "CommentEvent",
    "Delivery",
    "Event",
    "Flavor",
    "Ignored",
    "InstallationEvent",
    "MergeGroupAction",
    "MergeGroupEvent",
    "PingEvent",
    "PushEvent",
    "RepositoryAddedEvent",
    "RequestedActionEvent",
    "Verification",
    "WebhookError",
    "delivery_from_dict",
    "delivery_to_dict",
    "event_from_dict",
    "event_to_dict",
    "is_actionable",
    "parse_delivery",
    "verify_gitea",
    "verify_github",
    "verify_gitlab",
]
