"""Credentials on the fake GitHub: app JWTs (made and verified), installation tokens (minted,
expired, revoked), who may call which operation, and git's Basic credentials."""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable, Mapping

import jwt as pyjwt

from tests.fakeforge.base import Reject, split_auth
from tests.fakeforge.github.core import GitHubCore
from tests.fakeforge.github.keys import private_key
from tests.fakeforge.github.model import (
    Auth,
    Call,
    Ctx,
    Installation,
    Repo,
    Token,
    error,
    not_found,
    time_now,
)
from tests.fakeforge.httpserver import Request, Response
from tests.fakeforge.openapi import Operation

_JWT_TEMPLATES = frozenset({"/repos/{owner}/{repo}/installation"})
_EITHER_TEMPLATES = frozenset({"/rate_limit"})
# Unauthenticated by design: the code is the credential. The fake refuses a credential here,
# stricter than GitHub, so a token or JWT sent where none belongs is seen.
_NO_AUTH_TEMPLATES = frozenset({"/app-manifests/{code}/conversions"})


class AuthMixin(GitHubCore):
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
        issued = int(time_now()) - 60 if iat is None else int(iat)
        payload = {
            "iat": issued,
            "exp": issued + 600 if exp is None else int(exp),
            "iss": self.app_id if iss is None else iss,
        }
        # JWS level: PyJWT's claim checks would refuse an integer iss, which GitHub takes.
        key = private_key(key_pem or self.private_key_pem)
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
            now = time_now()
            for token in self._tokens.values():
                token.expires_at = min(token.expires_at, now)

    def revoke_token(self, value: str) -> None:
        with self._lock:
            self._tokens[value].revoked = True

    def token_valid(self, value: str) -> bool:
        with self._lock:
            token = self._tokens.get(value)
            return token is not None and token.valid(time_now())

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
        expires = float(int(time_now() + ttl))
        token = Token(value, inst.id, expires, permissions, repositories)
        self._tokens[value] = token
        self._token_order.append(value)
        return token

    # ------------------------------------------------------------------ authentication
    def _authenticate(self, op: Operation, req: Request, call: Call) -> Auth:
        scheme, credential = call.auth_scheme, call.token
        if op.template in _NO_AUTH_TEMPLATES:
            if credential is not None:
                raise Reject(
                    Response(401, error("Bad credentials", 401)),
                    "auth_failures",
                    f"{op.template} takes no credentials, got scheme {scheme!r}",
                )
            return Auth(kind="none", token=None)
        needs_jwt = op.template.startswith("/app") or op.template in _JWT_TEMPLATES
        either = op.template in _EITHER_TEMPLATES

        def fail(message: str, reason: str) -> Reject:
            return Reject(Response(401, error(message, 401)), "auth_failures", reason)

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
            return Auth(kind="app", token=None)
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
        if not token.valid(time_now()):
            raise fail("Bad credentials", "expired installation token")
        return Auth(kind="installation", token=token)

    def _verify_jwt(self, credential: str, fail: Callable[[str, str], Reject]) -> None:
        try:
            header = pyjwt.get_unverified_header(credential)
            # Signature only; the claims are checked below, as GitHub checks them.
            public = private_key(self.private_key_pem).public_key()
            raw = pyjwt.PyJWS().decode(credential, public, algorithms=["RS256"])
            claims = json.loads(raw)
            if not isinstance(claims, dict):
                raise pyjwt.DecodeError("the payload is not a JSON object")
        except (pyjwt.PyJWTError, ValueError) as exc:
            raise fail("A JSON web token could not be decoded", f"JWT rejected: {exc}") from None
        if header.get("alg") != "RS256":
            raise fail("A JSON web token could not be decoded", "JWT alg is not RS256")
        now = time_now()
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

    def _authorize_repo(self, ctx: Ctx) -> Repo | None:
        op, params, auth = ctx.op, ctx.params, ctx.auth
        if "owner" not in params or "repo" not in params:
            return None
        full = f"{params['owner']}/{params['repo']}"
        repo = self._repos.get(full)
        if repo is None:
            raise Reject(not_found())
        if auth.kind == "app":
            return repo
        token = auth.token
        assert token is not None
        covered = token.installation_id == repo.installation_id and (
            token.repositories is None or full in token.repositories
        )
        if not covered:
            if repo.private:
                raise Reject(not_found())
            raise Reject(Response(403, error("Resource not accessible by integration", 403)))
        need = required_permission(op)
        if need is not None:
            options, level = need
            if not any(allows(token.permissions.get(p), level) for p in options):
                raise Reject(
                    Response(
                        403,
                        error("Resource not accessible by integration", 403),
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


def allows(have: str | None, need: str) -> bool:
    order = {None: 0, "read": 1, "write": 2, "admin": 3}
    return order.get(have, 0) >= order.get(need, 3)


def required_permission(op: Operation) -> tuple[tuple[str, ...], str] | None:
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
    if t.startswith("/orgs/{org}/teams/"):
        return ("members",), level
    return ("metadata",), "read"
