"""The lock format: sealed by a digest, validated on load, drift computed exactly."""

from __future__ import annotations

import json

import pytest

from stackcheck.errors import InputError
from stackcheck.provision.lock import Lock, LockedPackage, LockHeader, drift, load_lock

H = "a" * 64


def sample() -> Lock:
    header = LockHeader(
        profile="P", profile_digest="sha256:x", system="Linux", machine="x86_64", python="3.11"
    )
    packages = [
        LockedPackage(name="app", version="1.0", hashes=[H], via=["-r"]),
        LockedPackage(name="helper", version="1.2", hashes=[H, "b" * 64], via=["app"]),
    ]
    return Lock(header=header, packages=packages).sealed()


def test_sealed_lock_round_trips(tmp_path):
    path = tmp_path / "l.json"
    path.write_bytes(sample().encode())
    assert load_lock(str(path)) == sample()
    assert sample().requirements() == (
        f"app==1.0 --hash=sha256:{H}\nhelper==1.2 --hash=sha256:{H} --hash=sha256:{'b' * 64}\n"
    )


def test_edited_lock_is_refused(tmp_path):
    data = json.loads(sample().encode())
    data["packages"][0]["version"] = "1.1"
    path = tmp_path / "l.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as exc:
        load_lock(str(path))
    assert str(exc.value) == (
        f"{path}: digest: the lock was changed after it was written (its digest does not match its content); "
        "write a new one with `stackcheck env lock`"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty file, expected a lock (JSON)"),
        ("{", "truncated JSON, expected a complete lock"),
        ('{"packages": []}', "Object missing required field `header` (in a lock)"),
        ("[1]", "Expected `object`, got `array` (in a lock)"),
        ('{"schema_version": "9", "header": {"profile": "P", "profile_digest": "", "system": "",'
         ' "machine": "", "python": ""}}', "schema_version: '9' (expected '1.0')"),
    ],
)  # fmt: skip
def test_corrupt_lock_is_one_line_naming_the_file(tmp_path, text, message):
    path = tmp_path / "l.json"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        load_lock(str(path))
    assert str(exc.value) == f"{path}: {message}"


def test_bad_hash_is_named(tmp_path):
    lock = sample()
    lock.packages[1].hashes = ["xyz"]
    path = tmp_path / "l.json"
    path.write_bytes(lock.sealed().encode())
    with pytest.raises(InputError, match=r"packages\[1\]\.hashes: expected sha256 hex digests$"):
        load_lock(str(path))


def test_drift_is_exact_and_ignores_seeded_installers():
    found = drift(sample(), {"app": "1.0", "helper": "1.3", "extra": "2", "pip": "25.0"})
    assert (found.added, found.removed, found.changed) == ([("extra", "2")], [], [("helper", "1.2", "1.3")])
    assert found.lines() == ["+ extra 2 (not in the lock)", "~ helper 1.2 -> 1.3"]
    gone = drift(sample(), {"app": "1.0"})
    assert gone.removed == [("helper", "1.2")] and not gone.added and not gone.changed
    assert not drift(sample(), {"app": "1.0", "helper": "1.2", "setuptools": "80"})
