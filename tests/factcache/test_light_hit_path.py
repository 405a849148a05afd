"""What a warm preflight reads without hashlib, pathlib or dataclasses answers what those did:
the fact cache's blake2b and the snapshot's sha256 from CPython's own modules are hashlib's, and
the ``str`` path helpers of the knowledge base and the catalog name the files the ``Path`` ones
name (tests/factcache/test_verdict_cache.py holds a hit to importing none of them)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec

from stackcheck import factcache
from stackcheck.catalog import paths as catalog_paths
from stackcheck.knowledge import paths as knowledge_paths
from stackcheck.models.snapshot import snapshot_digest
from tests.factories import make_snapshot


def test_the_fact_cache_digest_is_hashlibs_blake2b():
    parts = ("ab", b"c\x00", {"z": [1, 2], "a": None}, ["é", 3])
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        if not isinstance(data, bytes):
            data = json.dumps(part, sort_keys=True, separators=(",", ":")).encode()
        h.update(b"%d:" % len(data) + data)
    assert factcache.digest(*parts) == h.hexdigest()


def test_the_snapshot_digest_is_hashlibs_sha256():
    snap = make_snapshot()
    expected = hashlib.sha256(msgspec.json.encode(snap, order="sorted")).hexdigest()
    assert snapshot_digest(snap) == "sha256:" + expected


def test_the_path_constants_are_what_they_were():
    here = Path(knowledge_paths.__file__).parent
    assert here / "data" == knowledge_paths.DATA_DIR and knowledge_paths.DATA_DIR.is_dir()
    assert Path("requirements") / "stackcheck-rules" == knowledge_paths.RULES_DIR
    assert Path("requirements") / "environment-profiles.json" == catalog_paths.REGISTRY_PATH
    assert Path(catalog_paths.__file__).parent / "builtin" == catalog_paths.BUILTIN_DIR
    assert catalog_paths.builtin_files() == sorted(catalog_paths.BUILTIN_DIR.glob("*.json"))
    assert catalog_paths.builtin_names() == [str(p) for p in catalog_paths.builtin_files()] != []


def test_the_registry_found_above_a_symlinked_directory(tmp_path):
    team = tmp_path / "team"
    (team / "requirements").mkdir(parents=True)
    (team / "requirements" / "environment-profiles.json").write_text("{}")
    (team / "a" / "b").mkdir(parents=True)
    os.symlink(team / "a" / "b", tmp_path / "link")
    for cwd in (team, team / "a" / "b", tmp_path / "link"):
        found = catalog_paths.find_registry(cwd)
        assert found == (team / "requirements" / "environment-profiles.json").resolve()
        assert catalog_paths.find_registry_name(cwd) == str(found)
    assert catalog_paths.find_registry(tmp_path) is None
    assert catalog_paths.find_registry_name(tmp_path) is None


def test_the_extra_rule_paths(tmp_path, monkeypatch):
    (tmp_path / "requirements" / "stackcheck-rules").mkdir(parents=True)
    (tmp_path / "deep").mkdir()
    monkeypatch.setenv(knowledge_paths.RULES_ENV, os.pathsep.join(["x.json", "r/", "r", " ", "x.json"]))
    names = knowledge_paths.extra_rule_names(tmp_path / "deep")
    rules = str((tmp_path / "requirements" / "stackcheck-rules").resolve())
    assert names == ("x.json", "r/", "r", rules)  # as given: two spellings of r are both stat'ed
    assert knowledge_paths.extra_rule_paths(tmp_path / "deep") == (Path("x.json"), Path("r"), Path(rules))
    monkeypatch.delenv(knowledge_paths.RULES_ENV)
    assert knowledge_paths.extra_rule_names(tmp_path.parent) == ()


def test_the_data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("STACKCHECK_KNOWLEDGE_DIR", raising=False)
    assert knowledge_paths.data_dir_name() == str(knowledge_paths.DATA_DIR)
    assert knowledge_paths.data_dir() == knowledge_paths.DATA_DIR
    monkeypatch.setenv("STACKCHECK_KNOWLEDGE_DIR", str(tmp_path))
    assert knowledge_paths.data_dir() == Path(knowledge_paths.data_dir_name()) == tmp_path
