"""The pure gate called directly on in-memory trees: one test per rule of the gate's contract
(roles 1-7, every issue code, identity, kustomization features, placement and the shadow
invariant). The git-backed cases in test_check_cases.py check the same rules through git and
the CLI; these need neither and run in milliseconds."""

from __future__ import annotations

import pytest

from bot.gate.codes import IssueCode, Severity
from bot.gate.policy import GatePolicy, TargetPolicy
from bot.gate.report import Issue, Role, TargetReport, Verdict
from bot.gate.run import run_gate
from tests.conftest import FIXTURES
from tests.support.memory_tree import MemoryTree, check_target

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n"
CM_NS = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\n"
NS = "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n"
SHA = "1" * 40


def kinds(report: TargetReport) -> list[tuple[IssueCode, str]]:
    return [(i.kind, i.path) for i in report.issues]


def only(report: TargetReport, code: IssueCode) -> list[Issue]:
    return [i for i in report.issues if i.kind is code]


def counts(report: TargetReport) -> dict[str, int]:
    return {role.value: n for role, n in report.counts.items() if n}


# Roles 1-7: every entry takes exactly one role, the first match deciding.


def test_role1_symlinks_and_gitlinks_are_refused_unless_ignored() -> None:
    refused = check_target(
        {"t/a.yaml": CM % "a"}, symlinks={"t/link": "../out"}, gitlinks={"t/sub": SHA}
    )
    assert kinds(refused) == [
        (IssueCode.FOREIGN_SYMLINK, "t/link"),
        (IssueCode.FOREIGN_SUBMODULE, "t/sub"),
    ]
    assert refused.verdict is Verdict.REFUSED
    ignored = check_target(
        {"t/.gittargetignore": "link\nsub\n", "t/a.yaml": CM % "a"},
        symlinks={"t/link": "../out"},
        gitlinks={"t/sub": SHA},
    )
    assert ignored.issues == ()
    # The root ignore file itself counts as an operator artifact.
    assert counts(ignored) == {"managed": 1, "ignored": 2, "operator-artifact": 1}


def test_role1_a_symlink_named_like_an_artifact_is_still_a_symlink() -> None:
    report = check_target({"t/real.md": "x\n"}, symlinks={"t/README.md": "real.md"})
    assert kinds(report) == [(IssueCode.FOREIGN_SYMLINK, "t/README.md")]


def test_role2_the_root_ignore_file_is_neither_modelled_nor_refused() -> None:
    report = check_target({"t/.gittargetignore": "# nothing yet\n", "t/a.yaml": CM % "a"})
    assert report.issues == ()
    assert counts(report) == {"managed": 1, "operator-artifact": 1}


def test_role3_artifacts_and_directives_come_before_the_ignore_filter() -> None:
    report = check_target(
        {
            "t/.gittargetignore": "README.md\n.sops.yaml\nkustomization.yaml\n",
            "t/README.md": "# t\n",
            "t/.sops.yaml": "creation_rules: []\n",
            "t/kustomization.yaml": "resources: [a.yaml]\n",
            "t/a.yaml": CM % "a",
        }
    )
    assert counts(report) == {"managed": 1, "operator-artifact": 3, "build-directive": 1}
    # The patterns match entries, so none is unused, yet none of them ignores anything.
    assert report.issues == ()


def test_role4_ignored_files_are_never_refused_and_only_yaml_is_read() -> None:
    tree = MemoryTree(
        {
            "t/.gittargetignore": "/scratch/\n",
            "t/scratch/broken.yaml": "{{{{ not yaml\n",
            "t/scratch/notes.txt": "x\n",
            "t/a.yaml": CM % "a",
        }
    )
    with tree.snapshot() as snapshot:
        (report,) = run_gate(snapshot, GatePolicy(targets=(TargetPolicy("t", "t"),))).targets
    assert report.issues == ()
    assert counts(report) == {"managed": 1, "ignored": 2, "operator-artifact": 1}
    # Ignored YAML is read only by the bounded scan for the ignored-managed-object warning.
    assert "t/scratch/notes.txt" not in tree.reads


def test_role4_an_ignored_directory_cannot_be_reincluded() -> None:
    report = check_target(
        {"t/.gittargetignore": "docs/\n!docs/keep.txt\n", "t/docs/keep.txt": "x\n"}
    )
    assert counts(report) == {"ignored": 1, "operator-artifact": 1}


