"""A fake Gitea or Forgejo (REST API under ``/api/v1`` + git over smart HTTP, one origin).

Every API request is checked against the recorded Swagger 2.0 description of its flavor
(Gitea 1.27.1 or Forgejo 16.0.1, recorded in ``shared/forge-data/gitea/swagger`` and trimmed
to what the fake serves under ``fixtures/forge-api``) and
answered the way Gitea answers a bad one; each departure is also recorded in
:attr:`FakeGitea.validation_errors`.

Pipeline for one API request (first failure answers):

1. route: method + path (below ``/api/v1``) must be an operation of the description → else 404;
   integer path parameters must be integers → else 404 (both recorded)
2. credentials: ``Authorization: token <t>`` (or ``Bearer <t>``) with the configured token →
   else 401 (``auth_failures``)
3. query parameters (declared ones: type, enum), then the JSON body: schema (``$ref`` into
   ``#/definitions``, required, enum, type, additionalProperties when set), then rules Gitea
   enforces that the schema cannot say (a COMMENT review needs a body or a comment; a review
   comment needs a path and a line) → 422 with Gitea's ``{message, url}`` (recorded)
4. an injected fault that matches (``inject``): its status/headers/body; a fault without a
   status only delays the (already applied) answer
5. the repository must be registered → else 404
6. the operation's handler; one the fake does not serve → 501 (``unimplemented``). 2xx answers
   are checked against the description's response schema with every object closed
   (``additionalProperties: false``), so the fake cannot invent fields the flavor lacks
   (``response_errors``: a bug in the fake).

Forgejo's description gives ``CommitStatusState`` as a plain string whose allowed values are
stated in its description only; the fake enforces those values as an enum (as Gitea's
description does), so a bad ``state`` is a 422 on both flavors.

Git: ``/<owner>/<name>.git/...`` on the same origin is passed to
:class:`tests.support.git_http.GitHttpServer` (``git`` has its ``requests`` and ``fail_next``);
it accepts what Gitea's Basic method accepts for a token: the token as username with an empty
or ``x-oauth-basic`` password, or as password, on every request (a push without it is a 401
before ``git-receive-pack`` runs). ``before_push`` runs a callback before a push reaches git
(a branch that moves after the pusher read it). Git requests are not in :attr:`calls`.

One module per concern, composed here: ``swagger`` (the descriptions), ``state`` (records and
what every concern shares), ``auth`` (credentials and the pipeline's answers), ``repos``
(repositories and permissions), ``statuses``, ``pulls``, ``comments`` (and reactions),
``reviews``, ``teams`` (and their members), ``faults`` (Gitea's own kinds of failure, and the
push hook).
"""

from __future__ import annotations

from tests.fakeforge.gitea.auth import Auth
from tests.fakeforge.gitea.comments import REACTIONS, Comments
from tests.fakeforge.gitea.faults import Faults
from tests.fakeforge.gitea.pulls import Pulls
from tests.fakeforge.gitea.repos import PERMISSIONS, Repositories
from tests.fakeforge.gitea.reviews import Reviews
from tests.fakeforge.gitea.state import API_PREFIX, Call, Ctx, Flavor, Repo, iso
from tests.fakeforge.gitea.statuses import Statuses
from tests.fakeforge.gitea.swagger import API_FIXTURES, DESCRIPTIONS, Swagger2, load
from tests.fakeforge.gitea.teams import Teams

__all__ = [
    "API_FIXTURES",
    "API_PREFIX",
    "DESCRIPTIONS",
    "PERMISSIONS",
    "REACTIONS",
    "Call",
    "Ctx",
    "FakeGitea",
    "Flavor",
    "Repo",
    "Swagger2",
    "iso",
    "load",
]


class FakeGitea(Auth, Faults, Repositories, Statuses, Pulls, Comments, Reviews, Teams):
    """Gitea's (or Forgejo's) REST API and git over HTTP on loopback, for one test.

    >>> with FakeGitea(tmp_path / "git", flavor="forgejo") as fake:        # doctest: +SKIP
    ...     fake.add_repo("octo/gitops")
    ...     env = fake.env()  # ICHOR_GITEA_URL, ICHOR_GITEA_TOKEN
    """
