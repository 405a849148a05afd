"""`.egg-info` distributions (setuptools' develop installs, old sdist installs, distutils'
single-file form) in the probe: read like importlib.metadata reads them, judged by PKG001."""

from __future__ import annotations

import importlib.metadata

import msgspec
from packaging.requirements import Requirement

from stackcheck.judge import judge
from stackcheck.models.snapshot import Distribution
from stackcheck.probe.interpreter import packages_facts
from tests.factories import make_profile, make_snapshot

REQUIRES_TXT = 'requests>=2\n\n[socks]\nPySocks!=1.5.7\n\n[:python_version < "3.8"]\nimportlib-metadata\n'


def plant(site):
    egg = site / "legacy_pkg-1.2-py3.11.egg-info"
    egg.mkdir(parents=True)
    (egg / "PKG-INFO").write_text(
        "Metadata-Version: 1.2\nName: legacy-pkg\nVersion: 1.2\nRequires-Python: >=3.8\n\nlong text\n"
    )
    (egg / "requires.txt").write_text(REQUIRES_TXT)
    (egg / "top_level.txt").write_text("legacy_pkg\n")
    (site / "legacy_pkg").mkdir()
    (site / "oldfile-0.3-py3.11.egg-info").write_text(
        "Metadata-Version: 1.1\nName: oldfile\nVersion: 0.3\n\n"
    )  # one file
    (site / "broken-0.1.egg-info").mkdir()  # no PKG-INFO


def test_egg_info_distributions_are_read(tmp_path):
    site = tmp_path / "site"
    plant(site)
    facts = packages_facts([str(site)])
    by_name = {d["name"]: d for d in facts["distributions"]}
    assert sorted(by_name) == ["broken", "legacy-pkg", "oldfile"]
    legacy = by_name["legacy-pkg"]
    assert (legacy["version"], legacy["requires_python"], legacy["top_level"], legacy["problems"]) == (
        "1.2",
        ">=3.8",
        ["legacy_pkg"],
        [],
    )
    assert (
        legacy["metadata_dir"] == str(site / "legacy_pkg-1.2-py3.11.egg-info") and legacy["installer"] == ""
    )
    # requires.txt sections become extras and markers, as importlib.metadata reads them
    theirs = next(
        d for d in importlib.metadata.distributions(path=[str(site)]) if d.metadata["Name"] == "legacy-pkg"
    )
    assert [str(Requirement(r)) for r in legacy["requires"]] == [str(Requirement(r)) for r in theirs.requires]
    assert legacy["requires"][1] == 'PySocks!=1.5.7; extra == "socks"'
    oldfile = by_name["oldfile"]
    assert (oldfile["version"], oldfile["requires"], oldfile["top_level"], oldfile["problems"]) == (
        "0.3",
        [],
        [],
        [],
    )
    # no PKG-INFO: named from the folder, and the problem said
    assert (by_name["broken"]["version"], by_name["broken"]["problems"]) == ("0.1", ["missing PKG-INFO"])


def test_egg_info_distribution_satisfies_a_requirement(tmp_path):
    site = tmp_path / "site"
    plant(site)
    dists = [msgspec.convert(d, Distribution) for d in packages_facts([str(site)])["distributions"]]
    snap = make_snapshot(*dists)
    prof = make_profile(requirements=["legacy-pkg>=1.2", "oldfile<0.3"])
    got = {
        c.subject: (c.verdict, c.observed)
        for c in judge(snap, command="preflight", profile=prof).checks
        if c.id == "PKG001"
    }
    assert got == {
        "legacy-pkg": ("ok", "legacy-pkg 1.2"),
        "oldfile": ("blocked", f"oldfile 0.3 (in {site})"),
    }
