"""SARIF links (issue 21 item 13): the driver's ``informationUri`` and each rule's ``helpUri``
lead into this repository's README.md or docs/, to a section that exists (on GitHub, where the
links go)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot import PROJECT_URL, __version__
from bot.gate.report import Report
from bot.render.sarif import DOCS_URL, report_to_sarif_dict
from tests.conftest import MakeRepo, RunCli
from tests.support.markdown_links import github_anchors

ROOT = Path(__file__).resolve().parents[2]


def _links(docs_url: str = DOCS_URL) -> tuple[str, list[tuple[str, str]]]:
    driver = report_to_sarif_dict(Report(None), docs_url=docs_url)["runs"][0]["tool"]["driver"]
    return driver["informationUri"], [(rule["id"], rule["helpUri"]) for rule in driver["rules"]]


def test_every_rule_links_to_a_section_that_exists() -> None:
    information, links = _links()
    assert information == f"{DOCS_URL}README.md"
    anchors: dict[str, set[str]] = {}
    for rule, uri in links:
        assert uri.startswith(DOCS_URL), rule
        path, _, anchor = uri.removeprefix(DOCS_URL).partition("#")
        file = ROOT / path
        assert file.is_file() and (path == "README.md" or path.startswith("docs/")), (rule, uri)
        if path not in anchors:
            anchors[path] = github_anchors(file.read_text(encoding="utf-8"))
        assert anchor in anchors[path], (rule, uri)


def test_the_docs_are_those_of_this_version_where_the_readme_installs_from() -> None:
    assert f"{PROJECT_URL}/blob/v{__version__}/" == DOCS_URL
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f'pip install "git+{PROJECT_URL}@v{__version__}"' in readme


def test_another_docs_url() -> None:
    information, links = _links("https://docs.example/ichor/")
    assert information == "https://docs.example/ichor/README.md"
    assert all(uri.startswith("https://docs.example/ichor/") for _, uri in links)
    assert {uri.partition("#")[0] for rule, uri in links if rule != "invalid-config"} == {
        "https://docs.example/ichor/docs/gate.md"
    }


def test_the_cli_takes_the_docs_url_from_the_environment(
    make_repo: MakeRepo, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = str(make_repo({"t/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"}))
    monkeypatch.setenv("ICHOR_DOCS_URL", "https://git.example/acme/ichor-bot/src/tag/v1")
    result = run_cli("check", repo, "--rev", "HEAD", "--format", "sarif")
    assert result.code == 0
    driver = result.json()["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == "https://git.example/acme/ichor-bot/src/tag/v1/README.md"
    monkeypatch.setenv("ICHOR_DOCS_URL", "docs/")  # SARIF wants absolute URIs
    refused = run_cli("check", repo, "--rev", "HEAD", "--format", "sarif")
    assert refused.code == 2 and refused.out == ""
    assert "ICHOR_DOCS_URL" in refused.err and "absolute" in refused.err