def test_role5_yaml_is_recognised_by_its_lower_case_extension() -> None:
    report = check_target({"t/a.yaml": CM % "a", "t/n/b.yml": CM % "b", "t/C.YAML": CM % "c"})
    assert counts(report) == {"managed": 2, "foreign": 1}
    assert kinds(report) == [(IssueCode.FOREIGN_FILE, "t/C.YAML")]


def test_role6_benign_passengers_come_after_the_ignore_filter() -> None:
    names = [".gitignore", ".gitattributes", ".gitkeep", ".keep", "LICENSE", "LICENCE.txt"]
    names += ["COPYING", "NOTICE.txt", "notes.md", "guide.markdown"]
    files = {f"t/{n}": "x\n" for n in names}
    assert counts(check_target(files)) == {"benign-passenger": len(names)}
    files["t/.gittargetignore"] = "*.md\n"
    assert counts(check_target(files)) == {
        "benign-passenger": len(names) - 1,
        "ignored": 1,
        "operator-artifact": 1,
    }


def test_role7_everything_else_is_foreign_a_nested_ignore_file_too() -> None:
    report = check_target({"t/run.sh": "x\n", "t/sub/.gittargetignore": "x\n"})
    assert kinds(report) == [
        (IssueCode.FOREIGN_FILE, "t/run.sh"),
        (IssueCode.FOREIGN_FILE, "t/sub/.gittargetignore"),
    ]
    assert counts(report) == {"foreign": 2}


# Issue codes (each one at least once).


@pytest.mark.parametrize("pattern", ["*", "**", "/", "*.yaml", "*.yml", "**/*", "**/*.yaml"])
def test_ignore_shadows_managed_for_every_denied_pattern(pattern: str) -> None:
    report = check_target({"t/.gittargetignore": f"{pattern}\n", "t/a.yaml": CM % "a"})
    assert IssueCode.IGNORE_SHADOWS_MANAGED in [i.kind for i in report.issues]
    assert report.verdict is Verdict.REFUSED


def test_invalid_yaml_names_its_line() -> None:
    report = check_target({"t/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n"})
    (issue,) = only(report, IssueCode.INVALID_YAML)
    assert issue.path == "t/bad.yaml" and issue.line is not None


def test_a_duplicate_key_is_invalid_yaml() -> None:
    report = check_target({"t/cm.yaml": (CM % "a") + "kind: Secret\n"})
    assert [i.kind for i in report.issues] == [IssueCode.INVALID_YAML]


def test_non_krm_yaml() -> None:
    report = check_target({"t/values.yaml": "replicas: 2\n", "t/list.yaml": "- a\n"})
    assert sorted(kinds(report)) == [
        (IssueCode.NON_KRM_YAML, "t/list.yaml"),
        (IssueCode.NON_KRM_YAML, "t/values.yaml"),
    ]


def test_invalid_name_for_the_kind_and_a_namespace_where_it_applies() -> None:
    deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: Bad_Name\n"
    role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: 'a:B'}\n"
    report = check_target(
        {
            "t/d.yaml": deployment,
            "t/role.yaml": role,  # RBAC names are path segments
            "t/cm.yaml": CM_NS % ("a", "Bad_NS"),
            "t/pv.yaml": (
                "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: p, namespace: X_}\n"
            ),
        }
    )
    assert kinds(report) == [
        (IssueCode.INVALID_NAME, "t/cm.yaml"),
        (IssueCode.INVALID_NAME, "t/d.yaml"),
    ]
    assert [i.line for i in report.issues] == [3, 4]
    # The API server refuses them, so they are nothing the operator mirrors.
    assert sorted(m.path for m in report.managed) == ["t/pv.yaml", "t/role.yaml"]


def test_a_generate_name_object_is_not_krm_and_says_why() -> None:
    report = check_target(
        {"t/job.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n"}
    )
    (issue,) = report.issues
    assert issue.kind is IssueCode.NON_KRM_YAML and "metadata.generateName 'x-'" in issue.message


def test_impure_managed_file() -> None:
    report = check_target({"t/mixed.yaml": (CM % "a") + "---\nfoo: bar\n"})
    assert kinds(report) == [(IssueCode.IMPURE_MANAGED_FILE, "t/mixed.yaml")]


def test_empty_and_comment_only_files_are_ignored() -> None:
    report = check_target({"t/empty.yaml": "# later\n", "t/a.yaml": CM % "a"})
    assert report.issues == ()


