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
"""

from __future__ import annotations

import base64
import contextlib
import copy
import functools
import hashlib
import itertools
import json
import re
import secrets
import string
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode

import jwt as pyjwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.fakeforge.base import (
    DescribedCall,
    DescribedForge,
    Fault,
    Reject,
    link_header,
    redacted,
    split_auth,
)
from tests.fakeforge.httpserver import Request, Response
from tests.fakeforge.openapi import (
    DESCRIPTION,
    DOCS,
    OpenApi,
    Operation,
    Problem,
    overlay,
    overlay_object,
)

__all__ = ["Call", "FakeGitHub", "Fault", "new_private_key"]

T = TypeVar("T")

ROLES = ("admin", "maintain", "write", "triage", "read", "none")
# The legacy ``permission`` field folds maintain into write and triage into read.
_LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}
DEFAULT_INSTALLATION_PERMISSIONS = {
    "checks": "write",
    "contents": "write",
    "issues": "write",
    "metadata": "read",
    "pull_requests": "write",
}
_JWT_TEMPLATES = frozenset({"/repos/{owner}/{repo}/installation"})
_EITHER_TEMPLATES = frozenset({"/rate_limit"})
# Unauthenticated by design: the code is the credential. The fake refuses a credential here,
# stricter than GitHub, so a token or JWT sent where none belongs is seen.
_NO_AUTH_TEMPLATES = frozenset({"/app-manifests/{code}/conversions"})
_MANIFEST_CODE_TTL = 3600.0  # GitHub: the whole manifest flow within one hour
_MANIFEST_KEYS = frozenset(
    {
        "name", "url", "hook_attributes", "redirect_url", "callback_urls", "setup_url",
        "description", "public", "default_events", "default_permissions",
        "request_oauth_on_install", "setup_on_update",
    }
)  # fmt: skip
_CREATION_PAGE = re.compile(r"/(?:organizations/([A-Za-z0-9-]{1,39})/)?settings/apps/new")
_ZERO_SHA = "0" * 40
_MAX_ANNOTATION_BYTES = 64 * 1024
_MAX_ANNOTATION_TITLE = 255
_SIDES = ("LEFT", "RIGHT")
_LINK_ORDER = ("next", "last", "prev", "first")
# GitHub's answer when a review comment is not on a line of the diff: a review refuses them all
# (``validation_failed_simple``: errors are strings), a single comment says which field.
_NOT_IN_DIFF = (
    "Pull request review thread line must be part of the diff and "
    "Pull request review thread diff hunk can't be blank"
)

# Operations GitHub serves that the recorded (trimmed) description lacks, as GitHub describes
# them (api.github.com, operationId as named), cut to what validation reads. Each is added only
# while the recorded file lacks it; once the file is re-trimmed to include it, delete it here
# (tests/test_fakeforge.py fails until then).
SUPPLEMENT: dict[str, dict[str, Any]] = {
    "/app-manifests/{code}/conversions": {
        "post": {
            "summary": "Create a GitHub App from a manifest",
            "description": "Use this endpoint to complete the handshake necessary when "
            "implementing the GitHub App Manifest flow.",
            "tags": ["apps"],
            "operationId": "apps/create-from-manifest",
            "externalDocs": {
                "description": "API method documentation",
                "url": "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest",
            },
            "parameters": [
                {"name": "code", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "responses": {
                "201": {
                    "description": "Response",
                    "content": {
                        "application/json": {
                            "schema": {
                                "allOf": [
                                    {"$ref": "#/components/schemas/integration"},
                                    {
                                        "type": "object",
                                        "properties": {
                                            "client_id": {"type": "string"},
                                            "client_secret": {"type": "string"},
                                            "webhook_secret": {
                                                "type": "string",
                                                "nullable": True,
                                            },
                                            "pem": {"type": "string"},
                                        },
                                        "required": [
                                            "client_id",
                                            "client_secret",
                                            "webhook_secret",
                                            "pem",
                                        ],
                                        "additionalProperties": True,
                                    },
                                ]
                            }
                        }
                    },
                },
                "404": {"$ref": "#/components/responses/not_found"},
                "422": {"$ref": "#/components/responses/validation_failed_simple"},
            },
            "x-github": {
                "githubCloudOnly": False,
                "enabledForGitHubApps": False,
                "category": "apps",
                "subcategory": "apps",
            },
        }
    },
    "/repos/{owner}/{repo}/pulls/comments/{comment_id}": {
        "patch": {
            "summary": "Update a review comment for a pull request",
            "description": "Edits the content of a specified review comment.",
            "tags": ["pulls"],
            "operationId": "pulls/update-review-comment",
            "externalDocs": {
                "description": "API method documentation",
                "url": "https://docs.github.com/rest/pulls/comments"
                "#update-a-review-comment-for-a-pull-request",
            },
            "parameters": [
                {"$ref": "#/components/parameters/owner"},
                {"$ref": "#/components/parameters/repo"},
                {"$ref": "#/components/parameters/comment-id"},
            ],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                "body": {
                                    "type": "string",
                                    "description": "The text of the reply to the review comment.",
                                }
                            },
                            "required": ["body"],
                        }
                    }
                },
            },
            "responses": {
                "200": {
                    "description": "Response",
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/pull-request-review-comment"}
                        }
                    },
                }
            },
            "x-github": {
                "githubCloudOnly": False,
                "enabledForGitHubApps": True,
                "category": "pulls",
                "subcategory": "comments",
            },
        }
    },
}


class _Supplemented(type(DESCRIPTION)):  # type: ignore[misc]
    """The recorded description's path, read as that file plus :data:`SUPPLEMENT`."""

    def read_text(self, *args: Any, **kwargs: Any) -> str:
        document = json.loads(super().read_text(*args, **kwargs))
        for template, methods in SUPPLEMENT.items():
            item = document["paths"].setdefault(template, {})
            for method, operation in methods.items():
                item.setdefault(method, operation)
        return json.dumps(document)


@functools.cache
def supplemented() -> OpenApi:
    """GitHub's recorded description plus :data:`SUPPLEMENT`: what every fake validates with."""
    return OpenApi(_Supplemented(DESCRIPTION))


def new_private_key() -> str:
    """A fresh RSA key (PKCS#8 PEM), as GitHub hands an app."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@functools.cache
def shared_private_key() -> str:
    """One key per test process: generating costs ~50 ms, and a fake's key is no secret."""
    return new_private_key()


@functools.cache
def _private_key(pem: str) -> Any:
    """Loading a PEM checks the key (~20 ms with OpenSSL 3): once per key and process."""
    return serialization.load_pem_private_key(pem.encode(), password=None)


@functools.cache
def _public_pem(private_pem: str) -> str:
    public = _private_key(private_pem).public_key()
    pem: bytes = public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem.decode()


def _now() -> float:
    return time.time()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _error(message: str, status: int | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"message": message, "documentation_url": DOCS, **extra}
    if status is not None:
        body["status"] = str(status)
    return body


def _not_found() -> Response:
    return Response(404, _error("Not Found", 404))


def _validation_failed(errors: list[dict[str, Any]]) -> Response:
    return Response(422, _error("Validation Failed", 422, errors=errors))


