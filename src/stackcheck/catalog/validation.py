"""``stackcheck profiles validate``: every problem of a registry, one line each, as
``file: profile.field: what is wrong``.

Three passes: the shape of each profile (unknown keys, wrong types — reported per profile
instead of stopping at the first), what each profile says on its own (PEP 440/508 syntax,
GPU thresholds, references to other profiles, duplicate IDs, cyclic ``extends``), and what
the *resolved* profile says (ranges left empty by layering, a requirement the profile also
forbids, contradictions with the compatibility knowledge base).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import msgspec

from stackcheck import identifiers
from stackcheck.catalog.layering import ProfileError, ancestry, parse_requirement, requirement_key, resolve
from stackcheck.catalog.registry import Entry, builtin_entries, builtin_files, builtin_label, find_registry
from stackcheck.models.profile import (
    DocsLinks,
    EvidenceScope,
    Forbidden,
    GpuRequirement,
    PlatformConstraint,
    Profile,
    Registry,
)
from stackcheck.shellcmd import command
from stackcheck.versions import clip, parse

REGISTRY = "registry"  # the "profile" part of a problem about the file as a whole
_CC = re.compile(r"\d{1,3}\.\d{1,3}")
_GLIBC = re.compile(r"\d{1,4}\.\d{1,4}")
_OS = ("linux", "darwin", "windows")
_ARCH = ("x86_64", "aarch64", "arm64", "amd64")
_NESTED = {"forbidden": Forbidden, "gpu": GpuRequirement, "platform": PlatformConstraint, "docs": DocsLinks}
_AT = re.compile(r"^(?P<text>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)


class Problem(msgspec.Struct, kw_only=True, frozen=True):
    file: str
    profile: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.profile}.{self.field}: {self.message}"


def validate(path: str | None = None, cwd: str | None = None) -> list[Problem]:
    """All problems of the registry at ``path`` (default: the one ``load_catalog`` would use).

    Unreadable, malformed or truncated files raise ``InputError``; everything else is a Problem.
    """
    target = Path(path) if path else find_registry(cwd)
    if target is None:
        return _Validator({}).run([(p, builtin_label(p)) for p in builtin_files()])
    from stackcheck.fileio import source_name

    return _Validator(None).run([(target, source_name(target))])


class _Validator:
    def __init__(self, beneath: dict[str, Entry] | None):
        self.beneath = beneath  # None: decided by the user file's include_builtin
        self.problems: list[Problem] = []
        self.entries: dict[str, Entry] = {}  # the profiles under validation
        self.broken: set[str] = set()  # profiles that cannot be resolved (shape, syntax, extends)
        self.reported_fields: dict[str, set[str]] = {}  # fields with a problem, per profile
        self.position: dict[str, int] = {REGISTRY: -1}  # problems are listed in file order

    # ----- driver -----
    def run(self, files: list[tuple[Path, str]]) -> list[Problem]:
        """``files``: (path, how problems name it)."""
        include_builtin = True
        for path, label in files:
            include_builtin = self._read(path, label) and include_builtin
        if self.beneath is None:
            self.beneath = builtin_entries() if include_builtin else {}
        for entry in self.entries.values():
            self._check_raw(entry)
        self._check_graph()
        self._check_resolved()
        return sorted(self.problems, key=lambda p: self.position.get(p.profile, len(self.position)))

    def add(self, file: str, profile: str, field: str, message: str) -> None:
        profile = identifiers.printable(profile)  # one problem, one line, whatever the ID holds
        self.problems.append(Problem(file=file, profile=profile, field=field, message=message))
        self.reported_fields.setdefault(profile, set()).add(field)

    def lookup(self, profile_id: str) -> Profile | None:
        entry = self.entries.get(profile_id) or self.beneath.get(profile_id)
        return entry.profile if entry else None

    # ----- pass 1: shape -----
    def _read(self, path: Path, file: str) -> bool:
        from stackcheck.fileio import decode_json, read_bytes

        doc = decode_json(read_bytes(path, "profile registry"), Any, file, "profile registry")
        if not isinstance(doc, dict):
            self.add(
                file,
                REGISTRY,
                "(top level)",
                f'expected a JSON object with a "profiles" array, got {_kind(doc)}',
            )
            return True
        try:
            registry = msgspec.convert({k: v for k, v in doc.items() if k != "profiles"}, Registry)
        except msgspec.ValidationError as exc:
            self.add(file, REGISTRY, *_explain(exc, Registry))
            registry = Registry()
        if not registry.schema_version.startswith("1."):
            self.add(
                file,
                REGISTRY,
                "schema_version",
                f"unsupported schema version {registry.schema_version!r}, expected 1.x",
            )
        profiles = doc.get("profiles", [])
        if not isinstance(profiles, list):
            self.add(file, REGISTRY, "profiles", f"expected an array of profiles, got {_kind(profiles)}")
            return registry.include_builtin
        for index, item in enumerate(profiles):
            self._read_profile(file, index, item)
        return registry.include_builtin

    def _read_profile(self, file: str, index: int, item: Any) -> None:
        label = (
            item.get("id")
            if isinstance(item, dict) and isinstance(item.get("id"), str) and item.get("id")
            else f"profiles[{index}]"
        )
        label = identifiers.printable(label)  # a problem line shows what the ID is, on one line
        self.position.setdefault(label, len(self.position))
        if not isinstance(item, dict):
            self.add(file, label, "(profile)", f"expected a JSON object, got {_kind(item)}")
            return
        try:
            profile = msgspec.convert(item, Profile)
        except msgspec.ValidationError as exc:
            self.add(file, label, *_explain(exc, Profile))
            if "id" in item and isinstance(
                item["id"], str
            ):  # keep the ID known, so children are not misreported
                self.broken.add(label)
                self._register(Entry(Profile(id=label), file, index))
            return
        if "layers" in item and item["layers"]:
            export = command("stackcheck", "profiles", "export", label)
            why = "filled by the resolver, not written by hand"
            self.add(file, label, "layers", f"{why} (`{export}` writes an entry a registry accepts)")
        self._register(Entry(profile, file, index))

    def _register(self, entry: Entry) -> None:
        pid = entry.profile.id
        if pid in self.entries:
            first = self.entries[pid]
            where = (
                f"profiles[{first.index}]"
                if first.file == entry.file
                else f"{first.file} profiles[{first.index}]"
            )
            self.add(entry.file, pid, "id", f"duplicate profile ID (first defined at {where})")
            return
        self.entries[pid] = entry

    # ----- pass 2: each profile on its own -----
    def _check_raw(self, entry: Entry) -> None:
        from packaging.specifiers import InvalidSpecifier

        p, file = entry.profile, entry.file
        if p.id in self.broken:
            return
        if (problem := identifiers.name_problem(p.id)) is not None:
            self.add(file, p.id or f"profiles[{entry.index}]", "id", problem)
        specs = [("python", p.python)] + ([("gpu.torch_cuda", p.gpu.torch_cuda)] if p.gpu else [])
        for field, spec in specs:
            if spec is not None:
                try:
                    parse(spec)
                except InvalidSpecifier:
                    self.add(file, p.id, field, f"invalid PEP 440 specifier {clip(spec)!r}")
                    self.broken.add(p.id)
        for field, items in (("requirements", p.requirements), ("constraints", p.constraints)):
            for i, text in enumerate(items):
                self._parse(file, p.id, f"{field}[{i}]", text)
        for i, f in enumerate(p.forbidden):
            self._parse(file, p.id, f"forbidden[{i}].requirement", f.requirement)
            if f.use_instead is not None and (f.use_instead == p.id or self.lookup(f.use_instead) is None):
                what = "the profile itself" if f.use_instead == p.id else "an unknown profile"
                self.add(
                    file,
                    p.id,
                    f"forbidden[{i}].use_instead",
                    f"{f.use_instead!r} is {what}; name the profile where {f.requirement!r} belongs",
                )
        if p.gpu:
            self._check_gpu(file, p.id, p.gpu)
        if p.platform:
            self._check_platform(file, p.id, p.platform)
        for parent in p.extends:
            if self.lookup(parent) is None:
                self.add(
                    file,
                    p.id,
                    "extends",
                    f"unknown parent profile {parent!r}{_suggest(parent, self._known())}",
                )
                self.broken.add(p.id)

    def _parse(self, file: str, profile: str, field: str, text: str) -> None:
        try:
            parse_requirement(text, profile, field)
        except ProfileError as exc:
            self.add(file, profile, field, exc.message)
            self.broken.add(profile)

    def _check_gpu(self, file: str, pid: str, gpu: GpuRequirement) -> None:
        if gpu.min_count is not None and gpu.min_count < 0:
            self.add(file, pid, "gpu.min_count", f"negative GPU count {gpu.min_count}")
        if gpu.min_memory_gib is not None and gpu.min_memory_gib < 0:
            self.add(file, pid, "gpu.min_memory_gib", f"negative memory {gpu.min_memory_gib} GiB")
        for field in ("min_compute_capability", "max_compute_capability"):
            value = getattr(gpu, field)
            if value is not None and not _CC.fullmatch(value):
                said = f"expected a compute capability like '8.0', got {clip(value)!r}"
                self.add(file, pid, f"gpu.{field}", said)
        if contradiction := _cc_contradiction(gpu):
            self.add(file, pid, "gpu", contradiction)

    def _check_platform(self, file: str, pid: str, platform: PlatformConstraint) -> None:
        for field, values, known in (("os", platform.os, _OS), ("arch", platform.arch, _ARCH)):
            for value in values:
                if value not in known:
                    self.add(
                        file,
                        pid,
                        f"platform.{field}",
                        f"unknown {field} {value!r}, expected one of {', '.join(known)}",
                    )
        if platform.min_glibc is not None and not _GLIBC.fullmatch(platform.min_glibc):
            said = f"expected a glibc version like '2.28', got {clip(platform.min_glibc)!r}"
            self.add(file, pid, "platform.min_glibc", said)

    def _check_graph(self) -> None:
        """Cycles in ``extends``, reported on every profile of the cycle; chains too deep,
        reported on the first profile of each that is (its children are too, unsaid)."""
        too_deep: dict[str, ProfileError] = {}
        for pid, entry in self.entries.items():
            if pid in self.broken:
                continue
            try:
                ancestry(pid, self.lookup)
            except ProfileError as exc:
                if pid in exc.cycle:
                    self.add(entry.file, pid, exc.field, exc.message)
                elif exc.too_deep:
                    too_deep[pid] = exc
                self.broken.add(pid)
        for pid, exc in too_deep.items():
            if not any(parent in too_deep for parent in self.lookup(pid).extends):
                self.add(self.entries[pid].file, pid, exc.field, exc.message)

    # ----- pass 3: resolved profiles -----
    def _check_resolved(self) -> None:
        from stackcheck.knowledge.consistency import profile_problems

        reported: dict[str, set[tuple[str, str]]] = {}
        said_before = {
            pid: set(fields) for pid, fields in self.reported_fields.items()
        }  # pass 2 said it already
        chains = {}
        for pid in self.entries:
            if pid in self.broken:
                continue
            chain = ancestry(pid, self.lookup)
            if any(a in self.broken for a in chain):
                continue
            chains[pid] = chain
        for pid in sorted(chains, key=lambda i: len(chains[i])):
            entry = self.entries[pid]
            try:
                profile = resolve(pid, self.lookup)
            except ProfileError as exc:
                self.add(entry.file, pid, exc.field, exc.message)
                continue
            inherited = set().union(*(reported.get(a, set()) for a in chains[pid][:-1]))
            found = _resolved_problems(profile, [self.lookup(a) for a in chains[pid]])
            if not found:  # facts about a contradictory profile would only repeat the contradiction
                found = [((field, message), field, message) for field, message in profile_problems(profile)]
            reported[pid] = {key for key, _, _ in found}
            for key, field, message in found:
                if key not in inherited and field not in said_before.get(pid, ()):
                    self.add(entry.file, pid, field, message)

    def _known(self) -> list[str]:
        return [*self.entries, *self.beneath]


def _resolved_problems(profile: Profile, layers: list[Profile]) -> list[tuple[tuple[str, str], str, str]]:
    """(dedup key, field, message) for what only the layered profile shows."""
    from packaging.requirements import Requirement

    from stackcheck import versions

    found = []

    def contributions(field: str, key: tuple[str, str] | None = None) -> str:
        parts = []
        for layer in layers:
            if key is None:
                spec = getattr(layer, field)
                if spec is not None:
                    parts.append(f"{layer.id}: {spec or 'any'}")
                continue
            for text in getattr(layer, field):
                req = Requirement(text)
                if requirement_key(req) == key:
                    parts.append(f"{layer.id}: {req.specifier or 'any'}")
        return "; ".join(parts)

    if profile.python is not None and versions.is_empty(profile.python):
        found.append(
            (
                ("python", ""),
                "python",
                f"no Python version satisfies {profile.python!r} after layering ({contributions('python')})",
            )
        )
    required = {}
    for field in ("requirements", "constraints"):
        for text in getattr(profile, field):
            req = Requirement(text)
            key = requirement_key(req)
            if field == "requirements":
                required[key[0]] = req
            if versions.is_empty(req.specifier):
                found.append(
                    (
                        (field, key[0]),
                        field,
                        f"{req.name}: no version satisfies {str(req.specifier)!r} after layering "
                        f"({contributions(field, key)})",
                    )
                )
            elif (
                field == "constraints"
                and key[0] in required
                and versions.is_empty(versions.intersect(required[key[0]].specifier, req.specifier))
            ):
                found.append(
                    (
                        (field, key[0]),
                        field,
                        f"{req.name}: the constraint {str(req.specifier)!r} excludes every "
                        f"version the requirement {str(required[key[0]])!r} admits",
                    )
                )
    for f in profile.forbidden:
        banned = Requirement(f.requirement)
        req = required.get(requirement_key(banned)[0])
        if req is not None and (not banned.specifier or versions.is_subset(req.specifier, banned.specifier)):
            found.append(
                (
                    ("forbidden", banned.name),
                    "forbidden",
                    f"{banned.name}: required as {str(req)!r} but the profile forbids {f.requirement!r}",
                )
            )
    for field in ("os", "arch"):
        stated = [
            (layer.id, getattr(layer.platform, field))
            for layer in layers
            if layer.platform and getattr(layer.platform, field)
        ]
        if stated and not set.intersection(*(set(values) for _, values in stated)):
            said = "; ".join(f"{pid}: {', '.join(values)}" for pid, values in stated)
            found.append(
                (
                    (f"platform.{field}", ""),
                    f"platform.{field}",
                    f"no {field} is allowed by every layer ({said})",
                )
            )
    if profile.gpu:
        if profile.gpu.torch_cuda is not None and versions.is_empty(profile.gpu.torch_cuda):
            found.append(
                (
                    ("gpu.torch_cuda", ""),
                    "gpu.torch_cuda",
                    f"no CUDA build satisfies {profile.gpu.torch_cuda!r} after layering",
                )
            )
        if contradiction := _cc_contradiction(profile.gpu):
            found.append((("gpu", "cc"), "gpu", f"{contradiction} after layering"))
    return found


def _cc_contradiction(gpu: GpuRequirement) -> str | None:
    from packaging.version import Version

    lo, hi = gpu.min_compute_capability, gpu.max_compute_capability
    if lo and hi and _CC.fullmatch(lo) and _CC.fullmatch(hi) and Version(lo) > Version(hi):
        return f"min_compute_capability {lo} is above max_compute_capability {hi}"
    return None


def _explain(exc: msgspec.ValidationError, model: type) -> tuple[str, str]:
    """msgspec's error → (field path, message), e.g. ('forbidden[0].reasn', 'unknown field …')."""
    m = _AT.match(str(exc))
    text, path = m.group("text"), (m.group("path") or "").lstrip(".")
    unknown = re.fullmatch(r"Object contains unknown field `([^`]+)`", text)
    if unknown:
        field = f"{path}.{unknown.group(1)}" if path else unknown.group(1)
        owner = _NESTED.get(re.sub(r"\[\d+\]$", "", path), model) if path else model
        allowed = [f for f in owner.__struct_fields__ if f != "layers"]
        return field, f"unknown field (expected one of: {', '.join(allowed)})"
    if text.startswith("Invalid enum value") and path == "evidence_scope":
        return path, f"{text[0].lower() + text[1:]} (expected one of: {', '.join(get_args(EvidenceScope))})"
    missing = re.fullmatch(r"Object missing required field `([^`]+)`", text)
    if missing:
        return (f"{path}.{missing.group(1)}" if path else missing.group(1)), "missing required field"
    return path or "(top level)", text[0].lower() + text[1:]


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _suggest(name: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""