def test_duplicate_identity_the_first_by_path_order_wins() -> None:
    report = check_target({"t/b.yaml": CM_NS % ("x", "web"), "t/a.yaml": CM_NS % ("x", "web")})
    assert kinds(report) == [(IssueCode.DUPLICATE_IDENTITY, "t/b.yaml")]


def test_mixed_managed_allowlisted() -> None:
    directive = "resources: []\n---\n" + CM % "hidden"
    report = check_target({"t/kustomization.yaml": directive})
    assert kinds(report) == [(IssueCode.MIXED_MANAGED_ALLOWLISTED, "t/kustomization.yaml")]


def test_invalid_kustomize_for_what_kustomize_cannot_build() -> None:
    report = check_target(
        {
            "t/kustomization.yaml": "resources:\n  - a.yaml\n  - gone.yaml\n  - a.yaml\n",
            "t/a.yaml": CM % "a",
            "t/sub/kustomization.yaml": "patches: [{path: nowhere.yaml}]\n",
        }
    )
    issues = only(report, IssueCode.INVALID_KUSTOMIZE)
    assert [(i.path, i.line) for i in issues] == [
        ("t/kustomization.yaml", 3),  # names no file
        ("t/kustomization.yaml", 4),  # a.yaml a second time
        ("t/sub/kustomization.yaml", 1),  # no patch file
    ]


def test_a_kustomization_rendering_an_ignored_file_shadows_it() -> None:
    report = check_target(
        {
            "t/.gittargetignore": "# keep it out\nsecret.yaml\n",
            "t/kustomization.yaml": "resources: [cm.yaml, secret.yaml]\n",
            "t/cm.yaml": CM % "a",
            "t/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n",
        }
    )
    (issue,) = report.issues
    assert (issue.kind, issue.path, issue.line, issue.pattern) == (
        IssueCode.IGNORE_SHADOWS_MANAGED,
        "t/.gittargetignore",
        2,
        "secret.yaml",
    )
    assert "t/kustomization.yaml:1 lists as a resource" in issue.message


def test_plaintext_secret_and_its_sops_counterpart() -> None:
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: web}\n"
    sealed = (FIXTURES / "gate/sops/github-auth.enc.age.yaml").read_text()  # real sops output
    report = check_target(
        {
            "t/plain.yaml": secret + "stringData: {password: hunter2}\n",
            "t/sealed.sops.yaml": sealed,
            # A sops key alone is no encryption (issue 21 item 1).
            "t/fake.yaml": secret.replace("db", "db2")
            + "data: {password: 'ENC[AES256_GCM,data:a,type:str]'}\nsops: {version: 3.9.0}\n",
        }
    )
    assert kinds(report) == [
        (IssueCode.PLAINTEXT_SECRET, "t/fake.yaml"),
        (IssueCode.PLAINTEXT_SECRET, "t/plain.yaml"),
    ]
    assert "its sops envelope has no mac" in report.issues[0].message


def test_a_sops_file_without_a_sops_key_is_a_plaintext_secret() -> None:
    report = check_target({"t/cfg.sops.yaml": CM_NS % ("cfg", "web")})
    assert kinds(report) == [(IssueCode.PLAINTEXT_SECRET, "t/cfg.sops.yaml")]


def test_not_followable_for_a_denied_and_an_unknown_type() -> None:
    report = check_target(
        {
            "t/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: web}\n",
            "t/w.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n",
        }
    )
    assert sorted(kinds(report)) == [
        (IssueCode.NOT_FOLLOWABLE, "t/pod.yaml"),
        (IssueCode.NOT_FOLLOWABLE, "t/w.yaml"),
    ]
    (pod,) = [i for i in report.issues if i.path == "t/pod.yaml"]
    assert "denied-by-policy" in pod.message


def test_a_crd_in_the_target_makes_its_type_followable() -> None:
    crd = (
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: widgets.example.com}\nspec:\n  group: example.com\n"
        "  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n"
        "  scope: Namespaced\n  versions:\n"
        "    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n"
    )
    widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: web}\n"
    report = check_target({"t/crd.yaml": crd, "t/w.yaml": widget})
    assert report.issues == ()


def test_file_too_large_is_not_parsed() -> None:
    tree = MemoryTree({"t/big.yaml": "x: " + "y" * 200 + "\n", "t/a.yaml": CM % "a"})
    policy = GatePolicy(targets=(TargetPolicy("t", "t"),), max_yaml_bytes=100)
    with tree.snapshot() as snapshot:
        (report,) = run_gate(snapshot, policy).targets
    assert kinds(report) == [(IssueCode.FILE_TOO_LARGE, "t/big.yaml")]
    assert "t/big.yaml" not in tree.reads


