"""The lock file: exact versions, hashes and the source of every package of an environment,
under a header naming the profile (and its digest), the platform, Python and the torch build it
is valid for; sealed by a digest over all of it, so an edited lock is refused.

Also: the hashed requirements a restore installs (no resolution), and the drift of a live
environment from a lock (added, removed, changed).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

import msgspec

from stackcheck.errors import InputError
from stackcheck.models.snapshot import Snapshot, normalize_name

__all__ = ["LOCK_SCHEMA_VERSION", "Drift", "Lock", "LockHeader", "LockedPackage", "drift", "load_lock"]

LOCK_SCHEMA_VERSION = "1.0"
# what an installer seeds into a new environment; ignored in drift unless the lock names it
SEED_PACKAGES = frozenset({"pip", "setuptools", "wheel"})


class LockedPackage(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    name: str
    version: str
    hashes: list[str]  # sha256 hex digests of the files the lock accepts (one per wheel)
    url: str = ""  # the file it was resolved to (credentials removed)
    index: str = ""  # the index or find-links source that served it
    via: list[str] = []  # what requires it ("-r" for the profile's own requirements)


class LockHeader(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    profile: str
    profile_digest: str
    system: str  # Linux | Darwin | Windows
    machine: str
    python: str  # "3.11"
    implementation: str = "CPython"
    torch_build: str = ""  # cpu | cu126 | "" (no torch)
    torch_index: str = ""
    installer: str = ""
    sources: list[str] = []  # the index options the resolution used
    stackcheck: str = ""


class Lock(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    schema_version: str = LOCK_SCHEMA_VERSION
    header: LockHeader
    packages: list[LockedPackage] = []
    digest: str = ""  # sha256 of the lock without this field

    def sealed(self) -> Lock:
        return msgspec.structs.replace(self, digest=_digest(self))

    def encode(self) -> bytes:
        return msgspec.json.format(msgspec.json.encode(self), indent=1) + b"\n"

    def requirements(self) -> str:
        """Hashed pins, one per package: what a restore installs, with no resolution."""
        return "".join(
            f"{p.name}=={p.version} " + " ".join(f"--hash=sha256:{h}" for h in p.hashes) + "\n"
            for p in self.packages
        )

    def versions(self) -> dict[str, str]:
        return {normalize_name(p.name): p.version for p in self.packages}


def _digest(lock: Lock) -> str:
    body = msgspec.to_builtins(msgspec.structs.replace(lock, digest=""), order="sorted")
    return "sha256:" + hashlib.sha256(msgspec.json.encode(body)).hexdigest()


_MAX_LOCK_BYTES = 32 * 2**20


def load_lock(path: str) -> Lock:
    """A lock file, validated and its digest checked: InputError naming the file and field
    otherwise (a corrupt file, an edited one)."""
    from stackcheck.fileio import decode_json, read_bytes, source_name

    try:
        if os.path.getsize(path) > _MAX_LOCK_BYTES:
            raise InputError(
                f"{source_name(path)}: larger than {_MAX_LOCK_BYTES >> 20} MiB (expected a lock)"
            )
    except OSError:
        pass  # read_bytes names the failure
    lock = decode_json(read_bytes(path, "lock"), Lock, source_name(path), "lock")
    if lock.schema_version != LOCK_SCHEMA_VERSION:
        raise InputError(
            f"{source_name(path)}: schema_version: {lock.schema_version!r} (expected {LOCK_SCHEMA_VERSION!r})"
        )
    for i, p in enumerate(lock.packages):
        if not p.hashes or any(len(h) != 64 or h.strip("0123456789abcdef") for h in p.hashes):
            raise InputError(f"{source_name(path)}: packages[{i}].hashes: expected sha256 hex digests")
    if lock.digest != _digest(lock):
        raise InputError(
            f"{source_name(path)}: digest: the lock was changed after it was written (its digest does not "
            "match its content); write a new one with `stackcheck env lock`"
        )
    return lock


@dataclass
class Drift:
    added: list[tuple[str, str]] = field(default_factory=list)  # (name, installed version)
    removed: list[tuple[str, str]] = field(default_factory=list)  # (name, locked version)
    changed: list[tuple[str, str, str]] = field(default_factory=list)  # (name, locked, installed)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def lines(self) -> list[str]:
        return [
            *(f"+ {n} {v} (not in the lock)" for n, v in self.added),
            *(f"- {n} {v} (locked, not installed)" for n, v in self.removed),
            *(f"~ {n} {locked} -> {have}" for n, locked, have in self.changed),
        ]

    def to_json(self) -> dict:
        return {
            "added": [{"name": n, "installed": v} for n, v in self.added],
            "removed": [{"name": n, "locked": v} for n, v in self.removed],
            "changed": [{"name": n, "locked": a, "installed": b} for n, a, b in self.changed],
        }


def installed_versions(snapshot: Snapshot) -> dict[str, str]:
    """The importable distributions of a snapshot, by normalized name."""
    out: dict[str, str] = {}
    for d in snapshot.packages.distributions:
        if not d.shadowed:
            out.setdefault(normalize_name(d.name), d.version)
    return out


def drift(lock: Lock, installed: dict[str, str]) -> Drift:
    """How ``installed`` (normalized name → version) differs from ``lock``; the packages an
    installer seeds (pip, setuptools, wheel) count only when the lock names them."""
    locked = lock.versions()
    out = Drift()
    for name in sorted(set(installed) | set(locked)):
        have, want = installed.get(name), locked.get(name)
        if want is None and have is not None:
            if name not in SEED_PACKAGES:
                out.added.append((name, have))
        elif have is None and want is not None:
            out.removed.append((name, want))
        elif have != want and have is not None and want is not None:
            out.changed.append((name, want, have))
    return out
