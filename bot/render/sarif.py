"""The report as SARIF 2.1.0, for code-scanning uploads: one rule per issue code."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from bot import PROJECT_URL, __version__
from bot.gate.codes import CODES, IssueCode, Severity
from bot.gate.report import Issue, Report
from bot.paths import encode_path
from bot.render.as_json import dumps

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
CONFIG_RULE = "invalid-config"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning"}
# Where README.md and docs/ are read: this version's tag, so a rule's help is the text of the
# version that reported it. SARIF wants absolute URIs; `check` takes another from ICHOR_DOCS_URL.
DOCS_URL = f"{PROJECT_URL}/blob/v{__version__}/"
# The page, under the docs URL, that explains the rules, and the section of it for each code
# (GitHub's anchors of its headings; the test checks each exists). A code not listed links to
# the table of every code; docs/gate.md's table links each code to the same section.
HELP_PAGE = "docs/gate.md"
HELP_SECTION = {
    IssueCode.FOREIGN_FILE: "roles",
    IssueCode.FOREIGN_SYMLINK: "roles",
    IssueCode.FOREIGN_SUBMODULE: "roles",
    IssueCode.EMPTY_TARGET: "roles",
    IssueCode.IGNORE_SHADOWS_MANAGED: "gittargetignore",
    IssueCode.UNUSED_IGNORE_PATTERN: "gittargetignore",
    IssueCode.INVALID_YAML: "the-content-gate",
    IssueCode.NON_KRM_YAML: "the-content-gate",
    IssueCode.INVALID_NAME: "the-content-gate",
    IssueCode.IMPURE_MANAGED_FILE: "the-content-gate",
    IssueCode.DUPLICATE_IDENTITY: "the-content-gate",
    IssueCode.MIXED_MANAGED_ALLOWLISTED: "the-content-gate",
    IssueCode.UNSUPPORTED_KUSTOMIZE: "the-content-gate",
    IssueCode.INVALID_KUSTOMIZE: "the-content-gate",
    IssueCode.PLAINTEXT_SECRET: "the-content-gate",
    IssueCode.FILE_TOO_LARGE: "the-content-gate",
    IssueCode.IGNORED_MANAGED_OBJECT: "the-content-gate",
    IssueCode.NOT_FOLLOWABLE: "types-ichor-bot-types",
}
ALL_CODES_SECTION = "issue-codes"
_CONFIG_PAGE = "docs/configuration.md"
_CONFIG_SECTION = "ichoryaml"


def _rule_name(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("-"))


def _rules(docs_url: str) -> list[dict[str, Any]]:
    rules = [
        {
            "id": code.value,
            "name": _rule_name(code.value),
            "shortDescription": {"text": info.summary},
            "help": {"text": info.fix},
            "helpUri": f"{docs_url}{HELP_PAGE}#{HELP_SECTION.get(code, ALL_CODES_SECTION)}",
            "defaultConfiguration": {"level": _LEVEL[info.severity]},
        }
        for code, info in CODES.items()
    ]
    rules.append(
        {
            "id": CONFIG_RULE,
            "name": _rule_name(CONFIG_RULE),
            "shortDescription": {"text": "The repository's .ichor.yaml is not valid."},
            "help": {"text": "Fix the key named in the message."},
            "helpUri": f"{docs_url}{_CONFIG_PAGE}#{_CONFIG_SECTION}",
            "defaultConfiguration": {"level": "error"},
        }
    )
    return rules


def _uri(path: str) -> str:
    # RFC 3986 percent-encoding of the raw bytes, so non-UTF-8 names stay exact.
    return quote(encode_path(path), safe="/")


def _location(path: str, line: int | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path), "uriBaseId": "%SRCROOT%"}}
    if line is not None:
        physical["region"] = {"startLine": line}
    return {"physicalLocation": physical}


def report_to_sarif_dict(report: Report, *, docs_url: str = DOCS_URL) -> dict[str, Any]:
    """``docs_url``: the absolute URL that README.md and docs/ are under, ending in '/'."""
    rules = _rules(docs_url)
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results: list[dict[str, Any]] = [
        {
            "ruleId": CONFIG_RULE,
            "ruleIndex": index[CONFIG_RULE],
            "level": "error",
            "message": {"text": f"{issue.kind}: {issue.message}"},
            "locations": [_location(issue.path, None)],
        }
        for issue in report.config_issues
    ]
    for target in report.targets:
        for issue in sorted(target.issues, key=Issue.sort_key):
            results.append(_result(issue, target.name, index))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "ichor-bot",
                "version": __version__,
                "informationUri": f"{docs_url}README.md",
                "rules": rules,
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    if report.revision:
        run["properties"] = {"revision": report.revision}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _result(issue: Issue, target: str, index: dict[str, int]) -> dict[str, Any]:
    code: IssueCode = issue.kind
    result: dict[str, Any] = {
        "ruleId": code.value,
        "ruleIndex": index[code.value],
        "level": _LEVEL[issue.severity],
        "message": {"text": issue.message},
        "locations": [_location(issue.path, issue.line)],
        "properties": {"target": target},
    }
    if issue.pattern is not None:
        # The real pattern, in the report's JSON form for names that are not UTF-8.
        result["properties"]["pattern"] = issue.pattern
    if issue.fix is not None:  # more precise than the rule's help: it names the file
        result["properties"]["fix"] = issue.fix
    return result


def report_to_sarif(report: Report, *, docs_url: str = DOCS_URL) -> str:
    return dumps(report_to_sarif_dict(report, docs_url=docs_url))
