"""Links to a forge's pages, built per forge from a repository's web URL (pure).

Every part that came from stored data is checked or percent-encoded: the base must be an
http(s) URL, a commit a hex id, a line a positive number, and a path is encoded segment by
segment, so no link from the page can be ``javascript:``, leave the repository, or carry markup.
"""

from __future__ import annotations

import re
from urllib.parse import quote

# Below the repository's page, per forge: a pull request, a commit, a file at a commit.
PULL_PATH = {"github": "pull", "gitlab": "-/merge_requests", "gitea": "pulls"}
COMMIT_PATH = {"github": "commit", "gitlab": "-/commit", "gitea": "commit"}
BLOB_PATH = {"github": "blob", "gitlab": "-/blob", "gitea": "src/commit"}
_SHA = re.compile(r"[0-9a-f]{7,64}")


def repository_url(web_url: str | None) -> str | None:
    """The repository's page, when stored as an http(s) URL (never ``javascript:``, ``data:``
    or a relative link)."""
    if not web_url or not web_url.startswith(("https://", "http://")):
        return None
    return quote(web_url.rstrip("/"), safe=":/@%-._~")


def pull_url(forge: str, web_url: str | None, number: int | None) -> str | None:
    base = repository_url(web_url)
    if base is None or number is None or forge not in PULL_PATH:
        return None
    return f"{base}/{PULL_PATH[forge]}/{number}"


def commit_url(forge: str, web_url: str | None, sha: str) -> str | None:
    base = repository_url(web_url)
    if base is None or forge not in COMMIT_PATH or not _SHA.fullmatch(sha):
        return None
    return f"{base}/{COMMIT_PATH[forge]}/{sha}"


def blob_url(
    forge: str, web_url: str | None, sha: str, path: str, line: int | None = None
) -> str | None:
    """The file at the commit, at its line: GitHub ``/blob/{sha}/{path}#L{n}``, GitLab
    ``/-/blob/{sha}/{path}#L{n}``, Gitea and Forgejo ``/src/commit/{sha}/{path}#L{n}``."""
    base = repository_url(web_url)
    parts = path.split("/")
    if base is None or forge not in BLOB_PATH or not _SHA.fullmatch(sha):
        return None
    if not path or any(p in ("", ".", "..") for p in parts):
        return None  # not a file of the repository: no link rather than one elsewhere
    try:
        encoded = "/".join(quote(p, safe="") for p in parts)
    except UnicodeEncodeError:
        return None  # a name that is not UTF-8 (kept with surrogate escapes) has no URL
    anchor = f"#L{line}" if line is not None and line > 0 else ""
    return f"{base}/{BLOB_PATH[forge]}/{sha}/{encoded}{anchor}"
