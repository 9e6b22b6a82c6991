"""The app's own endpoints on the fake GitHub: ``GET /app``, installation access tokens, a
repository's installation, the rate limit, and the manifest flow (the creation page and the
code's conversion)."""

from __future__ import annotations

import copy
import json
import re
import secrets
from typing import Any
from urllib.parse import parse_qsl, urlencode

from tests.fakeforge.github.auth import AuthMixin, allows
from tests.fakeforge.github.keys import shared_private_key
from tests.fakeforge.github.model import Ctx, b64, error, iso, not_found, time_now
from tests.fakeforge.httpserver import Request, Response
from tests.fakeforge.openapi import overlay

_MANIFEST_CODE_TTL = 3600.0  # GitHub: the whole manifest flow within one hour
_MANIFEST_KEYS = frozenset(
    {
        "name", "url", "hook_attributes", "redirect_url", "callback_urls", "setup_url",
        "description", "public", "default_events", "default_permissions",
        "request_oauth_on_install", "setup_on_update",
    }
)  # fmt: skip
_CREATION_PAGE = re.compile(r"/(?:organizations/([A-Za-z0-9-]{1,39})/)?settings/apps/new")


class AppsMixin(AuthMixin):
    def registrations(self) -> list[dict[str, Any]]:
        """What the creation page was posted (manifest flow): ``path``, ``state``, ``manifest``
        and whether the code was exchanged (``converted``), in order."""
        with self._lock:
            return copy.deepcopy(self._registrations)

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
                "at": time_now(),
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

    def _op_apps_create_from_manifest(self, ctx: Ctx) -> Response:
        code = ctx.params["code"]
        entry = self._manifest_codes.get(code)
        if entry is None or entry["used"] or time_now() - entry["at"] > _MANIFEST_CODE_TTL:
            return not_found()
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
                "node_id": "A_" + b64(slug),
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
    def _op_apps_get_authenticated(self, ctx: Ctx) -> Response:
        return Response(200, self._app())

    def _op_apps_create_installation_access_token(self, ctx: Ctx) -> Response:
        inst = self._installations.get(int(ctx.params["installation_id"]))
        if inst is None:
            return not_found()
        body = ctx.body or {}
        permissions = dict(inst.permissions)
        if "permissions" in body:
            wanted = body["permissions"]
            if not all(allows(inst.permissions.get(k), v) for k, v in wanted.items()):
                return Response(
                    422,
                    error("The permissions requested are not granted to this installation.", 422),
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
                    error(
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

    def _op_apps_get_repo_installation(self, ctx: Ctx) -> Response:
        assert ctx.repo is not None
        return Response(200, self._installation(ctx.repo.installation_id))

    def _op_apps_list_installations(self, ctx: Ctx) -> Response:
        """``GET /app/installations``: every installation of the app, by id."""
        found = sorted(self._installations)
        items, headers = self._page(ctx.req, found)
        return Response(200, [self._installation(i) for i in items], headers)

    def _op_apps_list_repos_accessible_to_installation(self, ctx: Ctx) -> Response:
        """``GET /installation/repositories``: the token's installation's repositories (those
        the token was narrowed to, if it was), by name."""
        token = ctx.auth.token
        assert token is not None
        found = sorted(
            r.full_name
            for r in self._repos.values()
            if r.installation_id == token.installation_id
            and (token.repositories is None or r.full_name in token.repositories)
        )
        items, headers = self._page(ctx.req, found)
        body = {
            "total_count": len(found),
            "repositories": [self._repo_object(n) for n in items],
            "repository_selection": "all" if token.repositories is None else "selected",
        }
        return Response(200, body, headers)

    def _installation(self, installation_id: int) -> dict[str, Any]:
        inst = self._installations[installation_id]
        rendered: dict[str, Any] = overlay(
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
        )
        return rendered

    def _op_rate_limit_get(self, ctx: Ctx) -> Response:
        reset = int(time_now()) + 3600
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
