"""The installed-distribution index of a snapshot, and PEP 508 requirement evaluation against it.

Markers are evaluated for the *checked* interpreter (from the snapshot), not for the
interpreter running stackcheck, so judging a colleague's snapshot gives their answer.
Requirement strings are parsed lazily and cached: a check pays only for what it reads, and a
run that reads none (a warm ``deps`` run, its graph from :mod:`stackcheck.factcache`) never
imports packaging's requirement and marker parsers.

A pure function of a Snapshot, below the knowledge base and the dependency graph
(:mod:`stackcheck.deps`), which both judge requirements with it.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import msgspec

from stackcheck.models.snapshot import Distribution, Snapshot, normalize_name

if TYPE_CHECKING:
    from packaging.requirements import Requirement
    from packaging.version import Version

__all__ = [
    "DistIndex",
    "RequirementStatus",
    "marker_environment",
    "packaging_requirement",
    "parse_requirement",
    "parse_version",
]

_SYS_PLATFORM = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}
_OS_NAME = {"Linux": "posix", "Darwin": "posix", "Windows": "nt"}


def marker_environment(snapshot: Snapshot) -> dict[str, str]:
    """PEP 508 marker variables of the checked interpreter, from snapshot facts."""
    py = snapshot.python
    plat = snapshot.platform
    version = py.version or ""
    system = plat.system or _system_from_tag(py.platform_tag)
    machine = plat.machine or _machine_from_tag(py.platform_tag)
    return {
        "implementation_name": (py.implementation or "cpython").lower(),
        "implementation_version": version,
        "os_name": _OS_NAME.get(system, "posix"),
        "platform_machine": machine,
        "platform_python_implementation": py.implementation or "CPython",
        "platform_release": plat.kernel,
        "platform_system": system,
        "platform_version": "",
        "python_full_version": version,
        "python_version": ".".join(version.split(".")[:2]),
        "sys_platform": _SYS_PLATFORM.get(system, system.lower()),
        "extra": "",
    }


def _system_from_tag(tag: str) -> str:
    if tag.startswith("linux"):
        return "Linux"
    if tag.startswith("macosx"):
        return "Darwin"
    if tag.startswith("win"):
        return "Windows"
    return ""


def _machine_from_tag(tag: str) -> str:
    return tag.rsplit("-", 1)[-1] if "-" in tag else ""


def parse_version(text: object) -> Version | None:
    """:func:`stackcheck.versions.parse_version`, imported where first used: importing this
    module loads no packaging (a warm ``deps`` run never needs it)."""
    from stackcheck.versions import parse_version as parse

    return parse(text)


# the commonest Requires-Dist, ``name`` or ``name>=1.0,<2`` (no space, extra, URL or marker):
# read without packaging's tokenizer (≈ 1 ms of 296 such on the reference venv); a property
# test holds what it makes equal to packaging's Requirement of the same text
_OP = r"(?:~=|==|!=|<=|>=|<|>)[0-9][0-9A-Za-z.*+!_-]*"
_PLAIN = re.compile(rf"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)((?:{_OP})(?:,{_OP})*)?")


@lru_cache(maxsize=4096)
def parse_requirement(text: str) -> Requirement | None:
    """A PEP 508 requirement, ``None`` when invalid (a version longer than
    :data:`stackcheck.versions.MAX_VERSION_CHARS` included: no operation on it could run)."""
    req = _plain_requirement(text)
    return packaging_requirement(text) if req is None else _bounded(req)


def packaging_requirement(text: str) -> Requirement | None:
    """:func:`parse_requirement` by packaging's parser alone (what it answers for any text)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    return _bounded(req)


def _bounded(req: Requirement) -> Requirement | None:
    from packaging.specifiers import InvalidSpecifier

    from stackcheck import versions

    try:
        versions.parse(req.specifier)
    except InvalidSpecifier:
        return None
    return req


def _plain_requirement(text: str) -> Requirement | None:
    """``Requirement(text)`` for a text of :data:`_PLAIN`'s shape, None for any other (and for
    a specifier packaging refuses: its own parser says so)."""
    plain = _PLAIN.fullmatch(text)
    if plain is None:
        return None
    from packaging.requirements import Requirement
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        specifier = SpecifierSet(plain.group(2) or "")
    except InvalidSpecifier:
        return None
    if not _fields_known(Requirement):
        return None  # a packaging whose Requirement holds more than these: its own parser
    # what Requirement(text) sets for such a text (packaging's own __replace__ builds alike)
    req = Requirement.__new__(Requirement)
    req.name, req.url, req.extras, req.marker = plain.group(1), None, set(), None
    req.specifier = specifier
    return req


_FIELDS = ("extras", "marker", "name", "specifier", "url")  # what _plain_requirement sets


@cache
def _fields_known(cls: type) -> bool:
    """``cls`` (packaging's Requirement) holds exactly :data:`_FIELDS`, as packaging 26 does."""
    return tuple(sorted(getattr(cls, "__slots__", ()))) == _FIELDS


class RequirementStatus(msgspec.Struct, frozen=True):
    """How one requirement fares in an environment."""

    requirement: str
    name: str
    state: str  # satisfied | missing | mismatch | not-applicable (marker false) | invalid
    installed: str | None = None  # installed version, when there is one
    dist: Distribution | None = None

    @property
    def problem(self) -> bool:
        return self.state in ("missing", "mismatch", "invalid")


class DistIndex:
    """Importable distributions of a snapshot by normalized name (shadowed copies excluded)."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.by_name: dict[str, Distribution] = {}
        for dist in snapshot.packages.distributions:
            if not dist.shadowed:
                self.by_name.setdefault(normalize_name(dist.name), dist)
        self._env = marker_environment(snapshot)

    def get(self, name: str) -> Distribution | None:
        return self.by_name.get(normalize_name(name))

    def marker_applies(self, req: Requirement, extras: tuple[str, ...] = ()) -> bool:
        """Whether a requirement's marker holds here (for any of ``extras``; none = no extra)."""
        if req.marker is None:
            return True
        from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName

        try:
            for extra in extras or ("",):
                if req.marker.evaluate({**self._env, "extra": extra}):
                    return True
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName, ValueError):
            return False  # ValueError: a version in the environment too long for int()
        return False

    def evaluate(self, text: str, extras: tuple[str, ...] = ()) -> RequirementStatus:
        req = parse_requirement(text)
        if req is None:
            return RequirementStatus(text, text, "invalid")
        name = normalize_name(req.name)
        if not self.marker_applies(req, extras):
            return RequirementStatus(text, name, "not-applicable")
        dist = self.get(name)
        if dist is None:
            return RequirementStatus(text, name, "missing")
        version = parse_version(dist.version)
        if req.specifier and (version is None or not req.specifier.contains(version, prereleases=True)):
            return RequirementStatus(text, name, "mismatch", dist.version, dist)
        return RequirementStatus(text, name, "satisfied", dist.version, dist)
