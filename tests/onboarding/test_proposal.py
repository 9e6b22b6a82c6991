"""The files an onboarding pull request adds: a valid, commented .ichor.yaml, and per target a
README.md and a .gittargetignore that ignores nothing, only where the target has none."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.cli.demo import read_tree
from bot.config.schema import parse_config
from bot.gate.report import Role, Verdict
from bot.git.snapshot import Snapshot
from bot.ignore.rules import read_rules
from bot.onboarding.detect import Candidate, detect_targets
from bot.onboarding.proposal import proposal_files, proposal_reports
from bot.onboarding.templates import ichor_yaml, ignore_template, target_readme, yaml_scalar
from tests.onboarding.test_detect import MANY, MIXED, THREE


def mixed() -> tuple[Snapshot, tuple[Candidate, ...]]:
    snapshot = Snapshot.from_files(read_tree(MIXED))
    return snapshot, detect_targets(snapshot)


@pytest.mark.parametrize("tree", [MIXED, MANY], ids=["mixed", "many"])
def test_the_proposed_configuration_is_valid_and_names_the_targets(tree: Path) -> None:
    snapshot = Snapshot.from_files(read_tree(tree))
    candidates = detect_targets(snapshot)
    result = parse_config(proposal_files(candidates, snapshot)[".ichor.yaml"])
    assert result.issues == ()
    assert result.config is not None
    assert [(t.name, t.path, t.mode) for t in result.config.gate_policy().targets] == [
        (c.name, c.path, "relaxed") for c in candidates
    ]


def test_every_key_is_explained_and_the_optional_ones_are_commented_out() -> None:
    text = ichor_yaml([Candidate("prod", "clusters/prod", 3, 3, True)])
    assert "# The format of this file" in text and "# The folders to guard" in text
    for key in ("name", "path", "mode", "placement", "capabilities"):
        assert f"#   {key}:" in text, key
    assert "# 3 Kubernetes objects in 3 YAML documents, with a kustomization.yaml" in text
    loaded = yaml.safe_load(text)
    assert loaded == {
        "version": 1,
        "targets": [{"name": "prod", "path": "clusters/prod", "mode": "relaxed"}],
    }
    # Uncommenting the examples gives a valid file too.
    examples = ("    #placement:", "    #capabilities:", "#commands:", "#  min_", "#  allow_")
    uncommented = "\n".join(
        line.replace("#", "", 1) if line.startswith(examples) else line
        for line in text.splitlines()
    )
    result = parse_config(uncommented.encode())
    assert result.issues == (), result.issues
    assert result.config is not None and result.config.targets[0].capabilities is not None


@pytest.mark.parametrize(
    "path",
    ["123", "on", "yes", "null", "1.10", "0x1f", "a: b", "x #y", "-dash", "日本/ü", "Team.A",
     "'quoted'", '"dq"', "sp ace", "tab\u2028sep", "~"],
)  # fmt: skip
def test_any_path_reads_back_as_itself(path: str) -> None:
    assert yaml.safe_load(yaml_scalar(path)) == path
    result = parse_config(ichor_yaml([Candidate("t", path, 3, 3, False)]).encode())
    assert result.config is not None, result.issues
    assert result.config.targets[0].path == path


def test_plain_scalars_stay_plain() -> None:
    assert yaml_scalar("clusters/prod") == "clusters/prod"
    assert yaml_scalar("123") == '"123"'


def test_the_repository_root_is_written_as_dot() -> None:
    text = ichor_yaml([Candidate("root", "", 3, 3, False)])
    assert 'path: "."' in text and "#capabilities" not in text
    result = parse_config(text.encode())
    assert result.config is not None and result.config.targets[0].path == ""


def test_readme_and_ignore_file_only_where_missing() -> None:
    snapshot = Snapshot.from_files(
        {
            "a/objects.yaml": THREE,
            "a/README.md": b"# ours\n",
            "b/objects.yaml": THREE,
            "b/.gittargetignore": b"/notes.txt\n",
            "c/objects.yaml": THREE,
            "c/readme.md": b"lower case\n",  # a second README in another case would collide
        }
    )
    candidates = detect_targets(snapshot)
    assert [c.path for c in candidates] == ["a", "b", "c"]
    files = proposal_files(candidates, snapshot)
    assert sorted(files) == sorted(
        [".ichor.yaml", "a/.gittargetignore", "b/README.md", "c/.gittargetignore"]
    )
    root = proposal_files([Candidate("root", "", 3, 3, False)], Snapshot.from_files({}))
    assert sorted(root) == [".gittargetignore", ".ichor.yaml", "README.md"]


def test_the_ignore_file_ignores_nothing_until_an_example_is_uncommented() -> None:
    text = ignore_template(Candidate("prod", "clusters/prod", 3, 3, False))
    assert read_rules(text) == ()
    assert all(line.startswith("#") or not line for line in text.splitlines())
    examples = [line[1:] for line in text.splitlines() if line[1:2] in ("/", "*", "!")]
    assert examples == [
        "/docs/",
        "/scripts/",
        "*.txt",
        "/examples/*.yaml",
        "!/examples/namespace.yaml",
    ]
    for example in examples:
        (rule,) = read_rules(example)
        assert rule.pattern == example


def test_the_readme_escapes_the_path() -> None:
    text = target_readme(Candidate("t", "a<b>|`c`@d", 3, 3, False))
    assert "<b>" not in text and "`c`" not in text and "@d" not in text
    assert "`t`" in text


def test_a_proposal_makes_its_own_targets_accept_their_new_files() -> None:
    snapshot, candidates = mixed()
    files = proposal_files(candidates, snapshot)
    reports = proposal_reports(snapshot, files)
    assert list(reports) == [c.name for c in candidates]
    verdicts = {name: r.verdict for name, r in reports.items()}
    # platform/broken.yaml does not parse; every other target is accepted as proposed.
    assert verdicts == {
        "legacy-apps": Verdict.ACCEPTED,
        "team-a-2": Verdict.ACCEPTED,
        "clusters-prod": Verdict.ACCEPTED,
        "clusters-staging": Verdict.ACCEPTED,
        "platform": Verdict.REFUSED,
        "team-a": Verdict.ACCEPTED,
    }
    for report in reports.values():
        # README.md and .gittargetignore are operator artifacts, and warn of nothing.
        assert report.counts[Role.OPERATOR_ARTIFACT] == 2
        assert {i.kind.value for i in report.issues} <= {"invalid-yaml"}


def test_reports_are_empty_for_a_configuration_with_issues() -> None:
    snapshot = Snapshot.from_files({})
    assert proposal_reports(snapshot, {".ichor.yaml": b"version: 2\n"}) == {}
