"""What an onboarding proposal adds beyond .ichor.yaml (issue 22 items 1 and 2): the
capabilities file each target needs, named in .ichor.yaml; and, when nothing qualifies, one
new, empty target with its bootstrap files and, for a repository using SOPS, its .sops.yaml."""

from __future__ import annotations

import yaml

from bot.config.schema import parse_config
from bot.gate.codes import IssueCode
from bot.gate.report import Verdict
from bot.git.snapshot import Snapshot
from bot.onboarding.proposal import Proposal, build_proposal, capabilities_path
from bot.registry.builtin import crd_catalog
from bot.registry.suggest import Origin
from tests.gate.test_suggest_input import CRD
from tests.onboarding.test_detect import THREE, objects

RELEASES = "---\n".join(
    f"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: r{i}, "
    "namespace: n}\n"
    for i in range(2)
)
WIDGETS = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: n}\n"
UNKNOWN = "apiVersion: home.example/v1\nkind: Gizmo\nmetadata: {name: g, namespace: n}\n"


def propose(files: dict[str, str | bytes]) -> Proposal:
    blobs = {p: d.encode() if isinstance(d, str) else d for p, d in files.items()}
    return build_proposal(Snapshot.from_files(blobs), catalog=crd_catalog())


def test_each_target_gets_the_capabilities_file_its_types_need() -> None:
    proposal = propose(
        {
            "prod/releases.yaml": RELEASES,
            "prod/widget.yaml": WIDGETS,
            "prod/objects.yaml": THREE,
            "crds/widgets.yaml": CRD,  # outside the target: only the suggestion reads it
            "plain/objects.yaml": THREE,
        }
    )
    plain, prod = proposal.targets
    assert prod.capabilities == "prod.capabilities.txt"
    assert plain.capabilities is None  # nothing but built-in types
    assert prod.suggestion is not None
    origins = {t.kind: (t.origin, t.source) for t in prod.suggestion.types}
    assert origins["HelmRelease"][0] is Origin.CATALOG
    assert origins["HelmRelease"][1].startswith("catalog: fluxcd/helm-controller@")
    assert origins["Widget"] == (
        Origin.REPOSITORY,
        "CustomResourceDefinition widgets.example.com at crds/widgets.yaml",
    )
    assert proposal.files["prod.capabilities.txt"] == prod.suggestion.text.encode()
    config = parse_config(proposal.files[".ichor.yaml"]).config
    assert config is not None
    assert [t.capabilities for t in config.targets] == [None, "prod.capabilities.txt"]
    # With the file in place, nothing of the target is refused.
    assert prod.report is not None and prod.report.verdict is Verdict.ACCEPTED


def test_a_type_no_source_knows_is_listed_not_guessed() -> None:
    proposal = propose({"apps/gizmo.yaml": UNKNOWN, "apps/objects.yaml": THREE})
    (apps,) = proposal.targets
    assert apps.suggestion is not None
    assert [t.name for t in apps.suggestion.missing] == ["home.example/v1 Gizmo"]
    assert apps.report is not None
    (issue,) = apps.report.issues
    assert issue.kind is IssueCode.NOT_FOLLOWABLE and "not-served" in issue.message


def test_a_capabilities_file_name_already_taken_gets_a_number() -> None:
    assert capabilities_path("apps", {"apps.capabilities.txt"}) == "apps.capabilities-2.txt"
    assert capabilities_path("apps", set()) == "apps.capabilities.txt"


def test_when_nothing_qualifies_one_new_empty_target_is_proposed() -> None:
    proposal = propose(
        {
            "test/objects.yaml": THREE + b"---\n" + objects("d", "e"),
            "test/more.yaml": objects("f"),
            "test/last.yaml": objects("g"),
            "cluster/notes.md": "taken\n",  # the first choice of path exists
            "README.md": "a repository\n",
        }
    )
    assert proposal.empty and proposal.looks_like_gitops
    (target,) = proposal.targets
    assert (target.candidate.name, target.candidate.path) == ("cluster-2", "cluster-2")
    assert sorted(proposal.files) == [
        ".ichor.yaml",
        "cluster-2/.gittargetignore",
        "cluster-2/README.md",
    ]
    assert target.report is not None and target.report.verdict is Verdict.ACCEPTED
    assert [x.path for x in proposal.left_out] == ["test"]
    assert "a new folder" in proposal.files[".ichor.yaml"].decode()


def test_a_repository_with_no_kubernetes_at_all_is_told_apart() -> None:
    proposal = propose({"README.md": "hello\n", "ci.yaml": "jobs: {}\n"})
    assert proposal.empty and not proposal.looks_like_gitops


SOPS_RULES = """\
creation_rules:
  - path_regex: legacy/.*\\.yaml$
    pgp: OLDFINGERPRINT
  - path_regex: .*\\.sops\\.yaml$
    encrypted_regex: ^(data|stringData)$
    age: age1repositoryrecipient
"""


def test_the_empty_target_gets_the_repository_s_sops_recipients() -> None:
    proposal = propose({".sops.yaml": SOPS_RULES, "README.md": "x\n"})
    assert proposal.sops == "the rule for this folder in .sops.yaml"
    rules = yaml.safe_load(proposal.files["cluster/.sops.yaml"])
    assert rules == {
        "creation_rules": [
            {
                "path_regex": r"\.sops\.ya?ml$",
                "encrypted_regex": "^(data|stringData)$",
                "age": "age1repositoryrecipient",
            }
        ]
    }
    (target,) = proposal.targets
    assert target.report is not None and target.report.verdict is Verdict.ACCEPTED


def test_without_a_sops_config_the_recipients_of_an_encrypted_file_are_used() -> None:
    encrypted = (
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata:\n  a: ENC[AES256_GCM,data:x]\n"
        "sops:\n  age:\n    - recipient: age1fromthefile\n      enc: x\n  pgp: []\n"
    )
    proposal = propose({"secrets/s.sops.yaml": encrypted})
    assert proposal.sops == "the encrypted file secrets/s.sops.yaml"
    assert yaml.safe_load(proposal.files["cluster/.sops.yaml"])["creation_rules"][0]["age"] == (
        "age1fromthefile"
    )


def test_sops_without_recipients_is_said() -> None:
    proposal = propose({".sops.yaml": "creation_rules: []\n", "x/a.yaml": objects("a")})
    assert proposal.sops is None and proposal.sops_unknown
    assert "cluster/.sops.yaml" not in proposal.files
