"""The manifest flow's pages, as plain HTML: every value escaped, no script, no external asset."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from bot.forges.github.manifest import AppCredentials, environment_lines

_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}"
    "pre{background:#f4f4f4;padding:.8em;overflow-x:auto}"
    "td,th{padding:.2em .8em .2em 0;text-align:left;vertical-align:top}"
    ".warn{border-left:4px solid #c60;padding-left:.8em}"
)


# No script at all, styles only from the page itself, forms only to GitHub (and to this page,
# for the organization field), never framed, and no Referer carrying the code anywhere.
def security_headers(form_target: str) -> dict[str, str]:
    return {
        "Content-Security-Policy": (
            "default-src 'none'; style-src 'unsafe-inline'; "
            f"form-action 'self' {form_target}; frame-ancestors 'none'; base-uri 'none'"
        ),
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
    }


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body><h1>{escape(title)}</h1>{body}</body></html>"
    )


def render_start(manifest: dict[str, Any], action: str, org: str | None, base_source: str) -> str:
    """The page whose button posts ``manifest`` to GitHub's ``action`` URL."""
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{escape(level)}</td></tr>"
        for name, level in manifest["default_permissions"].items()
    )
    events = ", ".join(escape(e) for e in manifest["default_events"])
    owner = f"the organization <b>{escape(org)}</b>" if org else "your personal account"
    body = (
        f"<p>This registers a new GitHub App for this Ichor Bot, owned by {owner}. "
        "GitHub asks for the App's name, then sends you back here with its credentials.</p>"
        "<table>"
        f"<tr><th>Bot URL</th><td>{escape(manifest['url'])} ({escape(base_source)})</td></tr>"
        f"<tr><th>Webhook URL</th><td>{escape(manifest['hook_attributes']['url'])}</td></tr>"
        f"<tr><th>Returns to</th><td>{escape(manifest['redirect_url'])}</td></tr>"
        f"<tr><th>Events</th><td>{events}</td></tr>"
        "</table><h2>Repository permissions</h2>"
        f"<table>{rows}</table>"
        f'<form method="post" action="{escape(action)}">'
        f'<input type="hidden" name="manifest" value="{escape(json.dumps(manifest))}">'
        '<p><button type="submit">Register the App on GitHub</button></p></form>'
        '<form method="get" action="/setup/github">'
        '<p><label>Or for an organization: <input name="org" '
        f'value="{escape(org or "")}" maxlength="39"></label> '
        '<button type="submit">Use this organization</button></p></form>'
    )
    return _page("Register Ichor Bot as a GitHub App", body)


def render_created(app: AppCredentials, base_url: str) -> str:
    """The App's credentials, shown this once: the page is never cached or shown again."""
    secret = (
        f"<pre>{escape(app.webhook_secret)}</pre>"
        if app.webhook_secret
        else "<p>GitHub set none: set one in the App's settings and as "
        "<code>ICHOR_GITHUB_WEBHOOK_SECRET</code>.</p>"
    )
    owner = f" (owner {escape(app.owner)})" if app.owner else ""
    body = (
        '<p class="warn"><b>Shown once.</b> Copy these now: this page cannot be opened again, '
        "and the private key is not kept anywhere by the bot. GitHub can generate a new key "
        "from the App's settings if it is lost.</p>"
        "<table>"
        f'<tr><th>App</th><td><a href="{escape(app.html_url)}">{escape(app.name)}</a>'
        f"{owner}</td></tr>"
        f"<tr><th>App id</th><td>{app.app_id}</td></tr>"
        f"<tr><th>Slug</th><td>{escape(app.slug)}</td></tr>"
        "</table>"
        "<h2>Settings for the bot</h2>"
        "<p>Give these to <code>ichor-bot serve</code> and <code>ichor-bot worker</code> "
        "(POSIX shell syntax; the key may also be saved as a <code>.pem</code> file and "
        "<code>ICHOR_GITHUB_PRIVATE_KEY</code> set to its path):</p>"
        f"<pre>{escape(environment_lines(app))}</pre>"
        f"<h2>Webhook secret</h2>{secret}"
        f"<h2>Private key</h2><pre>{escape(app.pem.strip())}</pre>"
        "<h2>Next</h2><p>Restart the bot with these settings and without "
        "<code>ICHOR_SETUP_ENABLED</code>, then install the App on the repositories to guard: "
        f'<a href="{escape(app.html_url)}/installations/new">install it</a>. '
        f"Webhooks go to {escape(base_url)}/webhooks/github.</p>"
    )
    return _page("GitHub App created", body)


def render_refused(message: str) -> str:
    body = f'<p>{escape(message)}</p><p><a href="/setup/github">Start again</a>.</p>'
    return _page("GitHub App setup", body)
