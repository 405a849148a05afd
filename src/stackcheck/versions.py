"""Version-range algebra over PEP 440 specifier sets.

Profiles are layered (a base says ``torch>=2.6``, a child says ``torch<2.9``), so stackcheck
needs to know what a *combination* of specifiers admits: is it empty, does it contain the
installed version, is one range inside another. ``packaging`` (≥ 26.3) already converts a
``SpecifierSet`` into a sorted union of intervals of ``Version`` (:class:`packaging.ranges.
VersionRange`), including the awkward PEP 440 rules (``<V`` excludes V's pre-releases, ``>V``
excludes V's post and local releases, ``==V`` admits ``V+local``, ``===`` is string equality).
This module fixes one policy on top of it and adds the few operations the project needs.

Pre-release policy: **pre-releases are ordinary versions here.** ``contains(spec, v)`` agrees
with ``SpecifierSet.contains(v, prereleases=True)`` and ``is_empty`` says "no version at all,
pre-releases included, satisfies this". Reason: an installed ``2.9.0rc1`` must still be judged
against ``torch>=2.8`` (pip's "skip pre-releases" rule is about *choosing* what to install,
not about what an installed version is), and a range is only a contradiction when nothing can
satisfy it. Where it matters that a final release exists, ask ``is_empty(spec,
prereleases=False)`` (``>=2.6rc1,<2.6rc3`` admits only pre-releases).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    from packaging.ranges import VersionRange

# describe(): lower bounds first, then upper bounds, then exclusions
_OPERATOR_ORDER = {"===": 0, "==": 1, "~=": 2, ">=": 3, ">": 4, "<=": 5, "<": 6, "!=": 7}

# Longer texts are not versions: no real release needs more, and a 4,300-digit release segment
# would hit Python's int-conversion limit (ValueError) inside packaging.
MAX_VERSION_CHARS = 256


def parse_version(text: object) -> Version | None:
    """A PEP 440 version, or ``None`` for anything else (not a string, empty, invalid, longer
    than :data:`MAX_VERSION_CHARS`). Never raises, whatever an installed distribution says."""
    if not isinstance(text, str) or not text or len(text) > MAX_VERSION_CHARS:
        return None
    return _parse_version(text)


@lru_cache(maxsize=4096)
def _parse_version(text: str) -> Version | None:
    try:
        return Version(text)
    except ValueError:  # InvalidVersion, and int() limits on a release segment
        return None


def clip(text: str, limit: int = 60) -> str:
    """``text`` as a message shows it: unchanged up to ``limit`` characters, else its start
    and end around an ellipsis."""
    return text if len(text) <= limit else f"{text[: limit - 12]}…{text[-8:]}"


def unparsable_version(text: str) -> str:
    """A text :func:`parse_version` refused, as messages show it: cut to a readable length,
    with why (``'1111…1111' (not a PEP 440 version, 4400 characters)``)."""
    size = f", {len(text)} characters" if len(text) > MAX_VERSION_CHARS else ""
    return f"{clip(text, 40)!r} (not a PEP 440 version{size})"


def major_minor(text: str | None) -> tuple[int, int] | None:
    """``(3, 12)`` from ``"3.12.3"`` (or ``"3.13.0a1+"``): ``None`` unless the first two parts
    are short runs of ASCII digits (``"3.¹²"`` and a 4,400-digit part included)."""
    parts = (text or "").split(".")
    if len(parts) < 2 or not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in parts[:2]):
        return None
    return int(parts[0]), int(parts[1])


def parse(spec: str | SpecifierSet) -> SpecifierSet:
    """A SpecifierSet (``InvalidSpecifier`` for bad syntax or a version longer than
    :data:`MAX_VERSION_CHARS`; ``""`` is "any version")."""
    spec = spec if isinstance(spec, SpecifierSet) else SpecifierSet(spec)
    for one in spec:
        if len(one.version) > MAX_VERSION_CHARS:
            size = len(one.version)
            raise InvalidSpecifier(
                f"{one.operator} a version of {size} characters (at most {MAX_VERSION_CHARS})"
            )
    return spec


@lru_cache(maxsize=4096)
def _range(text: str, prereleases: bool) -> VersionRange:
    return SpecifierSet(text, prereleases=prereleases).to_range()


def to_range(spec: str | SpecifierSet, *, prereleases: bool = True) -> VersionRange:
    """The union of intervals of versions that ``spec`` admits (cached by its text)."""
    return _range(str(parse(spec)), prereleases)


def contains(spec: str | SpecifierSet, version: str | Version) -> bool:
    """Does ``version`` satisfy ``spec``? Pre-releases and local versions count like any other."""
    if not isinstance(version, Version):
        parsed = parse_version(version)
        if parsed is None:
            raise InvalidVersion(unparsable_version(str(version)))
        version = parsed
    return to_range(spec).contains(version, prereleases=True)


def intersect(a: str | SpecifierSet, b: str | SpecifierSet) -> SpecifierSet:
    """The specifier set admitting exactly the versions both ``a`` and ``b`` admit."""
    return parse(a) & parse(b)


def simplify(spec: str | SpecifierSet) -> SpecifierSet:
    """The shortest equivalent spelling (``>=2.6,<3,==2.8.0`` → ``==2.8.0``); an empty or
    unspellable range is returned as written, so error messages still show the cause."""
    spec = parse(spec)
    rng = to_range(spec)
    canonical = None if rng.is_empty else rng.to_specifier_set()
    return spec if canonical is None else canonical


def is_empty(spec: str | SpecifierSet, *, prereleases: bool = True) -> bool:
    """True when no version satisfies ``spec`` (with ``prereleases=False``: no final release)."""
    return to_range(spec, prereleases=prereleases).is_empty


def is_subset(a: str | SpecifierSet, b: str | SpecifierSet) -> bool:
    """True when every version ``a`` admits is also admitted by ``b`` (an empty ``a`` is a subset)."""
    return to_range(a).is_subset(to_range(b))


def describe(spec: str | SpecifierSet) -> str:
    """A short human reading: ``any version``, ``no version``, or the canonical specifiers
    with lower bounds first (``>=2.8, <3``), ``~=2.8`` spelled out as the interval it is."""
    spec = parse(spec)
    if not len(spec):
        return "any version"
    rng = to_range(spec)
    if rng.is_empty:
        return "no version"
    canonical = rng.to_specifier_set()
    if canonical is None:  # a union with no PEP 440 spelling: keep what the user wrote
        canonical = spec
    if not len(canonical):
        return "any version"
    return ", ".join(str(s) for s in sorted(canonical, key=_specifier_key))


def _specifier_key(spec: Specifier) -> tuple[int, Version | str]:
    try:
        version: Version | str = Version(spec.version.removesuffix(".*"))
    except ValueError:
        version = spec.version
    return (_OPERATOR_ORDER.get(spec.operator, 9), str(version))
