"""Detection a team would accept (issue 22 item 2): folders the gate would refuse with no fix
that works are not proposed, environments are split, test data and tooling skipped, and what
was left out is said with why."""

from __future__ import annotations

import pytest

from bot.git.snapshot import Snapshot
from bot.onboarding import skip
from bot.onboarding.detect import Candidate, LeftOut, detect
from tests.onboarding.test_detect import THREE, objects, paths


def detected(files: dict[str, bytes]) -> tuple[list[str], dict[str, LeftOut]]:
    found = detect(Snapshot.from_files(files))
    return paths(found.candidates), {x.path: x for x in found.left_out}


@pytest.mark.parametrize(
    ("folder", "reason"),
    [
        ("test", skip.TEST_DATA),
        ("Tests", skip.TEST_DATA),
        ("pkg/testdata", skip.TEST_DATA),
        ("e2e", skip.TEST_DATA),
        ("examples", skip.TEST_DATA),
        ("docs", skip.TEST_DATA),
        ("hack", skip.TOOLING),
        ("vendor", skip.TOOLING),
        ("charts", skip.CHART),
        (".archive", skip.HIDDEN),
    ],
)
def test_test_data_tooling_and_charts_are_skipped_and_said(folder: str, reason: str) -> None:
    files = {f"{folder}/{n}.yaml": objects(n) for n in ("a", "b", "c")}
    files["deploy/objects.yaml"] = THREE
    found, left = detected(files)
    assert found == ["deploy"]
    assert left[folder].reason == reason
    # Nothing below a skipped folder is proposed either.
    files = {f"{folder}/x/{n}.yaml": objects(n) for n in ("a", "b", "c")}
    assert detected(files)[0] == []


def test_a_skipped_folder_with_few_yaml_files_is_not_listed() -> None:
    _, left = detected({"hack/kind.yaml": objects("a"), "deploy/objects.yaml": THREE})
    assert "hack" not in left


def test_environments_that_define_the_same_objects_are_split() -> None:
    same = objects("web", "api", "db", namespace="shop")
    files = {"clusters/eu-1/objects.yaml": same, "clusters/us-1/objects.yaml": same}
    found, left = detected(files)
    assert found == ["clusters/eu-1", "clusters/us-1"]
    assert left["clusters"].parts == ("clusters/eu-1", "clusters/us-1")
    assert "3 defined more than once" in left["clusters"].reason


def test_folders_that_share_a_namespace_or_two_stay_one_target() -> None:
    # Apps of one cluster that both declare a Namespace: a real duplicate, with a real fix.
    namespace = b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n---\n"
    files = {
        "apps/web/objects.yaml": namespace + objects("w1", "w2", "w3", namespace="shop"),
        "apps/api/objects.yaml": namespace + objects("a1", "a2", "a3", namespace="shop"),
    }
    assert detected(files)[0] == ["apps"]


def test_environments_by_name_are_split_however_few_their_objects() -> None:
    files = {
        "clusters/prod/objects.yaml": objects("a"),
        "clusters/staging/objects.yaml": objects("b", "c"),
        "clusters/shared/objects.yaml": objects("d"),
    }
    found, left = detected(files)
    # shared/ is no environment, and too small to qualify on its own: it is left unguarded.
    assert found == ["clusters/prod", "clusters/staging"]
    assert left["clusters"].reason == "its folders are environments, each a target of its own"


def test_overlays_of_one_base_are_not_environments_of_their_own() -> None:
    files = {
        "apps/base/kustomization.yaml": b"resources: [objects.yaml]\n",
        "apps/base/objects.yaml": THREE,
        "apps/production/kustomization.yaml": b"resources: [../base]\nnamespace: prod\n",
        "apps/staging/kustomization.yaml": b"resources: [../base]\nnamespace: staging\n",
        "apps/production/extra.yaml": objects("p"),
        "apps/staging/extra.yaml": objects("s"),
    }
    assert detected(files)[0] == ["apps"]


def test_a_folder_whose_kustomization_reaches_outside_it_is_never_proposed() -> None:
    files = {
        "base/objects.yaml": objects("x"),
        "deploy/kustomization.yaml": b"resources: [../base, objects.yaml]\n",
        "deploy/objects.yaml": THREE,
        "other/objects.yaml": THREE,
    }
    found, left = detected(files)
    assert found == ["other"]
    assert left["deploy"] == LeftOut(
        "deploy",
        "its kustomization lists a resource outside the folder",
        "deploy/kustomization.yaml",
    )
    patch = {**files, "deploy/kustomization.yaml": b"patches:\n  - path: ../base/p.yaml\n"}
    assert "patch outside" in detected(patch)[1]["deploy"].reason
    remote = {**files, "deploy/kustomization.yaml": b"resources: [github.com/x/y//z]\n"}
    assert detected(remote)[1]["deploy"].reason == "its kustomization builds a remote base"


def test_below_a_folder_that_reaches_out_deeper_down_its_other_parts_are_proposed() -> None:
    files = {
        "k8s/apps/objects.yaml": THREE,
        "k8s/overlay/kustomization.yaml": b"resources: [../../base]\n",
        "k8s/overlay/objects.yaml": objects("d", "e", "f"),
        "base/objects.yaml": objects("x"),
    }
    found, left = detected(files)
    assert found == ["k8s/apps"]
    assert left["k8s"].parts == ("k8s/apps", "k8s/overlay")
    # When the folder's own kustomization reaches out, the folders below are its pieces: only
    # the repository root, the last resort, holds the whole build.
    files["k8s/kustomization.yaml"] = b"resources: [../base, apps]\n"
    found, left = detected(files)
    assert found == [""]
    assert left["k8s"].parts == ()


def test_objects_named_with_substitution_variables_are_a_template() -> None:
    files = {
        "components/db/objects.yaml": objects("${APP}-db", "${APP}-cache", "x"),
        "apps/objects.yaml": THREE,
    }
    found, left = detected(files)
    assert found == ["apps"]
    assert "substitution variables" in left["components/db"].reason
    assert left["components/db"].where == "components/db/objects.yaml"


def test_a_kustomize_component_is_not_a_target_of_its_own() -> None:
    component = b"apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
    files = {
        "components/common/kustomization.yaml": component + b"resources: [objects.yaml]\n",
        "components/common/objects.yaml": THREE,
    }
    found, left = detected(files)
    assert found == []
    assert "Component" in left["components"].reason
    assert left["components/common"].where == "components/common/kustomization.yaml"
    # Listed by a kustomization of the same folder, it is built there: the fix renders that.
    files["components/kustomization.yaml"] = b"components: [common]\n"
    assert detected(files)[0] == ["components"]


def test_the_root_is_refused_when_it_uses_types_nothing_serves() -> None:
    crs = b"".join(
        f"---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w{i}\n".encode()
        for i in range(3)
    )
    found = detect(Snapshot.from_files({"widgets.yaml": crs}))
    assert found.candidates == ()
    (left,) = found.left_out
    assert left.path == "" and "capabilities file" in left.reason
    assert detect(Snapshot.from_files({"objects.yaml": THREE})).candidates == (
        Candidate("root", "", 3, 3, False),
    )
