"""Resolving ``extends``: base runtime → capability → backend, merged into one flat profile.

Parents are merged first, left to right, then the child on top:

* ``requirements`` / ``constraints``: merged per (package, marker); specifiers intersected,
  extras united, the marker kept (a marker-conditional requirement stays its own entry).
* ``python``: specifiers intersected.
* ``gpu``: field by field, the stricter wins (max of minimums, min of maximums,
  ``torch_cuda`` intersected); ``platform``: allowed OS / arch lists intersected (empty =
  any), the higher ``min_glibc`` wins.
* list fields (``required_modules``, ``notes``, ``forbidden``): union, order kept, duplicates
  dropped (a forbidden entry restated by a child takes the child's reason).
* scalars (``title``, ``category``, ``purpose``, ``evidence_scope``, docs links): the child's
  value wins unless it left the field at its default.

The result has ``extends == []`` and ``layers`` = the chain root → leaf (each ancestor once).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from stackcheck.errors import InputError
from stackcheck.models.profile import DocsLinks, Forbidden, GpuRequirement, PlatformConstraint, Profile
from stackcheck.versions import clip, parse, parse_version, simplify

_DEFAULTS = Profile(id="")
_SCALARS = ("title", "category", "purpose", "evidence_scope")
# Profiles on one path of ``extends`` at most (the built-in catalog needs 4): a deeper chain is
# a generated or broken registry, and refusing it keeps resolving bounded.
MAX_EXTENDS_DEPTH = 32


class ProfileError(InputError):
    """A problem located in one field of one profile: ``file: profile.field: message``."""

    cycle: list[str] = []
    too_deep: bool = False  # the extends chain has more than MAX_EXTENDS_DEPTH profiles

    def __init__(self, profile: str, field: str, message: str, file: str = ""):
        self.profile, self.field, self.message, self.file = profile, field, message, file
        super().__init__(self._text())

    def _text(self) -> str:
        where = f"{self.file}: " if self.file else ""
        return f"{where}{self.profile}.{self.field}: {self.message}"

    def located(self, file: str) -> ProfileError:
        return ProfileError(self.profile, self.field, self.message, file)


def ancestry(profile_id: str, lookup: Callable[[str], Profile | None]) -> list[str]:
    """The resolution order root → leaf (each ancestor once); raises on unknown or cyclic
    parents (a cycle error carries ``cycle``, the profile IDs on it) and on a chain of more
    than :data:`MAX_EXTENDS_DEPTH` profiles (``too_deep``)."""
    order: list[str] = []
    done: set[str] = set()

    def visit(pid: str, path: list[str]) -> None:
        if pid in done:
            return
        if len(path) >= MAX_EXTENDS_DEPTH:
            shown = " -> ".join([*path[:3], "…", pid]) if len(path) > 4 else " -> ".join([*path, pid])
            message = f"extends chain longer than {MAX_EXTENDS_DEPTH} profiles ({shown})"
            error = ProfileError(profile_id, "extends", message)
            error.too_deep = True
            raise error
        found = lookup(pid)
        assert found is not None  # every profile is looked up before it is visited
        for parent in found.extends:
            if parent in path or parent == pid:
                cycle = [*path[path.index(parent) :], pid] if parent in path else [pid]
                error = ProfileError(
                    profile_id, "extends", f"cyclic extends: {' -> '.join([*cycle, parent])}"
                )
                error.cycle = cycle
                raise error
            if lookup(parent) is None:
                raise ProfileError(pid, "extends", f"unknown parent profile {parent!r}")
            visit(parent, [*path, pid])
        done.add(pid)
        order.append(pid)

    if lookup(profile_id) is None:
        raise ProfileError(profile_id, "id", "unknown profile")
    visit(profile_id, [])
    return order


def resolve(profile_id: str, lookup: Callable[[str], Profile | None]) -> Profile:
    """The fully layered profile (``InputError`` subclasses name profile and field on failure)."""
    chain = ancestry(profile_id, lookup)
    merged = Profile(id=profile_id)
    for pid in chain:
        layer = lookup(pid)
        assert layer is not None  # ancestry() refused unknown profiles
        merged = merge(merged, layer)
    return msgspec.structs.replace(merged, id=profile_id, extends=[], layers=chain)


def merge(base: Profile, layer: Profile) -> Profile:
    """``layer`` on top of ``base`` (both unresolved field values; see the module docstring)."""
    from packaging.specifiers import InvalidSpecifier

    changes: dict = {
        name: getattr(layer, name) for name in _SCALARS if getattr(layer, name) != getattr(_DEFAULTS, name)
    }
    try:
        changes["python"] = _intersect_optional(base.python, layer.python)
    except InvalidSpecifier:
        shown = clip(layer.python or "")
        raise ProfileError(layer.id, "python", f"invalid PEP 440 specifier {shown!r}") from None
    changes["requirements"] = merge_requirements(
        base.requirements, layer.requirements, layer.id, "requirements"
    )
    changes["constraints"] = merge_requirements(base.constraints, layer.constraints, layer.id, "constraints")
    changes["required_modules"] = _union(base.required_modules, layer.required_modules)
    changes["notes"] = _union(base.notes, layer.notes)
    for i, f in enumerate(layer.forbidden):  # a guard that cannot be evaluated is refused here
        parse_requirement(f.requirement, layer.id, f"forbidden[{i}].requirement")
    changes["forbidden"] = _merge_forbidden(base.forbidden, layer.forbidden)
    changes["gpu"] = _merge_gpu(base.gpu, layer.gpu, layer.id)
    changes["platform"] = _merge_platform(base.platform, layer.platform)
    changes["docs"] = _merge_docs(base.docs, layer.docs)
    return msgspec.structs.replace(base, **changes)


def requirement_key(req) -> tuple[str, str]:
    """(normalized name, marker text): the identity under which requirements merge."""
    from packaging.utils import canonicalize_name

    return canonicalize_name(req.name), str(req.marker) if req.marker else ""


def parse_requirement(text: str, profile: str, field: str):
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import InvalidSpecifier

    try:
        req = Requirement(text)
        parse(req.specifier)  # bounded versions: every later comparison can run
        return req
    except (InvalidRequirement, InvalidSpecifier) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "unparsable"
        message = f"invalid PEP 508 requirement {clip(text)!r}: {clip(reason, 120)}"
        raise ProfileError(profile, field, message) from None


def merge_requirements(base: list[str], layer: list[str], profile: str, field: str) -> list[str]:
    """``base`` (already merged, valid) with ``layer``'s entries intersected in."""
    from packaging.requirements import Requirement

    merged = {requirement_key(r): r for r in map(Requirement, base)}
    for i, text in enumerate(layer):
        req = parse_requirement(text, profile, f"{field}[{i}]")
        prior = merged.setdefault(requirement_key(req), req)
        if prior is not req:
            prior.specifier = simplify(prior.specifier & req.specifier)
            prior.extras |= req.extras
            prior.url = req.url or prior.url
    return [str(r) for r in merged.values()]


