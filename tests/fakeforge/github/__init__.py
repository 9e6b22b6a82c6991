"""A fake GitHub (REST API + git over smart HTTP) for end-to-end tests.

Every request is checked against GitHub's recorded OpenAPI description (see
:mod:`tests.fakeforge.openapi`) and answered the way GitHub answers a bad one; each departure
is also recorded in :attr:`FakeGitHub.validation_errors` so a test can assert there were none.

Pipeline for one request (first failure answers):

1. route: method + path must be an operation of the description → else 404 (recorded)
2. integer path parameters must be integers → else 404 (recorded)
3. credentials: ``Bearer <app JWT>`` on ``/app…`` and ``/repos/{o}/{r}/installation``, an
   installation token (``token``/``Bearer``) elsewhere → else 401 (in ``auth_failures``)
4. query parameters, JSON body (schema, then documented rules the schema cannot say) → 400/422
   (recorded)
5. an injected fault that matches (status/headers/body/delay) → answered as injected
6. repository registered and covered by the token's installation → else 404; the installation's
   permissions allow the operation → else 403
7. the endpoint's handler; an operation the description has but the fake does not serve → 501
   (in ``unimplemented``). 2xx answers are checked against the description's response schema
   (``response_errors``: a bug in the fake, not in the client).

One module per concern, each a mixin of :class:`tests.fakeforge.github.core.GitHubCore` (the
state, the pipeline's hooks, what many answers embed): ``auth`` (JWTs, installation tokens,
who may call what), ``apps`` (the app's endpoints and the manifest flow), ``repos``,
``pulls``, ``comments`` (and reactions), ``reviews``, ``checks``, ``hooks`` (the app's
webhook deliveries and redeliveries), ``faults``; ``rules`` holds
the documented rules, ``description`` the OpenAPI supplement, ``model`` the records and the
clock, ``keys`` the app's keys. :class:`FakeGitHub` composes them.
"""

from __future__ import annotations

from tests.fakeforge.base import Fault
from tests.fakeforge.github.apps import AppsMixin
from tests.fakeforge.github.auth import AuthMixin
from tests.fakeforge.github.checks import ChecksMixin
from tests.fakeforge.github.comments import CommentsMixin
from tests.fakeforge.github.description import SUPPLEMENT, supplemented
from tests.fakeforge.github.description import handler_name as _handler_name
from tests.fakeforge.github.faults import FaultsMixin
from tests.fakeforge.github.hooks import HooksMixin
from tests.fakeforge.github.keys import new_private_key, shared_private_key
from tests.fakeforge.github.model import (
    DEFAULT_INSTALLATION_PERMISSIONS,
    Call,
    Installation,
    Repo,
    Token,
    iso,
)
from tests.fakeforge.github.model import _now as _now
from tests.fakeforge.github.pulls import PullsMixin
from tests.fakeforge.github.repos import ROLES, ReposMixin
from tests.fakeforge.github.reviews import ReviewsMixin
from tests.fakeforge.github.teams import TeamsMixin

__all__ = [
    "DEFAULT_INSTALLATION_PERMISSIONS",
    "ROLES",
    "SUPPLEMENT",
    "Call",
    "FakeGitHub",
    "Fault",
    "Installation",
    "Repo",
    "Token",
    "_handler_name",
    "iso",
    "new_private_key",
    "shared_private_key",
    "supplemented",
]


class FakeGitHub(
    AppsMixin,
    AuthMixin,
    ReposMixin,
    PullsMixin,
    CommentsMixin,
    ReviewsMixin,
    ChecksMixin,
    HooksMixin,
    TeamsMixin,
    FaultsMixin,
):
    """GitHub's REST API (and git over HTTP) on loopback, for one test.

    >>> with FakeGitHub(tmp_path / "git") as fake:                      # doctest: +SKIP
    ...     fake.add_repo("octo/gitops", installation_id=42)
    ...     env = fake.env()  # ICHOR_GITHUB_API_URL, _APP_ID, _PRIVATE_KEY, _URL
    """
