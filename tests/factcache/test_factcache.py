"""The fact cache's file: what it keeps, where, for whom, and that a bad file is only a miss."""

from __future__ import annotations

import json
import os
import stat

import pytest

from stackcheck import cachedir, factcache


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("STACKCHECK_NO_CACHE", raising=False)
    return tmp_path / "cache"


def test_stored_facts_come_back_under_their_key_only(root):
    assert factcache.store(str(root), "facts/x.json", ["k", 1], {"a": [1, 2]}) is True
    assert factcache.load(str(root), "facts/x.json", ["k", 1]) == {"a": [1, 2]}
    assert factcache.load(str(root), "facts/x.json", ("k", 1)) == {"a": [1, 2]}, (
        "a tuple key is the JSON list"
    )
    assert factcache.load(str(root), "facts/x.json", ["k", 2]) is None
    assert factcache.load(str(root), "facts/other.json", ["k", 1]) is None
    assert json.loads((root / "facts" / "x.json").read_text()) == {
        "stackcheck_cache": factcache.FORMAT,
        "key": ["k", 1],
        "entries": {"a": [1, 2]},
    }


def test_files_are_for_their_owner_only_and_leave_no_temporary(root):
    factcache.store(str(root), "facts/x.json", "k", [1])
    assert stat.S_IMODE(os.stat(root / "facts" / "x.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(root / "facts").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert sorted(os.listdir(root / "facts")) == ["x.json"]


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe binary",
        b"[1, 2]",
        b'{"entries": {"a": 1}}',  # the shape of another program's file: no format, no key
        b'{"stackcheck_cache": 99, "key": "k", "entries": 1}',  # another format
        b'{"stackcheck_cache": 1, "key": "other", "entries": 1}',
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the JSON parser recurses
    ],
)
def test_a_corrupt_or_foreign_file_is_a_miss_and_is_rewritten(root, content):
    (root / "facts").mkdir(parents=True)
    (root / "facts" / "x.json").write_bytes(content)
    assert factcache.load(str(root), "facts/x.json", "k") is None
    assert factcache.store(str(root), "facts/x.json", "k", {"fresh": True})
    assert factcache.load(str(root), "facts/x.json", "k") == {"fresh": True}


def test_a_file_of_another_user_a_symlink_or_a_fifo_is_not_read(root, tmp_path, monkeypatch):
    factcache.store(str(root), "facts/x.json", "k", 1)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(root / "facts" / "x.json").st_uid + 1)
    assert factcache.load(str(root), "facts/x.json", "k") is None
    monkeypatch.undo()
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(root))
    elsewhere = tmp_path / "planted.json"
    elsewhere.write_text(json.dumps({"stackcheck_cache": factcache.FORMAT, "key": "k", "entries": 2}))
    (root / "facts" / "link.json").symlink_to(elsewhere)
    assert factcache.load(str(root), "facts/link.json", "k") is None
    os.mkfifo(root / "facts" / "fifo.json")
    assert factcache.load(str(root), "facts/fifo.json", "k") is None  # returns at once: never blocks


def test_a_file_over_the_size_bound_is_a_miss(root, monkeypatch):
    factcache.store(str(root), "facts/x.json", "k", "y" * 100)
    monkeypatch.setattr(factcache, "MAX_BYTES", 50)
    assert factcache.load(str(root), "facts/x.json", "k") is None


def test_no_cache_reads_and_writes_nothing(root, monkeypatch):
    factcache.store(str(root), "facts/x.json", "k", 1)
    monkeypatch.setenv("STACKCHECK_NO_CACHE", "1")
    assert cachedir.cache_root() is None
    assert factcache.load(cachedir.cache_root(), "facts/x.json", "k") is None
    assert factcache.store(cachedir.cache_root(), "facts/y.json", "k", 1) is False
    assert not (root / "facts" / "y.json").exists()


def test_an_unwritable_cache_is_only_a_miss(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    root = str(blocker / "cache")  # below a regular file
    assert factcache.store(root, "facts/x.json", "k", 1) is False
    assert factcache.load(root, "facts/x.json", "k") is None
    assert factcache.store(str(tmp_path), "facts/x.json", "k", {1, 2}) is False  # not JSON-able
    assert sorted(os.listdir(tmp_path / "facts")) == [], "no temporary file is left"


def test_where_the_cache_lives(tmp_path, monkeypatch):
    monkeypatch.delenv("STACKCHECK_NO_CACHE", raising=False)
    monkeypatch.delenv("STACKCHECK_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cachedir.cache_root() == str(tmp_path / "xdg" / "stackcheck")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("LOCALAPPDATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cachedir.cache_root() == str(tmp_path / "home" / ".cache" / "stackcheck")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "mine"))
    assert cachedir.cache_root() == str(tmp_path / "mine")


def test_digest_tells_parts_apart():
    assert factcache.digest("ab", "c") != factcache.digest("a", "bc")
    assert factcache.digest(b"x", {"b": 1, "a": 2}) == factcache.digest(b"x", {"a": 2, "b": 1})
    assert factcache.digest("x") == factcache.digest(b"x")
    assert len(factcache.digest()) == 32


def test_typed_facts_are_checked_as_they_are_read(root):
    import msgspec

    class Row(msgspec.Struct, array_like=True):
        name: str
        size: int

    typed = dict[str, list[Row]]
    factcache.store(str(root), "facts/t.json", "k", {"a": [["x", 1]]})
    assert factcache.load(str(root), "facts/t.json", "k", typed) == {"a": [Row("x", 1)]}
    assert factcache.load(str(root), "facts/t.json", "other", typed) is None
    factcache.store(str(root), "facts/t.json", "k", {"a": [["x", "one"]]})  # another shape
    assert factcache.load(str(root), "facts/t.json", "k", typed) is None
    assert factcache.load(str(root), "facts/t.json", "k") == {"a": [["x", "one"]]}
    (root / "facts" / "t.json").write_text("{torn")
    assert factcache.load(str(root), "facts/t.json", "k", typed) is None