@dataclass
class Call(DescribedCall):
    """One request the fake answered. ``headers`` has Authorization cut to its scheme;
    ``token`` is the credential that was sent (installation token or JWT), for assertions."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    body: bytes
    headers: dict[str, str]
    token: str | None
    auth_scheme: str | None
    status: int = 0
    response: Any = None
    template: str | None = None  # the description's path template, when one matched
    operation_id: str | None = None
    errors: list[str] = field(default_factory=list)
    fault: Fault | None = None
    time: float = 0.0


@dataclass
class Installation:
    id: int
    account: str
    permissions: dict[str, str]


@dataclass
class Repo:
    full_name: str
    id: int
    installation_id: int
    private: bool
    default_branch: str
    roles: dict[str, str] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)  # set_branch() overrides git

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]


@dataclass
class Token:
    value: str
    installation_id: int
    expires_at: float
    permissions: dict[str, str]
    repositories: frozenset[str] | None  # full names; None: every repository of the installation
    revoked: bool = False

    def valid(self, now: float) -> bool:
        return not self.revoked and now < self.expires_at


class FakeGitHub(DescribedForge[Call]):
    """GitHub's REST API (and git over HTTP) on loopback, for one test.

    >>> with FakeGitHub(tmp_path / "git") as fake:                      # doctest: +SKIP
    ...     fake.add_repo("octo/gitops", installation_id=42)
    ...     env = fake.env()  # ICHOR_GITHUB_API_URL, _APP_ID, _PRIVATE_KEY, _URL
    """

    def __init__(
        self,
        git_root: Path | None = None,
        app_id: str | int = "12345",
        *,
        app_slug: str = "ichor-bot",
        private_key_pem: str | None = None,
        token_prefix: str = "ghs_",
        token_length: int = 60,
        token_alphabet: str = string.ascii_letters + string.digits,
        token_factory: Callable[[], str] | None = None,
        token_ttl: float = 3600.0,
        jwt_max_lifetime: int = 600,
        first_id: int = 1,
        check_responses: bool = True,
        description: OpenApi | None = None,
    ) -> None:
        super().__init__(git_root, first_id=first_id)
        self.app_id = str(app_id)
        self.app_slug = app_slug
        self.bot_login = f"{app_slug}[bot]"
        self.private_key_pem = private_key_pem or shared_private_key()
        self.public_key_pem = _public_pem(self.private_key_pem)
        self.token_prefix = token_prefix
        self.token_length = token_length
        self.token_alphabet = token_alphabet
        self.token_factory = token_factory
        self.token_ttl = token_ttl
        self.jwt_max_lifetime = jwt_max_lifetime
        self.check_responses = check_responses
        self.api = description or supplemented()
        self._request_ids = itertools.count(1)

        self._installations: dict[int, Installation] = {}
        self._repos: dict[str, Repo] = {}
        self._tokens: dict[str, Token] = {}
        self._token_order: list[str] = []
        self._tokens_over_http = 0
        self._pulls: dict[str, dict[int, dict[str, Any]]] = {}
        self._issues: dict[str, dict[int, dict[str, Any]]] = {}
        self._comments: dict[int, dict[str, Any]] = {}
        self._reactions: list[dict[str, Any]] = []
        self._reviews: dict[int, dict[str, Any]] = {}
        self._review_comments: dict[int, dict[str, Any]] = {}
        self._diff_lines: dict[tuple[str, int], dict[str, frozenset[int]]] = {}
        self._check_runs: dict[int, dict[str, Any]] = {}
        self._suites: dict[tuple[str, str], int] = {}
        self._rate_used = 0
        # The manifest flow: codes GitHub's creation page handed out, and the Apps made.
        self._manifest_codes: dict[str, dict[str, Any]] = {}
        self._registrations: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ lifecycle
    @property
    def git_url(self) -> str:
        """git's own server (github.com serves git on another host than the API)."""
        return str(self.git.url)

    @property
    def web_url(self) -> str:
        """Base of html_url links: the git server's, as github.com serves both."""
        return self.git_url if self._git is not None else self.url

    def env(self) -> dict[str, str]:
        """The bot's settings pointing at this fake (the API base :attr:`url` has no /api/v3
        prefix; git is on :attr:`git_url`)."""
        values = {
            "ICHOR_GITHUB_API_URL": self.url,
            "ICHOR_GITHUB_APP_ID": self.app_id,
            "ICHOR_GITHUB_PRIVATE_KEY": self.private_key_pem,
        }
        if self._git is not None:
            values["ICHOR_GITHUB_URL"] = self.git_url
        return values

    # ------------------------------------------------------------------ test set-up
    def registrations(self) -> list[dict[str, Any]]:
        """What the creation page was posted (manifest flow): ``path``, ``state``, ``manifest``
        and whether the code was exchanged (``converted``), in order."""
        with self._lock:
            return copy.deepcopy(self._registrations)

    def add_installation(
        self, installation_id: int, account: str, permissions: Mapping[str, str] | None = None
    ) -> None:
        with self._lock:
            perms = dict(DEFAULT_INSTALLATION_PERMISSIONS if permissions is None else permissions)
            inst = self._installations.get(installation_id)
            if inst is None:
                self._installations[installation_id] = Installation(installation_id, account, perms)
            elif permissions is not None:
                inst.permissions = perms

    def add_repo(
        self,
        full_name: str,
        installation_id: int = 42,
        *,
        private: bool = True,
        default_branch: str = "main",
        permissions: Mapping[str, str] | None = None,
    ) -> None:
        """Register a repository (API state only; the test makes the bare repository at
        ``git_root/<owner>/<name>.git``). ``permissions`` are the installation's."""
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"owner/name expected, got {full_name!r}")
        with self._lock:
            self.add_installation(installation_id, owner, permissions)
            self._repos[full_name] = Repo(
                full_name=full_name,
                id=self._stable_id(full_name),
                installation_id=installation_id,
                private=private,
                default_branch=default_branch,
            )
            self._pulls.setdefault(full_name, {})
            self._issues.setdefault(full_name, {})

    def set_permission(self, full_name: str, username: str, role: str) -> None:
        """``role``: admin, maintain, write, triage, read or none. Users never set get
        ``none`` on a private repository and ``read`` on a public one."""
        if role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}")
        with self._lock:
            self._repo(full_name).roles[username] = role

    def set_branch(self, full_name: str, branch: str, sha: str) -> None:
        """A branch head for PR creation when there is no bare repository to read it from."""
        with self._lock:
            self._repo(full_name).branches[branch] = sha

    def branch_sha(self, full_name: str, branch: str) -> str | None:
        """The branch head as the fake sees it (set_branch(), else the bare repository);
        None when unknown."""
        with self._lock:
            return self._branch_sha(full_name, branch) or None

    def add_pull(
        self,
        full_name: str,
        number: int | None = None,
        *,
        head_sha: str,
        base_ref: str = "main",
        head_ref: str = "feature",
        base_sha: str | None = None,
        head_repo: str | None = None,
        state: str = "open",
        title: str = "A change",
        body: str | None = "",
        user: str = "octocat",
        draft: bool = False,
    ) -> dict[str, Any]:
        """Register a pull request; ``head_repo`` names a fork (default: the base repo)."""
        with self._lock:
            self._repo(full_name)
            if number is None:
                number = self._next_number(full_name)
            if number in self._issues[full_name]:
                raise ValueError(f"#{number} is an issue of {full_name}")
            now = iso(_now())
            self._pulls[full_name][number] = {
                "number": number,
                "id": self._next_id("pull"),
                "state": state,
                "title": title,
                "body": body,
                "user": user,
                "draft": draft,
                "head_ref": head_ref,
                "head_sha": head_sha,
                "head_repo": head_repo or full_name,
                "base_ref": base_ref,
                "base_sha": base_sha or self._branch_sha(full_name, base_ref) or _ZERO_SHA,
                "created_at": now,
                "updated_at": now,
                "closed_at": None if state == "open" else now,
            }
            return self._render_pull(full_name, number)

    def update_pull(self, full_name: str, number: int, **changes: Any) -> dict[str, Any]:
        """Change a registered PR (``head_sha=...``, ``state="closed"``, ``base_ref=...``)."""
        with self._lock:
            pr = self._pulls[full_name][number]
            unknown = set(changes) - set(pr)
            if unknown:
                raise TypeError(f"unknown pull fields: {sorted(unknown)}")
            pr.update(changes)
            pr["updated_at"] = iso(_now())
            if "state" in changes:
                pr["closed_at"] = None if changes["state"] == "open" else pr["updated_at"]
            return self._render_pull(full_name, number)

    def add_issue(
        self, full_name: str, number: int | None = None, *, title: str = "An issue"
    ) -> int:
        with self._lock:
            self._repo(full_name)
            if number is None:
                number = self._next_number(full_name)
            self._issues[full_name][number] = {"number": number, "title": title}
            return number

    def add_comment(
        self, full_name: str, issue_number: int, body: str, *, user: str = "alice"
    ) -> dict[str, Any]:
        """A comment by someone else (e.g. a ``/recheck`` command), as if posted on GitHub."""
        with self._lock:
            self._repo(full_name)
            if not self._issue_exists(full_name, issue_number):
                raise KeyError(f"{full_name}#{issue_number} is neither a pull nor an issue")
            return self._render_comment(self._store_comment(full_name, issue_number, body, user))

    def set_diff_lines(
        self, full_name: str, number: int, lines: Mapping[str, Iterable[int]]
    ) -> None:
        """The lines (head side) a review comment on PR ``number`` may be placed on, by path;
        others are refused with GitHub's 422. Until this is called, any line is accepted."""
        with self._lock:
            if number not in self._pulls[full_name]:
                raise KeyError(f"{full_name}#{number} is not a pull request")
            self._diff_lines[(full_name, number)] = {
                path: frozenset(numbers) for path, numbers in lines.items()
            }

    def add_review_comment(
        self,
        full_name: str,
        number: int,
        body: str,
        *,
        path: str,
        line: int,
        user: str = "alice",
        side: str = "RIGHT",
        commit_id: str | None = None,
    ) -> dict[str, Any]:
        """A review comment by someone else, as if written on GitHub (a one-comment review)."""
        with self._lock:
            pr = self._pulls[full_name][number]
            commit = commit_id or pr["head_sha"]
            review = self._store_review(full_name, number, user, "", "COMMENTED", commit)
            spec = {"path": path, "line": line, "side": side, "body": body}
            comment = self._store_review_comment(full_name, number, spec, user, commit, review)
            return self._render_review_comment(comment)

    # ------------------------------------------------------------------ faults
    def inject_secondary_rate_limit(
        self, method: str | None = None, path: str = r".*", *, retry_after: int = 1, times: int = 1
    ) -> Fault:
        """429 with ``Retry-After`` (GitHub's secondary rate limit)."""
        return self.inject(
            method,
            path,
            status=429,
            headers={"retry-after": str(retry_after)},
            body=_error("You have exceeded a secondary rate limit. Please wait a few minutes."),
            times=times,
        )

    def inject_primary_rate_limit(
        self, method: str | None = None, path: str = r".*", *, reset_in: float = 1, times: int = 1
    ) -> Fault:
        """403 with ``x-ratelimit-remaining: 0`` and ``x-ratelimit-reset`` (epoch seconds)."""
        return self.inject(
            method,
            path,
            status=403,
            headers={
                "x-ratelimit-limit": "5000",
                "x-ratelimit-remaining": "0",
                "x-ratelimit-used": "5000",
                "x-ratelimit-reset": str(int(_now() + reset_in + 0.999)),
                "x-ratelimit-resource": "core",
            },
            body=_error("API rate limit exceeded for installation."),
            times=times,
        )

    # ------------------------------------------------------------------ tokens and JWTs
    def make_jwt(
        self,
        *,
        iat: float | None = None,
        exp: float | None = None,
        iss: str | int | None = None,
        key_pem: str | None = None,
        algorithm: str = "RS256",
    ) -> str:
        """An app JWT like gidgethub's (iat 60 s back, 10 min life); override to break it."""
        issued = int(_now()) - 60 if iat is None else int(iat)
        payload = {
            "iat": issued,
            "exp": issued + 600 if exp is None else int(exp),
            "iss": self.app_id if iss is None else iss,
        }
        # JWS level: PyJWT's claim checks would refuse an integer iss, which GitHub takes.
        key = _private_key(key_pem or self.private_key_pem)
        return pyjwt.PyJWS().encode(json.dumps(payload).encode(), key, algorithm=algorithm)

    def issue_token(
        self,
        installation_id: int = 42,
        *,
        ttl: float | None = None,
        repositories: list[str] | None = None,
        permissions: Mapping[str, str] | None = None,
    ) -> str:
        """An installation token without an HTTP round trip (e.g. for a test's own git)."""
        with self._lock:
            inst = self._installations[installation_id]
            return self._mint(
                inst,
                ttl=self.token_ttl if ttl is None else ttl,
                repositories=frozenset(repositories) if repositories is not None else None,
                permissions=dict(permissions or inst.permissions),
            ).value

    def expire_tokens(self) -> None:
        """Every token issued so far expires now (the next use answers 401)."""
        with self._lock:
            now = _now()
            for token in self._tokens.values():
                token.expires_at = min(token.expires_at, now)

    def revoke_token(self, value: str) -> None:
        with self._lock:
            self._tokens[value].revoked = True

    def token_valid(self, value: str) -> bool:
        with self._lock:
            token = self._tokens.get(value)
            return token is not None and token.valid(_now())

    @property
    def tokens(self) -> list[str]:
        """Tokens issued, oldest first."""
        with self._lock:
            return list(self._token_order)

    @property
    def tokens_issued(self) -> int:
        """Tokens issued over the API (``POST …/access_tokens``); issue_token() not counted."""
        with self._lock:
            return self._tokens_over_http

    def basic_auth_header(self, token: str) -> str:
        """``Authorization: Basic ...`` as git sends it for an installation token."""
        raw = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        return f"Authorization: Basic {raw}"

    # ------------------------------------------------------------------ observing
    def check_runs(self, full_name: str) -> list[dict[str, Any]]:
        """Current check runs of a repository, oldest first; ``output.annotations`` holds
        every annotation received (PATCHes append)."""
        with self._lock:
            return [
                self._render_check_run(run, with_annotations=True)
                for run in self._check_runs.values()
                if run["repo"] == full_name
            ]

    def check_run(self, check_run_id: int) -> dict[str, Any]:
        with self._lock:
            return self._render_check_run(self._check_runs[check_run_id], with_annotations=True)

    def comments(self, full_name: str, issue_number: int | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [
                self._render_comment(c)
                for c in self._comments.values()
                if c["repo"] == full_name and issue_number in (None, c["issue_number"])
            ]

    def pulls(self, full_name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [self._render_pull(full_name, n) for n in sorted(self._pulls[full_name])]

    def reviews(self, full_name: str, number: int | None = None) -> list[dict[str, Any]]:
        """Reviews of a repository's pull requests (of PR ``number``), oldest first."""
        with self._lock:
            return [
                self._render_review(r)
                for r in self._reviews.values()
                if r["repo"] == full_name and number in (None, r["pull_number"])
            ]

    def review_comments(self, full_name: str, number: int | None = None) -> list[dict[str, Any]]:
        """Review (line) comments, pending ones included, oldest first."""
        with self._lock:
            return [
                self._render_review_comment(c)
                for c in self._review_comments.values()
                if c["repo"] == full_name and number in (None, c["pull_number"])
            ]

    def reactions(self) -> list[dict[str, Any]]:
        with self._lock:
            return copy.deepcopy(self._reactions)

    # ------------------------------------------------------------------ request pipeline
    def _new_call(self, req: Request) -> Call:
        scheme, token = split_auth(req.headers.get("authorization"))
        return Call(
            method=req.method,
            path=req.path,
            query=dict(req.query),
            json=None,
            body=req.body,
            headers=redacted(req.headers),
            token=token,
            auth_scheme=scheme,
            time=_now(),
        )

    def _context(
        self, req: Request, op: Operation, params: dict[str, str], body: Any, auth: _Auth
    ) -> _Ctx:
        return _Ctx(req=req, op=op, params=params, body=body, repo=None, auth=auth)

    def _handler_name(self, op: Operation) -> str:
        return _handler_name(op)

    def _not_found(self) -> Response:
        return _not_found()

    def _invalid(self, op: Operation, problems: list[Problem]) -> Response:
        return _validation_failed([p.as_github(_resource(op)) for p in problems])

    def _not_json(self, op: Operation) -> Response:
        return Response(400, _error("Problems parsing JSON", 400))

    def _unserved(self, op: Operation) -> Response:
        return Response(501, _error(f"the fake does not serve {op.method} {op.template}"))

    def _fault_body(self, status: int, headers: dict[str, str]) -> Any:
        return _error(
            {
                403: "Forbidden",
                429: "Too Many Requests",
                500: "Server Error",
                502: "Bad Gateway",
                503: "Service Unavailable",
                504: "Gateway Timeout",
            }.get(status, "Injected fault")
        )

    def _default_headers(self) -> dict[str, str]:
        with self._lock:
            self._rate_used += 1
            used = self._rate_used
        return {
            "x-github-request-id": f"FAKE:{next(self._request_ids):08X}",
            "x-github-media-type": "github.v3; format=json",
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": str(max(0, 5000 - used)),
            "x-ratelimit-used": str(used),
            "x-ratelimit-reset": str(int(_now()) + 3600),
            "x-ratelimit-resource": "core",
        }

    # ------------------------------------------------------------------ authentication
    def _authenticate(self, op: Operation, req: Request, call: Call) -> _Auth:
        scheme, credential = call.auth_scheme, call.token
        if op.template in _NO_AUTH_TEMPLATES:
            if credential is not None:
                raise Reject(
                    Response(401, _error("Bad credentials", 401)),
                    "auth_failures",
                    f"{op.template} takes no credentials, got scheme {scheme!r}",
                )
            return _Auth(kind="none", token=None)
        needs_jwt = op.template.startswith("/app") or op.template in _JWT_TEMPLATES
        either = op.template in _EITHER_TEMPLATES

        def fail(message: str, reason: str) -> Reject:
            return Reject(Response(401, _error(message, 401)), "auth_failures", reason)

        if credential is None:
            raise fail("Requires authentication", "no Authorization header")
        if scheme is None or scheme.lower() not in {"bearer", "token"}:
            raise fail("Bad credentials", f"unsupported Authorization scheme {scheme!r}")
        looks_like_jwt = credential.count(".") == 2 and credential.startswith("eyJ")
        if needs_jwt or (either and looks_like_jwt):
            if scheme.lower() != "bearer":
                raise fail(
                    "A JSON web token could not be decoded",
                    f"{op.template} needs 'Bearer <JWT>', got scheme {scheme!r}",
                )
            self._verify_jwt(credential, fail)
            return _Auth(kind="app", token=None)
        token = self._tokens.get(credential)
        if token is None:
            reason = (
                "an app JWT was sent to an installation endpoint"
                if looks_like_jwt
                else "unknown installation token"
            )
            raise fail("Bad credentials", reason)
        if token.revoked:
            raise fail("Bad credentials", "revoked installation token")
        if not token.valid(_now()):
            raise fail("Bad credentials", "expired installation token")
        return _Auth(kind="installation", token=token)

    def _verify_jwt(self, credential: str, fail: Callable[[str, str], Reject]) -> None:
        try:
            header = pyjwt.get_unverified_header(credential)
            # Signature only; the claims are checked below, as GitHub checks them.
            public = _private_key(self.private_key_pem).public_key()
            raw = pyjwt.PyJWS().decode(credential, public, algorithms=["RS256"])
            claims = json.loads(raw)
            if not isinstance(claims, dict):
                raise pyjwt.DecodeError("the payload is not a JSON object")
        except (pyjwt.PyJWTError, ValueError) as exc:
            raise fail("A JSON web token could not be decoded", f"JWT rejected: {exc}") from None
        if header.get("alg") != "RS256":
            raise fail("A JSON web token could not be decoded", "JWT alg is not RS256")
        now = _now()
        iat, exp, iss = claims.get("iat"), claims.get("exp"), claims.get("iss")
        if not isinstance(iat, int) or isinstance(iat, bool):
            raise fail(
                "'Issued at' claim ('iat') must be an Integer representing the time that the "
                "assertion was issued",
                f"JWT iat missing or not an integer: {iat!r}",
            )
        if not isinstance(exp, int) or isinstance(exp, bool):
            raise fail(
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires",
                f"JWT exp missing or not an integer: {exp!r}",
            )
        if iat > now:
            raise fail(
                "'Issued at' claim ('iat') must be an Integer representing the time that the "
                "assertion was issued",
                f"JWT iat {iat} is in the future (now {int(now)})",
            )
        if exp - iat > self.jwt_max_lifetime:
            raise fail(
                "'Expiration time' claim ('exp') is too far in the future",
                f"JWT exp - iat = {exp - iat} s > {self.jwt_max_lifetime} s",
            )
        if exp <= now:
            raise fail(
                "'Expiration time' claim ('exp') must be a numeric value representing the "
                "future time at which the assertion expires",
                f"JWT expired at {exp} (now {int(now)})",
            )
        if iss is None or str(iss) != self.app_id:
            raise fail(
                "A JSON web token could not be decoded",
                f"JWT iss {iss!r} is not the app id {self.app_id!r}",
            )

    def _authorize_repo(self, ctx: _Ctx) -> Repo | None:
        op, params, auth = ctx.op, ctx.params, ctx.auth
        if "owner" not in params or "repo" not in params:
            return None
        full = f"{params['owner']}/{params['repo']}"
        repo = self._repos.get(full)
        if repo is None:
            raise Reject(_not_found())
        if auth.kind == "app":
            return repo
        token = auth.token
        assert token is not None
        covered = token.installation_id == repo.installation_id and (
            token.repositories is None or full in token.repositories
        )
        if not covered:
            if repo.private:
                raise Reject(_not_found())
            raise Reject(Response(403, _error("Resource not accessible by integration", 403)))
        need = _required_permission(op)
        if need is not None:
            options, level = need
            if not any(_allows(token.permissions.get(p), level) for p in options):
                raise Reject(
                    Response(
                        403,
                        _error("Resource not accessible by integration", 403),
                        {
                            "x-accepted-github-permissions": ",".join(
                                f"{p}={level}" for p in options
                            )
                        },
                    )
                )
        return repo

    def _git_authorize(self, header: str | None) -> bool:
        scheme, credential = split_auth(header)
        if scheme is None or credential is None:
            return False
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(credential, validate=True).decode()
            except ValueError:
                return False
            user, sep, secret = decoded.partition(":")
            if not sep or user != "x-access-token":
                return False
            credential = secret
        elif scheme.lower() != "bearer":
            return False
        return self.token_valid(credential)

    # ------------------------------------------------------------------ documented rules
    def _documented_rules(self, op: Operation, body: Any) -> list[Problem]:
        """Rules the description states in prose, which GitHub enforces."""
        if not isinstance(body, dict):
            return []
        if op.operation_id == "pulls/create-review":
            return _review_problems(body)
        if op.operation_id == "pulls/create-review-comment":
            return [] if "in_reply_to" in body else _placement_problems(body, "")
        if op.operation_id not in {"checks/create", "checks/update"}:
            return []
        problems: list[Problem] = []
        if body.get("status") == "completed" and "conclusion" not in body:
            problems.append(
                Problem(
                    "conclusion", "missing_field", "conclusion: required when status is completed"
                )
            )
        if "completed_at" in body and "conclusion" not in body:
            problems.append(
                Problem(
                    "conclusion", "missing_field", "conclusion: required when completed_at is given"
                )
            )
        if body.get("conclusion") == "stale":
            problems.append(
                Problem("conclusion", "invalid", "conclusion: only GitHub can set 'stale'")
            )
        output = body.get("output")
        annotations = output.get("annotations", []) if isinstance(output, dict) else []
        for i, ann in enumerate(annotations):
            where = f"output.annotations.{i}"
            start, end = ann.get("start_line"), ann.get("end_line")
            if start < 1:
                problems.append(
                    Problem(
                        f"{where}.start_line", "invalid", f"{where}.start_line: lines start at 1"
                    )
                )
            if end < start:
                problems.append(
                    Problem(
                        f"{where}.end_line",
                        "invalid",
                        f"{where}.end_line: {end} < start_line {start}",
                    )
                )
            if ("start_column" in ann or "end_column" in ann) and start != end:
                problems.append(
                    Problem(
                        f"{where}.start_column",
                        "invalid",
                        f"{where}: columns are only allowed when start_line == end_line",
                    )
                )
            if len(ann.get("title") or "") > _MAX_ANNOTATION_TITLE:
                problems.append(
                    Problem(f"{where}.title", "invalid", f"{where}.title: over 255 characters")
                )
            for key in ("message", "raw_details"):
                if len((ann.get(key) or "").encode()) > _MAX_ANNOTATION_BYTES:
                    problems.append(
                        Problem(f"{where}.{key}", "invalid", f"{where}.{key}: over 64 KB")
                    )
        return problems

    # ------------------------------------------------------------------ ids, helpers
    @staticmethod
    def _stable_id(name: str) -> int:
        return 10_000_000 + int.from_bytes(hashlib.sha256(name.encode()).digest()[:3], "big")

    def _repo(self, full_name: str) -> Repo:
        try:
            return self._repos[full_name]
        except KeyError:
            raise KeyError(f"{full_name} is not registered: call add_repo() first") from None

    def _next_number(self, full_name: str) -> int:
        used = set(self._pulls[full_name]) | set(self._issues[full_name])
        return max(used, default=0) + 1

    def _issue_exists(self, full_name: str, number: int) -> bool:
        return number in self._pulls.get(full_name, {}) or number in self._issues.get(full_name, {})

    def _mint(
        self,
        inst: Installation,
        *,
        ttl: float,
        repositories: frozenset[str] | None,
        permissions: dict[str, str],
    ) -> Token:
        if self.token_factory is not None:
            value = self.token_factory()
        else:
            tail = "".join(secrets.choice(self.token_alphabet) for _ in range(self.token_length))
            value = self.token_prefix + tail
        # expires_at has whole seconds; the token dies exactly when the client is told.
        expires = float(int(_now() + ttl))
        token = Token(value, inst.id, expires, permissions, repositories)
        self._tokens[value] = token
        self._token_order.append(value)
        return token

    def _branch_sha(self, full_name: str, branch: str) -> str | None:
        """The branch head: set_branch() first, then the bare repository ("" when it has no
        such branch); None: unknown."""
        repo = self._repos.get(full_name)
        if repo is not None and branch in repo.branches:
            return repo.branches[branch]
        return self._rev_parse(full_name, f"refs/heads/{branch}^{{commit}}")

    def _page(self, req: Request, items: list[T]) -> tuple[list[T], dict[str, str]]:
        per_page = max(1, min(100, int(req.query.get("per_page") or 30)))
        chunk, rels = self._page_of(req, items, "per_page", per_page)
        return chunk, ({"link": link_header(rels, _LINK_ORDER)} if rels else {})

    # ------------------------------------------------------------------ rendering
    def _skeleton(self, component: str) -> Any:
        return self.api.skeleton({"$ref": f"#/components/schemas/{component}"})

    def _user(self, login: str) -> dict[str, Any]:
        is_bot = login.endswith("[bot]")
        base = f"{self.url}/users/{quote(login)}"
        return overlay_object(
            self._skeleton("simple-user"),
            {
                "login": login,
                "id": self._stable_id("user:" + login),
                "node_id": "U_" + _b64(login),
                "type": "Bot" if is_bot else "User",
                "url": base,
                "html_url": f"{self.web_url}/{quote(login)}"
                if not is_bot
                else f"{self.web_url}/apps/{self.app_slug}",
                "avatar_url": f"{self.web_url}/avatars/{quote(login)}",
                "gravatar_id": "",
                "site_admin": False,
                "repos_url": f"{base}/repos",
                "followers_url": f"{base}/followers",
                "following_url": f"{base}/following{{/other_user}}",
                "gists_url": f"{base}/gists{{/gist_id}}",
                "starred_url": f"{base}/starred{{/owner}}{{/repo}}",
                "subscriptions_url": f"{base}/subscriptions",
                "organizations_url": f"{base}/orgs",
                "events_url": f"{base}/events{{/privacy}}",
                "received_events_url": f"{base}/received_events",
            },
        )

    def _app(self) -> dict[str, Any]:
        return overlay_object(
            self._skeleton("integration"),
            {
                "id": int(self.app_id) if self.app_id.isdigit() else 1,
                "slug": self.app_slug,
                "node_id": "A_" + _b64(self.app_slug),
                "client_id": "Iv1.fake",
                "owner": self._user("octo"),
                "name": self.app_slug,
                "description": "",
                "external_url": f"{self.web_url}/apps/{self.app_slug}",
                "html_url": f"{self.web_url}/apps/{self.app_slug}",
                "created_at": "2020-01-01T00:00:00Z",
                "updated_at": "2020-01-01T00:00:00Z",
                "permissions": dict(DEFAULT_INSTALLATION_PERMISSIONS),
                "events": ["check_run", "check_suite", "issue_comment", "pull_request", "push"],
            },
        )

    def _repo_object(self, full_name: str, component: str = "repository") -> dict[str, Any]:
        repo = self._repos.get(full_name)
        owner, _, name = full_name.partition("/")
        api = f"{self.url}/repos/{full_name}"
        clone = f"{self.web_url}/{full_name}.git"
        if self._git is not None:
            with contextlib.suppress(Exception):
                clone = self.clone_url(full_name)
        return overlay_object(
            self._skeleton(component),
            {
                "id": repo.id if repo else self._stable_id(full_name),
                "node_id": "R_" + _b64(full_name),
                "name": name,
                "full_name": full_name,
                "owner": self._user(owner),
                "private": repo.private if repo else False,
                "fork": repo is None,
                "html_url": f"{self.web_url}/{full_name}",
                "url": api,
                "clone_url": clone,
                "git_url": clone,
                "ssh_url": f"git@fake.invalid:{full_name}.git",
                "svn_url": f"{self.web_url}/{full_name}",
                "default_branch": repo.default_branch if repo else "main",
                "visibility": "private" if (repo and repo.private) else "public",
                "pulls_url": api + "/pulls{/number}",
                "created_at": "2020-01-01T00:00:00Z",
                "updated_at": "2020-01-01T00:00:00Z",
                "pushed_at": "2020-01-01T00:00:00Z",
            },
        )

    def _render_pull(
        self, full_name: str, number: int, component: str = "pull-request"
    ) -> dict[str, Any]:
        pr = self._pulls[full_name][number]
        api = f"{self.url}/repos/{full_name}"
        head_owner = pr["head_repo"].split("/", 1)[0]

        def side(ref: str, sha: str, repo_full: str) -> dict[str, Any]:
            owner = repo_full.split("/", 1)[0]
            return {
                "label": f"{owner}:{ref}",
                "ref": ref,
                "sha": sha,
                "user": self._user(owner),
                "repo": self._repo_object(repo_full),
            }

        values = {
            "url": f"{api}/pulls/{number}",
            "id": pr["id"],
            "node_id": "PR_" + _b64(f"{full_name}#{number}"),
            "html_url": f"{self.web_url}/{full_name}/pull/{number}",
            "diff_url": f"{self.web_url}/{full_name}/pull/{number}.diff",
            "patch_url": f"{self.web_url}/{full_name}/pull/{number}.patch",
            "issue_url": f"{api}/issues/{number}",
            "commits_url": f"{api}/pulls/{number}/commits",
            "review_comments_url": f"{api}/pulls/{number}/comments",
            "review_comment_url": f"{api}/pulls/comments{{/number}}",
            "comments_url": f"{api}/issues/{number}/comments",
            "statuses_url": f"{api}/statuses/{pr['head_sha']}",
            "number": number,
            "state": pr["state"],
            "locked": False,
            "title": pr["title"],
            "body": pr["body"],
            "user": self._user(pr["user"]),
            "created_at": pr["created_at"],
            "updated_at": pr["updated_at"],
            "closed_at": pr["closed_at"],
            "head": side(pr["head_ref"], pr["head_sha"], pr["head_repo"]),
            "base": side(pr["base_ref"], pr["base_sha"], full_name),
            "draft": pr["draft"],
            "author_association": "CONTRIBUTOR"
            if head_owner != full_name.split("/")[0]
            else "MEMBER",
        }
        if component == "pull-request":
            values.update(
                {
                    "merged": False,
                    "mergeable": None,
                    "mergeable_state": "unknown",
                    "maintainer_can_modify": False,
                }
            )
        return overlay_object(self._skeleton(component), values)

    def _store_comment(self, full_name: str, number: int, body: str, user: str) -> dict[str, Any]:
        now = iso(_now())
        cid = self._next_id("comment")
        comment = {
            "id": cid,
            "repo": full_name,
            "issue_number": number,
            "body": body,
            "user": user,
            "created_at": now,
            "updated_at": now,
        }
        self._comments[cid] = comment
        return comment

    def _render_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        full, number, cid = c["repo"], c["issue_number"], c["id"]
        kind = "pull" if number in self._pulls.get(full, {}) else "issues"
        is_bot = c["user"] == self.bot_login
        association = self._association(full, c["user"])
        return overlay_object(
            self._skeleton("issue-comment"),
            {
                "id": cid,
                "node_id": "IC_" + _b64(str(cid)),
                "url": f"{self.url}/repos/{full}/issues/comments/{cid}",
                "html_url": f"{self.web_url}/{full}/{kind}/{number}#issuecomment-{cid}",
                "issue_url": f"{self.url}/repos/{full}/issues/{number}",
                "body": c["body"],
                "user": self._user(c["user"]),
                "created_at": c["created_at"],
                "updated_at": c["updated_at"],
                "author_association": association,
                "performed_via_github_app": self._app() if is_bot else None,
            },
        )

    def _association(self, full_name: str, user: str) -> str:
        role = self._repos[full_name].roles.get(user) if full_name in self._repos else None
        return {"admin": "OWNER", "maintain": "MEMBER", "write": "COLLABORATOR"}.get(
            role or "", "NONE"
        )

    def _store_review(
        self, full_name: str, number: int, user: str, body: str, state: str, commit_id: str
    ) -> dict[str, Any]:
        review: dict[str, Any] = {
            "id": self._next_id("review"),
            "repo": full_name,
            "pull_number": number,
            "user": user,
            "body": body,
            "state": state,
            "commit_id": commit_id,
            "submitted_at": None if state == "PENDING" else iso(_now()),
        }
        self._reviews[review["id"]] = review
        return review

    def _store_review_comment(
        self,
        full_name: str,
        number: int,
        spec: Mapping[str, Any],
        user: str,
        commit_id: str,
        review: Mapping[str, Any],
        in_reply_to: int | None = None,
    ) -> dict[str, Any]:
        """``spec``: a review comment as a request gives it (path, body, line, side, ...)."""
        now = iso(_now())
        placed = spec.get("line") is not None
        comment = {
            "id": self._next_id("review_comment"),
            "repo": full_name,
            "pull_number": number,
            "review_id": review["id"],
            "user": user,
            "body": spec["body"],
            "path": spec["path"],
            "line": spec.get("line"),
            "side": spec.get("side", "RIGHT") if placed else None,
            "start_line": spec.get("start_line"),
            "start_side": spec.get("start_side", spec.get("side", "RIGHT"))
            if spec.get("start_line") is not None
            else None,
            "position": spec.get("position"),
            "subject_type": spec.get("subject_type", "line"),
            "commit_id": commit_id,
            "in_reply_to_id": in_reply_to,
            "created_at": now,
            "updated_at": now,
        }
        self._review_comments[comment["id"]] = comment
        return comment

    def _render_review_comment(self, c: dict[str, Any]) -> dict[str, Any]:
        full, number, cid = c["repo"], c["pull_number"], c["id"]
        api = f"{self.url}/repos/{full}"
        url, html = f"{api}/pulls/comments/{cid}", f"{self.web_url}/{full}/pull/{number}"
        html += f"#discussion_r{cid}"
        line = c["line"] or c["position"] or 1
        values: dict[str, Any] = {
            "url": url,
            "pull_request_review_id": c["review_id"],
            "id": cid,
            "node_id": "PRRC_" + _b64(str(cid)),
            "diff_hunk": f"@@ -{line},1 +{line},1 @@",  # not derived from the diff
            "path": c["path"],
            "commit_id": c["commit_id"],
            "original_commit_id": c["commit_id"],
            "user": self._user(c["user"]),
            "body": c["body"],
            "created_at": c["created_at"],
            "updated_at": c["updated_at"],
            "html_url": html,
            "pull_request_url": f"{api}/pulls/{number}",
            "author_association": self._association(full, c["user"]),
            "_links": {
                "self": {"href": url},
                "html": {"href": html},
                "pull_request": {"href": f"{api}/pulls/{number}"},
            },
            "start_line": c["start_line"],
            "original_start_line": c["start_line"],
            "start_side": c["start_side"],
            "subject_type": c["subject_type"],
        }
        optional = {
            "line": c["line"],
            "original_line": c["line"],
            "side": c["side"],
            "position": c["position"],
            "original_position": c["position"],
            "in_reply_to_id": c["in_reply_to_id"],
        }
        values |= {k: v for k, v in optional.items() if v is not None}
        return overlay_object(self._skeleton("pull-request-review-comment"), values)

    def _render_review(self, r: dict[str, Any]) -> dict[str, Any]:
        full, number = r["repo"], r["pull_number"]
        html = f"{self.web_url}/{full}/pull/{number}#pullrequestreview-{r['id']}"
        pull_url = f"{self.url}/repos/{full}/pulls/{number}"
        values: dict[str, Any] = {
            "id": r["id"],
            "node_id": "PRR_" + _b64(str(r["id"])),
            "user": self._user(r["user"]),
            "body": r["body"],
            "state": r["state"],
            "html_url": html,
            "pull_request_url": pull_url,
            "_links": {"html": {"href": html}, "pull_request": {"href": pull_url}},
            "commit_id": r["commit_id"],
            "author_association": self._association(full, r["user"]),
        }
        if r["submitted_at"] is not None:
            values["submitted_at"] = r["submitted_at"]
        return overlay_object(self._skeleton("pull-request-review"), values)

    def _render_check_run(
        self, run: dict[str, Any], *, with_annotations: bool = False
    ) -> dict[str, Any]:
        full = run["repo"]
        api = f"{self.url}/repos/{full}/check-runs/{run['id']}"
        out = overlay_object(
            self._skeleton("check-run"),
            {
                "id": run["id"],
                "node_id": "CR_" + _b64(str(run["id"])),
                "head_sha": run["head_sha"],
                "name": run["name"],
                "external_id": run["external_id"],
                "url": api,
                "html_url": f"{self.web_url}/{full}/runs/{run['id']}",
                "details_url": run["details_url"],
                "status": run["status"],
                "conclusion": run["conclusion"],
                "started_at": run["started_at"],
                "completed_at": run["completed_at"],
                "output": {
                    "title": run["output"].get("title"),
                    "summary": run["output"].get("summary"),
                    "text": run["output"].get("text"),
                    "annotations_count": len(run["annotations"]),
                    "annotations_url": f"{api}/annotations",
                },
                "check_suite": {"id": run["check_suite_id"]},
                "app": self._app(),
                "pull_requests": [
                    self._minimal_pull(full, n)
                    for n, pr in sorted(self._pulls.get(full, {}).items())
                    if pr["head_sha"] == run["head_sha"] and pr["state"] == "open"
                ],
            },
        )
        if with_annotations:
            out["output"]["annotations"] = copy.deepcopy(run["annotations"])
            out["output"]["images"] = copy.deepcopy(run["output"].get("images", []))
            out["actions"] = copy.deepcopy(run["actions"])
        return out

    def _minimal_pull(self, full_name: str, number: int) -> dict[str, Any]:
        pr = self._pulls[full_name][number]

        def side(ref: str, sha: str, repo_full: str) -> dict[str, Any]:
            return {
                "ref": ref,
                "sha": sha,
                "repo": {
                    "id": self._repos[repo_full].id
                    if repo_full in self._repos
                    else self._stable_id(repo_full),
                    "url": f"{self.url}/repos/{repo_full}",
                    "name": repo_full.split("/", 1)[1],
                },
            }

        return {
            "id": pr["id"],
            "number": number,
            "url": f"{self.url}/repos/{full_name}/pulls/{number}",
            "head": side(pr["head_ref"], pr["head_sha"], pr["head_repo"]),
            "base": side(pr["base_ref"], pr["base_sha"], full_name),
        }

    # ------------------------------------------------------------------ manifest flow (web)
    def _pass_through(self, req: Request) -> Response | None:
        """GitHub's app-creation page, which takes a posted manifest (served on the API's
        origin, as Enterprise Server serves web and API on one host). The person's "Create"
        click is implied: the answer is the redirect GitHub sends once the App exists."""
        page = _CREATION_PAGE.fullmatch(req.path)
        if page is None or req.method != "POST":
            return None
        form = dict(parse_qsl(req.body.decode("utf-8", "replace"), keep_blank_values=True))
        try:
            manifest = json.loads(form.get("manifest", ""))
        except ValueError:
            manifest = None
        problems = _manifest_problems(manifest)
        with self._lock:
            if problems:
                self._validation_errors.append(f"POST {req.path}: " + "; ".join(problems))
                return Response(422, "Invalid manifest: " + "; ".join(problems))
            code = secrets.token_hex(10)
            self._manifest_codes[code] = {
                "manifest": manifest,
                "org": page.group(1),
                "at": _now(),
                "used": False,
            }
            self._registrations.append(
                {
                    "path": req.path,
                    "state": req.query.get("state"),
                    "manifest": manifest,
                    "code": code,
                    "converted": False,
                }
            )
        query = {"code": code}
        if "state" in req.query:
            query["state"] = req.query["state"]
        location = f"{manifest['redirect_url']}?{urlencode(query)}"
        return Response(302, b"", {"location": location})

    def _op_apps_create_from_manifest(self, ctx: _Ctx) -> Response:
        code = ctx.params["code"]
        entry = self._manifest_codes.get(code)
        if entry is None or entry["used"] or _now() - entry["at"] > _MANIFEST_CODE_TTL:
            return _not_found()
        entry["used"] = True
        for registration in self._registrations:
            if registration["code"] == code:
                registration["converted"] = True
        manifest = entry["manifest"]
        app_id = self._next_id("app")
        slug = re.sub(r"[^a-z0-9]+", "-", str(manifest.get("name") or "app").lower()).strip("-")
        owner = entry["org"] or "octo"
        answer = overlay(
            self._app(),
            {
                "id": app_id,
                "slug": slug,
                "node_id": "A_" + _b64(slug),
                "client_id": f"Iv1.{secrets.token_hex(8)}",
                "owner": self._user(owner),
                "name": manifest.get("name") or slug,
                "description": manifest.get("description"),
                "external_url": manifest["url"],
                "html_url": f"{self.web_url}/apps/{slug}",
                "permissions": dict(manifest.get("default_permissions") or {}),
                "events": list(manifest.get("default_events") or []),
            },
        )
        answer.update(
            client_secret=secrets.token_hex(20),
            webhook_secret=secrets.token_hex(20),
            pem=shared_private_key(),
        )
        return Response(201, answer)

    # ------------------------------------------------------------------ endpoints
    def _op_apps_get_authenticated(self, ctx: _Ctx) -> Response:
        return Response(200, self._app())

    def _op_apps_create_installation_access_token(self, ctx: _Ctx) -> Response:
        inst = self._installations.get(int(ctx.params["installation_id"]))
        if inst is None:
            return _not_found()
        body = ctx.body or {}
        permissions = dict(inst.permissions)
        if "permissions" in body:
            wanted = body["permissions"]
            if not all(_allows(inst.permissions.get(k), v) for k, v in wanted.items()):
                return Response(
                    422,
                    _error("The permissions requested are not granted to this installation.", 422),
                )
            permissions = dict(wanted)
        repositories: frozenset[str] | None = None
        if "repositories" in body or "repository_ids" in body:
            names = {
                f"{inst.account}/{n}" if "/" not in n else n for n in body.get("repositories", [])
            }
            ids = set(body.get("repository_ids", []))
            mine = {r.full_name: r for r in self._repos.values() if r.installation_id == inst.id}
            chosen = {n for n in names if n in mine} | {n for n, r in mine.items() if r.id in ids}
            if len(chosen) < len(names) + len(ids):
                return Response(
                    422,
                    _error(
                        "There is at least one repository that does not exist or is not "
                        "accessible to the parent installation.",
                        422,
                    ),
                )
            repositories = frozenset(chosen)
        token = self._mint(
            inst, ttl=self.token_ttl, repositories=repositories, permissions=permissions
        )
        self._tokens_over_http += 1
        answer: dict[str, Any] = {
            "token": token.value,
            "expires_at": iso(token.expires_at),
            "permissions": permissions,
            "repository_selection": "all" if repositories is None else "selected",
        }
        if repositories is not None:
            answer["repositories"] = [self._repo_object(n) for n in sorted(repositories)]
        return Response(201, answer)

    def _op_apps_get_repo_installation(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        inst = self._installations[ctx.repo.installation_id]
        return Response(
            200,
            overlay(
                self._skeleton("installation"),
                {
                    "id": inst.id,
                    "account": self._user(inst.account),
                    "repository_selection": "all",
                    "access_tokens_url": f"{self.url}/app/installations/{inst.id}/access_tokens",
                    "repositories_url": f"{self.url}/installation/repositories",
                    "html_url": f"{self.web_url}/settings/installations/{inst.id}",
                    "app_id": int(self.app_id) if self.app_id.isdigit() else 1,
                    "target_id": self._stable_id("user:" + inst.account),
                    "target_type": "Organization",
                    "permissions": dict(inst.permissions),
                    "events": ["check_run", "issue_comment", "pull_request", "push"],
                    "created_at": "2020-01-01T00:00:00Z",
                    "updated_at": "2020-01-01T00:00:00Z",
                    "app_slug": self.app_slug,
                },
            ),
        )

    def _op_rate_limit_get(self, ctx: _Ctx) -> Response:
        reset = int(_now()) + 3600
        bucket = {
            "limit": 5000,
            "used": self._rate_used,
            "remaining": max(0, 5000 - self._rate_used),
            "reset": reset,
        }
        body = overlay(
            self._skeleton("rate-limit-overview"), {"resources": {"core": bucket}, "rate": bucket}
        )
        return Response(200, body)

    def _op_repos_get(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        return Response(200, self._repo_object(ctx.repo.full_name, "full-repository"))

    def _op_checks_create(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        body = ctx.body
        full = ctx.repo.full_name
        exists = self._has_commit(full, body["head_sha"])
        if exists is False:
            message = f"No commit found for SHA: {body['head_sha']}"
            self._validation_errors.append(f"POST {ctx.req.path}: {message}")
            return Response(422, _error(message, 422))
        now = iso(_now())
        suite = self._suites.setdefault((full, body["head_sha"]), self._next_id("suite"))
        run: dict[str, Any] = {
            "id": self._next_id("check_run"),
            "repo": full,
            "head_sha": body["head_sha"],
            "name": body["name"],
            "external_id": body.get("external_id", ""),
            "details_url": body.get("details_url", f"{self.web_url}/apps/{self.app_slug}"),
            "status": body.get("status", "queued"),
            "conclusion": None,
            "started_at": body.get("started_at", now),
            "completed_at": None,
            "output": {},
            "annotations": [],
            "actions": [],
            "check_suite_id": suite,
        }
        self._apply_check_run(run, body)
        self._check_runs[run["id"]] = run
        return Response(201, self._render_check_run(run))

    def _apply_check_run(self, run: dict[str, Any], body: Mapping[str, Any]) -> None:
        for key in ("name", "details_url", "external_id", "started_at", "status"):
            if key in body:
                run[key] = body[key]
        if "conclusion" in body:
            run["conclusion"] = body["conclusion"]
            run["status"] = "completed"
            run["completed_at"] = body.get("completed_at", iso(_now()))
        elif run["status"] != "completed":
            run["conclusion"] = run["completed_at"] = None
        if "actions" in body:
            run["actions"] = copy.deepcopy(body["actions"])
        if "output" in body:
            out = body["output"]
            for key in ("title", "summary", "text"):
                if key in out:
                    run["output"][key] = out[key]
            if "images" in out:
                run["output"]["images"] = copy.deepcopy(out["images"])
            blob = f"{self.web_url}/{run['repo']}/blob/{run['head_sha']}/"
            for ann in out.get("annotations", []):
                stored = {
                    "path": ann["path"],
                    "blob_href": blob + quote(ann["path"]),
                    "start_line": ann["start_line"],
                    "end_line": ann["end_line"],
                    "start_column": ann.get("start_column"),
                    "end_column": ann.get("end_column"),
                    "annotation_level": ann["annotation_level"],
                    "title": ann.get("title"),
                    "message": ann["message"],
                    "raw_details": ann.get("raw_details"),
                }
                run["annotations"].append(stored)

    def _existing_run(self, ctx: _Ctx) -> dict[str, Any] | None:
        assert ctx.repo is not None
        run = self._check_runs.get(int(ctx.params["check_run_id"]))
        return run if run is not None and run["repo"] == ctx.repo.full_name else None

    def _op_checks_get(self, ctx: _Ctx) -> Response:
        run = self._existing_run(ctx)
        return _not_found() if run is None else Response(200, self._render_check_run(run))

    def _op_checks_update(self, ctx: _Ctx) -> Response:
        run = self._existing_run(ctx)
        if run is None:
            return _not_found()
        self._apply_check_run(run, ctx.body or {})
        return Response(200, self._render_check_run(run))

    def _op_checks_list_annotations(self, ctx: _Ctx) -> Response:
        run = self._existing_run(ctx)
        if run is None:
            return _not_found()
        items, headers = self._page(ctx.req, copy.deepcopy(run["annotations"]))
        return Response(200, items, headers)

    def _op_checks_list_for_ref(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, ref, q = ctx.repo.full_name, ctx.params["ref"], ctx.req.query
        sha = (
            ref
            if re.fullmatch(r"[0-9a-f]{40}", ref)
            else self._branch_sha(full, ref.removeprefix("heads/"))
        )
        runs = [
            r
            for r in self._check_runs.values()
            if r["repo"] == full
            and r["head_sha"] == sha
            and q.get("check_name", r["name"]) == r["name"]
            and q.get("status", r["status"]) == r["status"]
        ]
        runs.sort(key=lambda r: -r["id"])
        if q.get("filter", "latest") == "latest":
            latest: dict[str, dict[str, Any]] = {}
            for r in runs:
                latest.setdefault(r["name"], r)
            runs = list(latest.values())
        items, headers = self._page(ctx.req, runs)
        return Response(
            200,
            {"total_count": len(runs), "check_runs": [self._render_check_run(r) for r in items]},
            headers,
        )

    def _op_issues_list_comments(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, number = ctx.repo.full_name, int(ctx.params["issue_number"])
        if not self._issue_exists(full, number):
            return _not_found()
        since = ctx.req.query.get("since")
        found = [
            c
            for c in self._comments.values()
            if c["repo"] == full
            and c["issue_number"] == number
            and (since is None or c["updated_at"] >= since)
        ]
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_comment(c) for c in items], headers)

    def _op_issues_create_comment(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, number = ctx.repo.full_name, int(ctx.params["issue_number"])
        if not self._issue_exists(full, number):
            return _not_found()
        comment = self._store_comment(full, number, ctx.body["body"], self.bot_login)
        return Response(
            201,
            self._render_comment(comment),
            {"location": f"{self.url}/repos/{full}/issues/comments/{comment['id']}"},
        )

    def _op_issues_update_comment(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        comment = self._comments.get(int(ctx.params["comment_id"]))
        if comment is None or comment["repo"] != ctx.repo.full_name:
            return _not_found()
        comment["body"] = ctx.body["body"]
        comment["updated_at"] = iso(_now())
        return Response(200, self._render_comment(comment))

    def _op_reactions_create_for_issue_comment(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        cid = int(ctx.params["comment_id"])
        comment = self._comments.get(cid)
        if comment is None or comment["repo"] != ctx.repo.full_name:
            return _not_found()
        for existing in self._reactions:
            if existing["comment_id"] == cid and existing["content"] == ctx.body["content"]:
                return Response(200, self._render_reaction(existing))
        reaction = {
            "id": self._next_id("reaction"),
            "comment_id": cid,
            "content": ctx.body["content"],
            "user": self.bot_login,
            "created_at": iso(_now()),
        }
        self._reactions.append(reaction)
        return Response(201, self._render_reaction(reaction))

    def _render_reaction(self, r: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": r["id"],
            "node_id": "REA_" + _b64(str(r["id"])),
            "user": self._user(r["user"]),
            "content": r["content"],
            "created_at": r["created_at"],
        }

    def _pull_of(self, ctx: _Ctx) -> dict[str, Any] | None:
        assert ctx.repo is not None
        return self._pulls[ctx.repo.full_name].get(int(ctx.params["pull_number"]))

    def _outside_diff(self, full_name: str, number: int, spec: Mapping[str, Any]) -> bool:
        """Whether a comment's head-side line (or range) misses the lines set_diff_lines()
        registered; without them, and for LEFT, ``position`` or file comments, it never does."""
        lines = self._diff_lines.get((full_name, number))
        if lines is None or spec.get("line") is None or spec.get("subject_type") == "file":
            return False
        if spec.get("side", "RIGHT") != "RIGHT":
            return False
        allowed = lines.get(spec["path"], frozenset())
        return spec["line"] not in allowed or spec.get("start_line", spec["line"]) not in allowed

    def _op_pulls_list_review_comments(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        pr, q = self._pull_of(ctx), ctx.req.query
        if pr is None:
            return _not_found()
        since = q.get("since")
        found = [
            c
            for c in self._review_comments.values()
            if c["repo"] == ctx.repo.full_name
            and c["pull_number"] == pr["number"]
            and self._reviews[c["review_id"]]["state"] != "PENDING"
            and (since is None or c["updated_at"] >= since)
        ]
        if "sort" in q:
            key = "created_at" if q["sort"] == "created" else "updated_at"
            found.sort(key=lambda c: (c[key], c["id"]), reverse=q.get("direction") == "desc")
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._render_review_comment(c) for c in items], headers)

    def _op_pulls_create_review_comment(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, pr, body = ctx.repo.full_name, self._pull_of(ctx), ctx.body
        if pr is None:
            return _not_found()
        spec, parent_id = body, None
        if "in_reply_to" in body:  # every other field is ignored: the reply joins the thread
            parent = self._review_comments.get(int(body["in_reply_to"]))
            if parent is None or (parent["repo"], parent["pull_number"]) != (full, pr["number"]):
                return _not_found()
            spec, parent_id = {**parent, "body": body["body"]}, parent["id"]
        elif self._outside_diff(full, pr["number"], body):
            return _validation_failed(
                [
                    {
                        "resource": "PullRequestReviewComment",
                        "code": "custom",
                        "field": "pull_request_review_thread.line",
                        "message": "pull_request_review_thread.line must be part of the diff",
                    }
                ]
            )
        # GitHub wraps a lone comment in a review of its own.
        review = self._store_review(
            full, pr["number"], self.bot_login, "", "COMMENTED", body["commit_id"]
        )
        comment = self._store_review_comment(
            full, pr["number"], spec, self.bot_login, body["commit_id"], review, parent_id
        )
        return Response(
            201,
            self._render_review_comment(comment),
            {"location": f"{self.url}/repos/{full}/pulls/comments/{comment['id']}"},
        )

    def _op_pulls_update_review_comment(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        comment = self._review_comments.get(int(ctx.params["comment_id"]))
        if comment is None or comment["repo"] != ctx.repo.full_name:
            return _not_found()
        comment["body"] = ctx.body["body"]
        comment["updated_at"] = iso(_now())
        return Response(200, self._render_review_comment(comment))

    def _op_pulls_create_review(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, pr, body = ctx.repo.full_name, self._pull_of(ctx), ctx.body or {}
        if pr is None:
            return _not_found()
        comments = body.get("comments", [])
        if any(self._outside_diff(full, pr["number"], c) for c in comments):
            # All or nothing, and GitHub does not say which comment it was.
            return Response(422, _error("Unprocessable Entity", 422, errors=[_NOT_IN_DIFF]))
        state = {
            "APPROVE": "APPROVED",
            "REQUEST_CHANGES": "CHANGES_REQUESTED",
            "COMMENT": "COMMENTED",
        }.get(body.get("event", ""), "PENDING")
        commit = body.get("commit_id") or pr["head_sha"]
        review = self._store_review(
            full, pr["number"], self.bot_login, body.get("body", ""), state, commit
        )
        for spec in comments:
            self._store_review_comment(full, pr["number"], spec, self.bot_login, commit, review)
        return Response(200, self._render_review(review))

    def _op_pulls_list(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, q = ctx.repo.full_name, ctx.req.query
        state = q.get("state", "open")
        head = q.get("head")
        found = []
        for n, pr in self._pulls[full].items():
            if state != "all" and pr["state"] != state:
                continue
            if "base" in q and pr["base_ref"] != q["base"]:
                continue
            # GitHub ignores a head filter without the "owner:" prefix (it returns everything).
            if head and ":" in head:
                owner, _, ref = head.partition(":")
                if (pr["head_repo"].split("/", 1)[0], pr["head_ref"]) != (owner, ref):
                    continue
            found.append(n)
        found.sort(reverse=q.get("direction", "desc") == "desc")
        items, headers = self._page(ctx.req, found)
        return Response(
            200, [self._render_pull(full, n, "pull-request-simple") for n in items], headers
        )

    def _op_pulls_get(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        number = int(ctx.params["pull_number"])
        if number not in self._pulls[ctx.repo.full_name]:
            return _not_found()
        return Response(200, self._render_pull(ctx.repo.full_name, number))

    def _op_pulls_update(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, number = ctx.repo.full_name, int(ctx.params["pull_number"])
        pr = self._pulls[full].get(number)
        if pr is None:
            return _not_found()
        body = ctx.body or {}
        for key in ("title", "body", "state"):
            if key in body:
                pr[key] = body[key]
        if "base" in body:
            pr["base_ref"] = body["base"]
        pr["updated_at"] = iso(_now())
        pr["closed_at"] = None if pr["state"] == "open" else pr["updated_at"]
        return Response(200, self._render_pull(full, number))

    def _op_pulls_create(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full = ctx.repo.full_name
        body = ctx.body
        head = body["head"]
        head_owner, sep, head_ref = head.partition(":")
        if not sep:
            head_owner, head_ref = ctx.repo.owner, head
        head_repo = body.get("head_repo") or f"{head_owner}/{ctx.repo.name}"
        label = f"{head_owner}:{head_ref}"
        for pr in self._pulls[full].values():
            if pr["state"] == "open" and (
                pr["head_repo"].split("/")[0],
                pr["head_ref"],
                pr["base_ref"],
            ) == (
                head_owner,
                head_ref,
                body["base"],
            ):
                return _validation_failed(
                    [
                        {
                            "resource": "PullRequest",
                            "code": "custom",
                            "message": f"A pull request already exists for {label}.",
                        }
                    ]
                )
        head_sha = self._branch_sha(head_repo, head_ref)
        base_sha = self._branch_sha(full, body["base"])
        for name, sha in (("head", head_sha), ("base", base_sha)):
            if sha == "":  # the bare repository exists and has no such branch
                return _validation_failed(
                    [{"resource": "PullRequest", "field": name, "code": "invalid"}]
                )
        if head_sha and base_sha and head_sha == base_sha:
            return _validation_failed(
                [
                    {
                        "resource": "PullRequest",
                        "code": "custom",
                        "message": f"No commits between {body['base']} and {head_ref}",
                    }
                ]
            )
        if "issue" in body:
            return Response(501, _error("the fake does not convert issues to pull requests"))
        number = self._next_number(full)
        now = iso(_now())
        self._pulls[full][number] = {
            "number": number,
            "id": self._next_id("pull"),
            "state": "open",
            "title": body.get("title", head_ref),
            "body": body.get("body"),
            "user": self.bot_login,
            "draft": body.get("draft", False),
            "head_ref": head_ref,
            "head_sha": head_sha or _ZERO_SHA,
            "head_repo": head_repo,
            "base_ref": body["base"],
            "base_sha": base_sha or _ZERO_SHA,
            "created_at": now,
            "updated_at": now,
            "closed_at": None,
        }
        return Response(
            201,
            self._render_pull(full, number),
            {"location": f"{self.url}/repos/{full}/pulls/{number}"},
        )

    def _op_repos_list_pull_requests_associated_with_commit(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        full, sha = ctx.repo.full_name, ctx.params["commit_sha"]
        found = sorted(
            (n for n, pr in self._pulls[full].items() if pr["head_sha"] == sha), reverse=True
        )
        items, headers = self._page(ctx.req, found)
        return Response(
            200, [self._render_pull(full, n, "pull-request-simple") for n in items], headers
        )

    def _op_repos_get_collaborator_permission_level(self, ctx: _Ctx) -> Response:
        assert ctx.repo is not None
        user = ctx.params["username"]
        role = ctx.repo.roles.get(user, "none" if ctx.repo.private else "read")
        return Response(
            200,
            {
                "permission": _LEGACY_PERMISSION[role],
                "role_name": role,
                "user": overlay(
                    self._user(user),
                    {"permissions": _permission_flags(role), "role_name": role},
                ),
            },
        )


@dataclass
class _Auth:
    kind: str  # "app", "installation" or "none" (an unauthenticated endpoint)
    token: Token | None


@dataclass
class _Ctx:
    req: Request
    op: Operation
    params: dict[str, str]
    body: Any
    repo: Repo | None
    auth: _Auth


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode().rstrip("=")


def _review_problems(body: Mapping[str, Any]) -> list[Problem]:
    """A review's rules beyond its schema: a COMMENT or REQUEST_CHANGES review says something
    (a body or comments); each comment is placed and its sides are sides."""
    problems: list[Problem] = []
    comments = body.get("comments") or []
    if body.get("event") in ("COMMENT", "REQUEST_CHANGES") and not (body.get("body") or comments):
        problems.append(
            Problem("body", "missing_field", f"body: required for a {body['event']} review")
        )
    for i, comment in enumerate(comments):
        problems += _placement_problems(comment, f"comments.{i}.")
    return problems


def _placement_problems(comment: Mapping[str, Any], where: str) -> list[Problem]:
    """Where a review comment goes: ``line`` (``position`` is closing down) unless it is on a
    whole file, sides LEFT or RIGHT, a range's start before its end."""
    problems: list[Problem] = []
    if (
        comment.get("subject_type") != "file"
        and "line" not in comment
        and ("position" not in comment)
    ):
        problems.append(
            Problem(f"{where}line", "missing_field", f"{where}line: required (or position)")
        )
    for key in ("side", "start_side"):
        if key in comment and comment[key] not in _SIDES:
            problems.append(
                Problem(f"{where}{key}", "invalid", f"{where}{key}: not one of {_SIDES}")
            )
    start, end = comment.get("start_line"), comment.get("line")
    if isinstance(start, int) and isinstance(end, int) and start >= end:
        problems.append(
            Problem(
                f"{where}start_line",
                "invalid",
                f"{where}start_line: {start} must precede the end line {end}",
            )
        )
    return problems


def _manifest_problems(manifest: Any) -> list[str]:
    """What GitHub's creation page refuses in a manifest (its documented parameters)."""
    if not isinstance(manifest, dict):
        return ["the manifest field is missing or not a JSON object"]
    problems = [f"unknown key {k!r}" for k in sorted(set(manifest) - _MANIFEST_KEYS)]
    for key in ("url", "redirect_url"):
        value = manifest.get(key)
        if not (isinstance(value, str) and value.startswith(("http://", "https://"))):
            problems.append(f"{key} must be a full URL")
    hook = manifest.get("hook_attributes")
    if not isinstance(hook, dict) or not str(hook.get("url", "")).startswith("http"):
        problems.append("hook_attributes.url must be a full URL")
    elif set(hook) - {"url", "active"}:
        problems.append(f"unknown hook_attributes keys {sorted(set(hook) - {'url', 'active'})}")
    permissions = manifest.get("default_permissions", {})
    if not isinstance(permissions, dict) or any(
        v not in ("read", "write", "admin") for v in permissions.values()
    ):
        problems.append("default_permissions values must be read, write or admin")
    events = manifest.get("default_events", [])
    if not isinstance(events, list) or not all(isinstance(e, str) for e in events):
        problems.append("default_events must be a list of event names")
    elif "installation" in events:
        problems.append("default_events: installation is not an event an App subscribes to")
    if "public" in manifest and not isinstance(manifest["public"], bool):
        problems.append("public must be a boolean")
    return problems


def _resource(op: Operation) -> str:
    group = op.operation_id.split("/", 1)[0]
    return {"checks": "CheckRun", "pulls": "PullRequest", "issues": "IssueComment"}.get(
        group, "Resource"
    )


def _handler_name(op: Operation) -> str:
    return re.sub(r"[^a-z0-9]+", "_", op.operation_id.lower()).strip("_")


def _allows(have: str | None, need: str) -> bool:
    order = {None: 0, "read": 1, "write": 2, "admin": 3}
    return order.get(have, 0) >= order.get(need, 3)


def _required_permission(op: Operation) -> tuple[tuple[str, ...], str] | None:
    """Which installation permission an operation needs: (any of these, at least level)."""
    write = op.method != "GET"
    level = "write" if write else "read"
    t = op.template
    if "/check-runs" in t or "/check-suites" in t:
        return ("checks",), level
    if "/issues/" in t:
        return ("issues", "pull_requests"), level
    if "/pulls" in t or t.endswith("/commits/{commit_sha}/pulls"):
        return ("pull_requests",), level
    if "/contents/" in t or "/git/" in t:
        return ("contents",), level
    if "/statuses/" in t:
        return ("statuses",), level
    return ("metadata",), "read"


def _permission_flags(role: str) -> dict[str, bool]:
    rank = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
    return {
        "pull": rank >= 1,
        "triage": rank >= 2,
        "push": rank >= 3,
        "maintain": rank >= 4,
        "admin": rank >= 5,
    }
