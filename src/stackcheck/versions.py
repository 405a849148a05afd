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

from packaging.specifiers import Specifier, SpecifierSet
from packaging.version import Version

if TYPE_CHECKING:
    from packaging.ranges import VersionRange

# describe(): lower bounds first, then upper bounds, then exclusions
_OPERATOR_ORDER = {"===": 0, "==": 1, "~=": 2, ">=": 3, ">": 4, "<=": 5, "<": 6, "!=": 7}


def parse(spec: str | SpecifierSet) -> SpecifierSet:
    """A SpecifierSet (``InvalidSpecifier`` for bad syntax; ``""`` is "any version")."""
    return spec if isinstance(spec, SpecifierSet) else SpecifierSet(spec)


@lru_cache(maxsize=4096)
def _range(text: str, prereleases: bool) -> VersionRange:
    return SpecifierSet(text, prereleases=prereleases).to_range()


def to_range(spec: str | SpecifierSet, *, prereleases: bool = True) -> VersionRange:
    """The union of intervals of versions that ``spec`` admits (cached by its text)."""
    return _range(str(parse(spec)), prereleases)


def contains(spec: str | SpecifierSet, version: str | Version) -> bool:
    """Does ``version`` satisfy ``spec``? Pre-releases and local versions count like any other."""
    if not isinstance(version, Version):
        version = Version(version)
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