def test_ignored_managed_object_is_a_warning() -> None:
    report = check_target(
        {
            "t/.gittargetignore": "scratch/\n",
            "t/cm.yaml": CM_NS % ("s", "web"),
            "t/scratch/copy.yaml": CM_NS % ("s", "web"),
        }
    )
    (issue,) = report.issues
    assert (issue.kind, issue.path) == (IssueCode.IGNORED_MANAGED_OBJECT, "t/scratch/copy.yaml")
    assert issue.severity is Severity.WARNING
    assert report.verdict is Verdict.ACCEPTED


def test_unused_ignore_pattern_is_a_warning() -> None:
    report = check_target({"t/.gittargetignore": "nothing-here/\n", "t/a.yaml": CM % "a"})
    (issue,) = report.issues
    assert (issue.kind, issue.pattern) == (IssueCode.UNUSED_IGNORE_PATTERN, "nothing-here/")
    assert report.verdict is Verdict.ACCEPTED


def test_empty_target_is_a_warning() -> None:
    report = check_target({"elsewhere/a.yaml": CM % "a"})
    assert kinds(report) == [(IssueCode.EMPTY_TARGET, "t")]
    assert report.verdict is Verdict.ACCEPTED


def test_every_issue_code_has_a_test_here() -> None:
    # The tests above cover these; a new code must get its own in-memory case.
    assert {c.value for c in IssueCode} == {
        "foreign-file", "foreign-symlink", "foreign-submodule", "ignore-shadows-managed",
        "invalid-yaml", "non-krm-yaml", "invalid-name", "impure-managed-file", "duplicate-identity",
        "mixed-managed-allowlisted", "unsupported-kustomize", "invalid-kustomize",
        "plaintext-secret",
        "not-followable", "file-too-large", "ignored-managed-object", "unused-ignore-pattern",
        "empty-target",
    }  # fmt: skip


# Identity (group, kind, namespace, name), with the namespace a kustomization gives.


def test_a_kustomization_namespace_makes_two_objects_one() -> None:
    report = check_target(
        {
            "t/a.yaml": CM_NS % ("x", "web"),
            "t/ns/kustomization.yaml": "namespace: web\nresources: [b.yaml]\n",
            "t/ns/b.yaml": CM % "x",
        }
    )
    assert kinds(report) == [(IssueCode.DUPLICATE_IDENTITY, "t/ns/b.yaml")]


def test_cluster_scoped_objects_ignore_a_namespace() -> None:
    role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r%s}\n"
    report = check_target({"t/a.yaml": role % ", namespace: one", "t/b.yaml": role % ""})
    assert kinds(report) == [(IssueCode.DUPLICATE_IDENTITY, "t/b.yaml")]


def test_a_namespace_reached_by_a_kustomization_is_renamed_by_it() -> None:
    # As kustomize builds it: each folder's `Namespace _` becomes its own namespace.
    distinct = check_target(
        {
            "t/kustomization.yaml": "resources: [a, b]\n",
            "t/a/kustomization.yaml": "namespace: a\nresources: [ns.yaml]\n",
            "t/a/ns.yaml": NS % "_",
            "t/b/kustomization.yaml": "namespace: b\nresources: [ns.yaml]\n",
            "t/b/ns.yaml": NS % "_",
        }
    )
    assert distinct.issues == ()
    clash = check_target(
        {
            "t/kustomization.yaml": "namespace: media\nresources: [ns.yaml, media.yaml]\n",
            "t/ns.yaml": NS % "_",
            "t/media.yaml": NS % "media",
        }
    )
    assert [i.kind for i in clash.issues] == [IssueCode.DUPLICATE_IDENTITY]


# Kustomization features: the accepted set passes, every other field refuses by name.


def test_the_accepted_kustomization_fields_pass() -> None:
    directive = (
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: web\n"
        "resources: [a.yaml]\nimages: [{name: nginx, newTag: '1'}]\nreplicas: []\n"
        "patches: [{path: p.yaml}]\ncommonLabels: {a: b}\nlabels: []\ncommonAnnotations: {}\n"
        "buildMetadata: []\ngeneratorOptions: {}\nsortOptions: {order: legacy}\n"
    )
    report = check_target(
        {
            "t/kustomization.yaml": directive,
            "t/a.yaml": CM % "a",
            "t/p.yaml": "- {op: replace, path: /data, value: {}}\n",
        }
    )
    assert report.issues == ()
    assert counts(report) == {"managed": 2, "build-directive": 1}


