"""The loaded knowledge base and the lookups checks use (drivers, torch releases, arch lists,
package pins). Code interprets these tables; no version number is written in code."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import NamedTuple

import msgspec
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from stackcheck.knowledge.archs import cc_target, covers
from stackcheck.knowledge.tables import (
    ArchListRow,
    ArchListTable,
    CudaDriverTable,
    PinRow,
    PinTable,
    TorchRelease,
    TorchReleaseTable,
)
from stackcheck.models.rule import Rule
from stackcheck.models.snapshot import normalize_name
from stackcheck.versions import parse_version

# marker environment assumed for pins when no snapshot is at hand (the wheels' main platform)
DEFAULT_MARKERS = {
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "sys_platform": "linux",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "python_version": "3.12",
    "python_full_version": "3.12.0",
}


class DriverRequirement(NamedTuple):
    """What a CUDA runtime needs from the driver: ``mvc_floor`` is required (minor-version
    compatibility of its major), ``toolkit_driver`` is recommended (the driver its toolkit
    shipped with; needed for PTX JIT). Either is ``None`` when the tables do not know it."""

    mvc_floor: str | None
    toolkit_driver: str | None
    cuda: str
    platform: str


# The knowledge modules' short name for the one bounded parser: a Version, ``None`` for an
# empty, oversized or non-PEP 440 text (never raises).
version = parse_version


def cuda_minor(cuda: str) -> str:
    """``"12.1.105"`` / ``"cu121"`` / ``"12.1"`` → ``"12.1"``."""
    cuda = cuda.strip().lower()
    if cuda.startswith("cu") and cuda[2:].isdigit():
        return f"{cuda[2:-1]}.{cuda[-1]}"
    return ".".join(cuda.split(".")[:2])


def release_of(torch_version: str) -> str | None:
    """``"2.6.0+cu124"`` → ``"2.6"``."""
    v = version(torch_version)
    return f"{v.major}.{v.minor}" if v else None


def _platform_key(platform: str) -> str:
    return "windows" if platform.lower().startswith("win") else "linux"


class Knowledge(msgspec.Struct, dict=True):  # dict: for the cached lookups; a dataclass's making: ≈ 0.3 ms
    """Everything under ``knowledge/data``, validated. Build it with ``load_knowledge()``."""

    drivers: CudaDriverTable
    torch: TorchReleaseTable
    archs: ArchListTable
    pins: PinTable
    rules: list[Rule]
    files: dict[str, str] = msgspec.field(default_factory=dict)  # table name → file it came from

    # ----- rules -----
    @cached_property
    def _rules_by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}

    def rule(self, id: str) -> Rule | None:
        return self._rules_by_id.get(id.upper())

    # ----- drivers -----
    def driver_requirement(self, cuda: str, platform: str = "linux") -> DriverRequirement:
        """Driver floor and toolkit driver for a CUDA runtime (``"12.1"``, ``"cu121"``) on
        ``linux`` or ``windows``."""
        key = _platform_key(platform)
        minor = cuda_minor(cuda)
        toolkit = self._toolkit_driver(minor, key)
        parsed = version(minor)
        major = parsed.major if parsed else None
        floor: str | None = None
        if major is not None and major >= self.drivers.mvc_from_major:
            for f in self.drivers.mvc_floors:
                if f.cuda_major == major:
                    floor = f.linux if key == "linux" else f.windows
        elif major is not None:
            floor = toolkit  # no minor-version compatibility before CUDA 11
        below = version(toolkit), version(floor)
        if below[0] is not None and below[1] is not None and below[0] < below[1]:
            floor = toolkit  # CUDA 11.0 shipped with 450.51.05, below the 11.x MVC floor: it runs natively
        return DriverRequirement(floor, toolkit, minor, key)

    def _toolkit_driver(self, minor: str, key: str) -> str | None:
        row = self._toolkit_row(minor, key)
        return (row.linux if key == "linux" else row.windows) if row else None

    def _toolkit_row(self, minor: str, key: str):
        """The release of a CUDA minor with the lowest driver on ``key`` (its toolkit driver)."""

        def driver(t):
            return t.linux if key == "linux" else t.windows

        rows = [t for t in self.drivers.toolkits if t.cuda == minor and t.release != "RC" and driver(t)]
        return min(rows, key=lambda t: version(driver(t)) or Version("0")) if rows else None

    def driver_unverified(self, cuda: str, platform: str = "linux") -> str:
        """Why the driver requirement of ``cuda`` rests on an unverified fact ("" when it does not)."""
        key, minor = _platform_key(platform), cuda_minor(cuda)
        parsed = version(minor)
        major = parsed.major if parsed is not None else None
        rows = [self._toolkit_row(minor, key), *(f for f in self.drivers.mvc_floors if f.cuda_major == major)]
        return "; ".join(r.unverified_reason for r in rows if r is not None and not r.verified)

    def newest_cuda_for_driver(self, driver: str, platform: str = "linux") -> str | None:
        """The newest CUDA minor whose toolkit driver this driver meets (its native CUDA)."""
        d = version(driver)
        if d is None:
            return None
        best: tuple[Version, str] | None = None
        key = _platform_key(platform)
        for t in self.drivers.toolkits:
            need = version(t.linux if key == "linux" else t.windows)
            if need is not None and need <= d and t.release != "RC":
                cand = (Version(t.cuda), t.cuda)
                best = cand if best is None or cand > best else best
        return best[1] if best else None

    # ----- torch releases -----
    def torch_release(self, torch_version: str) -> TorchRelease | None:
        """The release row of a torch version (``"2.6.0+cu124"`` → the 2.6 row)."""
        rel = release_of(torch_version) if torch_version.count(".") != 1 else torch_version
        for r in self.torch.releases:
            if r.torch == rel:
                return r
        return None

    def published_cuda_builds(self) -> list[str]:
        """Every CUDA build the release table lists for any release (stable or experimental),
        ascending: the download.pytorch.org indexes a fix may name when the release at hand is
        not in the table."""
        found = {cuda for r in self.torch.releases for cuda in r.all_cuda_builds}
        return sorted(found, key=Version)

    # ----- architectures -----
    def arch_build(self, torch_version: str, cuda: str, machine: str = "x86_64") -> ArchListRow | None:
        rel = release_of(torch_version) if torch_version.count(".") != 1 else torch_version
        if rel is None:
            return None
        minor = cuda_minor(cuda)
        machine = "aarch64" if machine.lower() in ("aarch64", "arm64") else "x86_64"
        for torch_range, row in self._arch_rows:
            if (
                row.cuda == minor
                and row.machine == machine
                and torch_range.contains(f"{rel}.0", prereleases=True)
            ):
                return row
        return None

    @cached_property
    def _arch_rows(self) -> list[tuple[SpecifierSet, ArchListRow]]:
        return [(SpecifierSet(row.torch), row) for row in self.archs.builds]

    def arch_list(
        self, torch_version: str, cuda: str, machine: str = "x86_64", platform: str = "linux"
    ) -> list[str] | None:
        """The ``torch.cuda.get_arch_list()`` of a build, from the tables (None: unknown)."""
        row = self.arch_build(torch_version, cuda, machine)
        if row is None:
            return None
        archs = [cc_target(cc) for cc in row.sass]
        if not (row.ptx_linux_only and _platform_key(platform) == "windows"):
            archs += [cc_target(cc, "compute") for cc in row.ptx]
        return archs

    @staticmethod
    def covers(arch_list: list[str], cc: str) -> bool:
        return covers(arch_list, cc)

    def fitting_builds(
        self,
        *,
        driver: str | None,
        ccs: list[str],
        platform: str = "linux",
        machine: str = "x86_64",
        strict: bool = True,
        driver_cuda: str | None = None,
    ) -> Iterator[tuple[TorchRelease, str]]:
        """(release, CUDA) pairs, newest first, whose stable build runs with ``driver`` and
        carries kernels for every capability in ``ccs``. ``strict``: the driver meets the
        build's toolkit driver (no compatibility mode); otherwise its CUDA-major floor.
        Without a driver version, ``driver_cuda`` (the highest CUDA it supports) decides."""
        d = version(driver) if driver else None
        top = version(driver_cuda) if d is None and driver_cuda else None
        for rel in sorted(self.torch.releases, key=lambda r: Version(r.torch), reverse=True):
            for cuda in sorted(rel.cuda_builds or [], key=Version, reverse=True):
                c = Version(cuda)
                if top is not None and (
                    (c.major, c.minor) > (top.major, top.minor) if strict else c.major > top.major
                ):
                    continue
                if d is not None:
                    req = self.driver_requirement(cuda, platform)
                    need = version(req.toolkit_driver if strict else req.mvc_floor)
                    if need is None or need > d:
                        continue
                archs = self.arch_list(rel.torch, cuda, machine, platform)
                if ccs and (archs is None or not all(covers(archs, cc) for cc in ccs)):
                    continue
                yield rel, cuda

    # ----- package pins -----
    @cached_property
    def _pins_by_package(self) -> dict[str, list[PinRow]]:
        out: dict[str, list[PinRow]] = {}
        for row in self.pins.pins:
            out.setdefault(normalize_name(row.package), []).append(row)
        for rows in out.values():
            rows.sort(key=lambda r: Version(r.version))
        return out

    def pinned_packages(self) -> list[str]:
        """Packages with a pin table (normalized names)."""
        return sorted(self._pins_by_package)

    def engine_pins(self, package: str, package_version: str) -> PinRow | None:
        """The pin row that covers one installed version of ``package`` (``vllm``, ``sglang``,
        ``xformers``, ``transformers``, ``bitsandbytes``, ``accelerate``, ``peft``, ``trl``)."""
        v = version(package_version)
        if v is None:
            return None
        base = Version(v.public)  # local labels (+cu121) do not change what a release pins
        for row, start, end in self.pin_ranges(package):
            if start <= base < end:
                return row
        return None

    def pin_ranges(self, package: str) -> list[tuple[PinRow, Version, Version]]:
        """Each pin row of ``package`` with the versions it covers, ``[start, end)``: up to the
        next row (or ``before``); the last row covers only its own minor series."""
        return self._pin_ranges.get(normalize_name(package), [])

    @cached_property
    def _pin_ranges(self) -> dict[str, list[tuple[PinRow, Version, Version]]]:
        out = {}
        for package, rows in self._pins_by_package.items():
            ranges = []
            for i, row in enumerate(rows):
                start = Version(row.version)
                end = version(row.before)
                if end is None:
                    end = (
                        Version(rows[i + 1].version)
                        if i + 1 < len(rows)
                        else Version(f"{start.major}.{start.minor + 1}.dev0")
                    )
                ranges.append((row, start, end))
            out[package] = ranges
        return out

    def pins_for(
        self,
        row: PinRow,
        dependency: str,
        markers: dict[str, str] | None = None,
        extras: tuple[str, ...] = (),
    ) -> list[Requirement]:
        """The requirements of a pin row on ``dependency`` that apply under ``markers``
        (default: Linux x86_64) with the row's usual extras plus ``extras``."""
        env = {**DEFAULT_MARKERS, **(markers or {})}
        key = normalize_name(dependency)
        out = []
        for text in row.requires:
            req = Requirement(text)
            if normalize_name(req.name) != key:
                continue
            if req.marker is not None and not any(
                req.marker.evaluate({**env, "extra": e}) for e in ("", *row.extras, *extras)
            ):
                continue
            out.append(req)
        return out
