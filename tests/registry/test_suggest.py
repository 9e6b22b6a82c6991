"""``suggest_capabilities``: the capabilities file a target needs, each entry with its source."""

from __future__ import annotations

from bot.registry.capabilities import Capabilities, parse_capabilities
from bot.registry.catalog import CatalogProject, CatalogType, CatalogVersion, CrdCatalog
from bot.registry.crd import CrdFacts, CrdVersion
from bot.registry.discovery import ServedType
from bot.registry.suggest import Origin, suggest_capabilities

FLUX = CatalogProject(
    "flux-helm-controller", "fluxcd/helm-controller", "v1.6.1", "a" * 40, ("crds",), "Apache-2.0"
)
GADGET = CatalogProject("gadgets", "example/gadgets", "v2.0.0", "b" * 40, ("crds",), "MIT")
CATALOG = CrdCatalog(
    (FLUX, GADGET),
    (
        CatalogType(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            "helmreleases",
            "Namespaced",
            (CatalogVersion("v2", True, True), CatalogVersion("v2beta1", False, False)),
            FLUX.name,
        ),
        CatalogType(
            "example.com",
            "Gadget",
            "gadgets",
            "Cluster",
            (CatalogVersion("v1", True, True),),
            GADGET.name,
        ),
    ),
)


def crd(group: str, kind: str, plural: str, *versions: tuple[str, bool]) -> CrdFacts:
    return CrdFacts(
        f"{plural}.{group}",
        group,
        kind,
        plural,
        "Namespaced",
        tuple(CrdVersion(name, served, False, None) for name, served in versions),
    )


def test_each_type_comes_from_the_first_source_that_knows_it() -> None:
    recorded = Capabilities(
        (
            ServedType(
                "example.com", "v1", "Gadget", "gadgets", "Cluster", ("get", "list", "watch"), ()
            ),
        ),
        form="api-resources",
    )
    repository = [("crds/widgets.yaml", crd("example.com", "Widget", "widgets", ("v1", True)))]
    suggestion = suggest_capabilities(
        [
            ("apps", "v1", "Deployment"),  # built in: no entry
            ("example.com", "v1", "Gadget"),  # the recording wins over the catalog
            ("example.com", "v1", "Widget"),  # a CRD elsewhere in the repository
            ("helm.toolkit.fluxcd.io", "v2", "HelmRelease"),  # the catalog
            ("helm.toolkit.fluxcd.io", "v2beta1", "HelmRelease"),  # the catalog: not served
            ("nowhere.io", "v1", "Thing"),  # nothing knows it
        ],
        catalog=CATALOG,
        repository_crds=repository,
        recorded=recorded,
        recorded_name="caps.txt",
        target="clusters/prod",
    )
    found = {t.name: t for t in suggestion.types}
    assert sorted(found) == [
        "example.com/v1 Gadget",
        "example.com/v1 Widget",
        "helm.toolkit.fluxcd.io/v2 HelmRelease",
        "helm.toolkit.fluxcd.io/v2beta1 HelmRelease",
        "nowhere.io/v1 Thing",
    ]
    assert (found["example.com/v1 Gadget"].origin, found["example.com/v1 Gadget"].source) == (
        Origin.RECORDED,
        "caps.txt",
    )
    widget = found["example.com/v1 Widget"]
    assert widget.origin is Origin.REPOSITORY
    assert widget.source == "CustomResourceDefinition widgets.example.com at crds/widgets.yaml"
    release = found["helm.toolkit.fluxcd.io/v2 HelmRelease"]
    assert release.origin is Origin.CATALOG and release.project == FLUX
    assert release.source == "catalog: fluxcd/helm-controller@v1.6.1 (Apache-2.0)"
    old = found["helm.toolkit.fluxcd.io/v2beta1 HelmRelease"]
    assert not old.found
    assert (
        old.note
        == "the catalog's fluxcd/helm-controller@v1.6.1 serves HelmRelease as v2, not v2beta1"
    )
    assert not found["nowhere.io/v1 Thing"].found and found["nowhere.io/v1 Thing"].note is None
    assert [t.name for t in suggestion.missing] == [
        "helm.toolkit.fluxcd.io/v2beta1 HelmRelease",
        "nowhere.io/v1 Thing",
    ]
    # Every written entry makes its type followable once the file is in place.
    assert {t.summary for t in suggestion.written} == {"followable"}


