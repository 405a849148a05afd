"""The probe's metadata cache never changes an answer: same facts with and without it, and
every kind of change to an installed distribution is seen on the next scan."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from stackcheck.probe import interpreter


def write_dist(site, name, version, *requires, module=True):
    d = site / f"{name}-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s\nbody\n"
        % (name, version, "".join("Requires-Dist: %s\n" % r for r in requires))
    )
    (d / "RECORD").write_text(f"{name}/__init__.py,,\n{d.name}/METADATA,,\n")
    if module:
        (site / name).mkdir(exist_ok=True)
        (site / name / "__init__.py").write_text("")
    return d


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("STACKCHECK_NO_CACHE", raising=False)
    s = tmp_path / "site-packages"
    s.mkdir()
    return s


def scan(site):
    return {d["name"]: d for d in interpreter.packages_facts([str(site)])["distributions"]}


def test_cached_scan_equals_an_uncached_one(site, monkeypatch):
    write_dist(site, "alpha", "1.0", "beta>=2")
    write_dist(site, "beta", "2.1")
    first = interpreter.packages_facts([str(site)])
    assert list((site.parent / "cache" / "metadata").glob("*.json")), "the first scan writes the cache"
    assert interpreter.packages_facts([str(site)]) == first
    monkeypatch.setenv("STACKCHECK_NO_CACHE", "1")
    assert interpreter.packages_facts([str(site)]) == first


def test_rewritten_metadata_same_size_is_seen(site):
    d = write_dist(site, "alpha", "1.0")
    assert scan(site)["alpha"]["version"] == "1.0"
    meta = d / "METADATA"
    text = meta.read_text().replace("Version: 1.0", "Version: 2.0")  # same size
    tmp = d / "METADATA.new"
    tmp.write_text(text)
    os.replace(tmp, meta)  # how installers and editors replace a file
    assert scan(site)["alpha"]["version"] == "2.0"


def test_reinstall_and_removal_are_seen(site):
    write_dist(site, "alpha", "1.0")
    scan(site)
    shutil.rmtree(site / "alpha-1.0.dist-info")
    write_dist(site, "alpha", "1.1")
    assert scan(site)["alpha"]["version"] == "1.1"
    shutil.rmtree(site / "alpha-1.1.dist-info")
    assert "alpha" not in scan(site)


def test_a_deleted_module_is_reported_although_its_metadata_is_cached(site):
    write_dist(site, "alpha", "1.0")
    assert scan(site)["alpha"]["problems"] == []
    shutil.rmtree(site / "alpha")
    assert any("missing" in p for p in scan(site)["alpha"]["problems"])


def test_a_corrupt_cache_file_is_ignored(site):
    write_dist(site, "alpha", "1.0")
    scan(site)
    for f in (site.parent / "cache" / "metadata").glob("*.json"):
        f.write_text("{not json")
    assert scan(site)["alpha"]["version"] == "1.0"
    [f] = (site.parent / "cache" / "metadata").glob("*.json")
    assert json.loads(f.read_text())["entries"], "rewritten after the corrupt read"
