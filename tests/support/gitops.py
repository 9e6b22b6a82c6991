"""The GitOps content the check tests commit: a configuration with two targets, objects,
and the three pushes that each change which issues exist."""

from __future__ import annotations

CONFIG = """version: 1
targets:
  - {name: prod, path: clusters/prod}
  - {name: staging, path: clusters/staging}
"""
CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata: {name: NAME, namespace: web}
data: {mode: prod}
"""
SECRET = """apiVersion: v1
kind: Secret
metadata: {name: db, namespace: web}
stringData: {password: hunter2}
"""


def configmap(name: str) -> str:
    return CONFIGMAP.replace("NAME", name)


def base_files() -> dict[str, str | None]:
    """Both targets accepted."""
    return {
        ".ichor.yaml": CONFIG,
        "clusters/prod/v1/configmaps/web/settings.yaml": configmap("settings"),
        "clusters/staging/v1/configmaps/web/settings.yaml": configmap("settings"),
        "README.md": "hello\n",
    }


# Push 1 adds two findings; push 2 fixes one and adds another; push 3 fixes the rest.
THREE_PUSHES: tuple[dict[str, str | None], ...] = (
    {"clusters/prod/notes.txt": "todo\n", "clusters/prod/v1/secrets/web/db.yaml": SECRET},
    {"clusters/prod/notes.txt": None, "clusters/prod/more.txt": "x\n"},
    {"clusters/prod/more.txt": None, "clusters/prod/v1/secrets/web/db.yaml": None},
)