def test_the_text_is_a_capabilities_file_naming_each_source() -> None:
    repository = [("crds/widgets.yaml", crd("example.com", "Widget", "widgets", ("v1", True)))]
    suggestion = suggest_capabilities(
        [("example.com", "v1", "Widget"), ("helm.toolkit.fluxcd.io", "v2", "HelmRelease")],
        catalog=CATALOG,
        repository_crds=repository,
        target="clusters/prod",
    )
    read = parse_capabilities(suggestion.text.encode())
    assert read.form == "api-resources"
    assert sorted((t.group, t.version, t.kind, t.resource, t.scope) for t in read.types) == [
        ("example.com", "v1", "Widget", "widgets", "Namespaced"),
        ("helm.toolkit.fluxcd.io", "v2", "HelmRelease", "helmreleases", "Namespaced"),
    ]
    lines = suggestion.text.splitlines()
    assert lines[0].startswith("# The capabilities file of the target clusters/prod")
    header = next(i for i, line in enumerate(lines) if line.startswith("NAME"))
    assert lines[header + 1 :] == [
        "# from CustomResourceDefinition widgets.example.com at crds/widgets.yaml",
        lines[header + 2],
        "# from catalog: fluxcd/helm-controller@v1.6.1 (Apache-2.0)",
        lines[header + 4],
    ]
    assert lines[header + 2].split() == [
        "widgets",
        "example.com/v1",
        "true",
        "Widget",
        "create,delete,deletecollection,get,list,patch,update,watch",
    ]


def test_types_the_target_already_serves_need_no_entry() -> None:
    in_target = crd("example.com", "Widget", "widgets", ("v1", True))
    suggestion = suggest_capabilities(
        [("example.com", "v1", "Widget"), ("", "v1", "ConfigMap")],
        catalog=CATALOG,
        target_crds=[in_target],
    )
    assert suggestion.types == ()
    assert "# Every type the target's objects use is known without this file." in suggestion.text
    assert parse_capabilities(suggestion.text.encode()).types == ()


def test_the_repository_and_the_recording_decide_the_versions_of_what_they_define() -> None:
    # The repository installs a CRD serving only v2: the catalog (serving v1) does not overrule it.
    repository = [("a/gadgets.yaml", crd("example.com", "Gadget", "gadgets", ("v2", True)))]
    suggestion = suggest_capabilities(
        [("example.com", "v1", "Gadget")], catalog=CATALOG, repository_crds=repository
    )
    (gadget,) = suggestion.types
    assert not gadget.found
    assert (
        gadget.note
        == "the repository's CRD gadgets.example.com at a/gadgets.yaml serves v2, not v1"
    )
    recorded = Capabilities(
        (ServedType("example.com", "v2", "Gadget", "gadgets", "Cluster", ("get",), ()),)
    )
    suggestion = suggest_capabilities(
        [("example.com", "v1", "Gadget")], catalog=CATALOG, recorded=recorded, recorded_name="rec"
    )
    (gadget,) = suggestion.types
    assert (gadget.found, gadget.note) == (False, "rec serves Gadget as v2 only")


def test_a_served_false_crd_version_elsewhere_is_not_written() -> None:
    repository = [("x.yaml", crd("example.com", "Widget", "widgets", ("v1", False)))]
    suggestion = suggest_capabilities(
        [("example.com", "v1", "Widget")], catalog=CATALOG, repository_crds=repository
    )
    (widget,) = suggestion.types
    assert (
        widget.note
        == "the repository's CRD widgets.example.com at x.yaml serves no version, not v1"
    )