def _intersect_optional(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        value = b if a is None else a
        if value is not None:
            parse(value)  # InvalidSpecifier for bad syntax or an oversized version
        return value
    return str(simplify(parse(a) & parse(b)))


def _union(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def _merge_forbidden(a: list[Forbidden], b: list[Forbidden]) -> list[Forbidden]:
    merged = {f.requirement.replace(" ", "").lower(): f for f in a}
    for f in b:
        merged[f.requirement.replace(" ", "").lower()] = f
    return list(merged.values())


def _cc_key(value: str):
    version = parse_version(value)
    if version is None:
        raise ValueError(clip(value))
    return version


def _merge_gpu(a: GpuRequirement | None, b: GpuRequirement | None, profile: str) -> GpuRequirement | None:
    from packaging.specifiers import InvalidSpecifier

    if b is None:
        return a
    if a is None:  # the layer's own value: checked here, as every merged one is below
        a = GpuRequirement()

    def pick(x, y, choose):
        return y if x is None else x if y is None else choose(x, y)

    try:
        torch_cuda = _intersect_optional(a.torch_cuda, b.torch_cuda)
        min_cc = pick(a.min_compute_capability, b.min_compute_capability, lambda x, y: max(x, y, key=_cc_key))
        max_cc = pick(a.max_compute_capability, b.max_compute_capability, lambda x, y: min(x, y, key=_cc_key))
    except InvalidSpecifier:
        shown = clip(b.torch_cuda or "")
        raise ProfileError(profile, "gpu.torch_cuda", f"invalid PEP 440 specifier {shown!r}") from None
    except ValueError as exc:
        raise ProfileError(profile, "gpu", f"compute capability {exc} is not a version like '8.0'") from None
    return GpuRequirement(
        min_count=pick(a.min_count, b.min_count, max),
        min_memory_gib=pick(a.min_memory_gib, b.min_memory_gib, max),
        min_compute_capability=min_cc,
        max_compute_capability=max_cc,
        torch_cuda=torch_cuda,
    )


def _merge_platform(a: PlatformConstraint | None, b: PlatformConstraint | None) -> PlatformConstraint | None:
    if a is None or b is None:
        return b if a is None else a

    def allowed(x: list[str], y: list[str]) -> list[str]:
        # an empty intersection would read as "any": keep the child's list, validate reports it
        return ([v for v in x if v in y] or list(y)) if x and y else list(x or y)

    glibc = [g for g in (a.min_glibc, b.min_glibc) if g]
    return PlatformConstraint(
        os=allowed(a.os, b.os),
        arch=allowed(a.arch, b.arch),
        min_glibc=max(glibc, key=_glibc_key) if glibc else None,
    )


def _glibc_key(value: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isascii() and p.isdigit() and len(p) <= 6 else -1 for p in value.split("."))


def _merge_docs(a: DocsLinks, b: DocsLinks) -> DocsLinks:
    return DocsLinks(
        quickstart=b.quickstart or a.quickstart,
        experiment_assets=b.experiment_assets or a.experiment_assets,
        extra={**a.extra, **b.extra},
    )