@pytest.mark.parametrize(
    ("body", "feature"),
    [
        ("helmCharts: [{name: x}]\n", "helmCharts"),
        ("configMapGenerator: [{name: y}]\n", "configMapGenerator"),
        ("secretGenerator: [{name: y}]\n", "secretGenerator"),
        ("namePrefix: p-\n", "namePrefix"),
        ("nameSuffix: -s\n", "nameSuffix"),
        ("components: [c]\n", "components"),
        ("patchesStrategicMerge: [p.yaml]\n", "patchesStrategicMerge"),
        ("patchesJson6902: [{path: p.yaml}]\n", "patchesJson6902"),
        ("generators: [g.yaml]\n", "generators"),
        ("transformers: [t.yaml]\n", "transformers"),
        ("replacements: [{path: r.yaml}]\n", "replacements"),
        ("vars: [{name: v}]\n", "vars"),
        ("crds: [c.json]\n", "crds"),
        ("openapi: {path: s.json}\n", "openapi"),
        ("configurations: [c.yaml]\n", "configurations"),
        ("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n", "component"),
        ("patches: [{patch: x}]\n", "patches-inline"),
        ("resources: [https://github.com/org/repo//base?ref=v1]\n", "remote-base"),
        ("resources: [\n", "unparseable"),
        ("resources: a-string\n", "unparseable"),
    ],
)
def test_every_other_kustomization_feature_refuses_under_its_code(body: str, feature: str) -> None:
    report = check_target({"t/kustomization.yaml": body})
    (issue,) = only(report, IssueCode.UNSUPPORTED_KUSTOMIZE)
    assert issue.path == "t/kustomization.yaml"
    assert feature in issue.message


def test_a_patch_file_is_build_context_not_a_managed_object() -> None:
    report = check_target(
        {
            "t/kustomization.yaml": "resources: [a.yaml]\npatches: [{path: p.yaml}]\n",
            "t/a.yaml": CM % "a",
            "t/p.yaml": "- {op: add, path: /data, value: {}}\n",
        }
    )
    assert report.issues == ()


# Placement and the shadow invariant: no path the operator writes may be ignored.


def test_a_pattern_over_a_placement_path_shadows_a_managed_object() -> None:
    report = check_target(
        {"t/.gittargetignore": "v1/configmaps/web/\n", "t/cm.yaml": CM_NS % ("s", "web")}
    )
    (issue,) = only(report, IssueCode.IGNORE_SHADOWS_MANAGED)
    assert issue.pattern == "v1/configmaps/web/"
    assert report.verdict is Verdict.REFUSED


def test_placement_follows_the_targets_template() -> None:
    ignore = {"t/.gittargetignore": "v1/configmaps/web/\n", "t/cm.yaml": CM_NS % ("s", "web")}
    other = TargetPolicy("t", "t", placement="{namespace}/{group}/{resource}/{name}.yaml")
    assert IssueCode.IGNORE_SHADOWS_MANAGED not in [
        i.kind for i in check_target(ignore, target=other).issues
    ]
    ignore["t/.gittargetignore"] = "/web/configmaps/\n"
    assert IssueCode.IGNORE_SHADOWS_MANAGED in [
        i.kind for i in check_target(ignore, target=other).issues
    ]


def test_an_ignored_file_on_a_placement_path_is_a_warning() -> None:
    report = check_target(
        {
            "t/.gittargetignore": "/v1/configmaps/web/s.yaml\n",
            "t/cm.yaml": CM_NS % ("s", "web"),
            "t/v1/configmaps/web/s.yaml": "stale: copy\n",
        }
    )
    assert IssueCode.IGNORED_MANAGED_OBJECT in [i.kind for i in report.issues]


def test_issues_come_sorted_by_path_line_and_kind() -> None:
    report = check_target({"t/z.txt": "x\n", "t/a.txt": "x\n", "t/m.yaml": "- a\n"})
    assert [i.path for i in report.issues] == ["t/a.txt", "t/m.yaml", "t/z.txt"]
    assert all(i.severity is Severity.ERROR for i in report.issues)
    assert (report.counts[Role.FOREIGN], report.counts[Role.MANAGED]) == (2, 1)
