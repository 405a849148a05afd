"""Facts derived from a snapshot with the knowledge tables, shared by the predicates and the
compat checks: which torch build is installed, its architectures, how the driver fits it.

Each judgement returns the fact or a ScopeMatch that says why there is none (a failed match:
torch absent / not a CUDA build; an unknown one: the snapshot or the tables cannot tell).
"""

from __future__ import annotations

import re

import msgspec

from stackcheck.knowledge.archs import covers
from stackcheck.knowledge.base import DriverRequirement, Knowledge, cuda_minor, version
from stackcheck.knowledge.match import ScopeMatch, no_nvidia_driver
from stackcheck.models.snapshot import Snapshot
from stackcheck.requirements import DistIndex


class TorchBuild(msgspec.Struct, frozen=True):
    version: str  # "2.6.0+cu124"
    cuda: str | None  # "12.4"; None for CPU / ROCm builds
    known: bool  # False when the build could not be determined
    source: str  # where the CUDA fact came from
    hip: str | None = None
    unverified: str = ""  # why the CUDA fact rests on an unverified table row ("" when it does not)


def torch_build(snap: Snapshot, kb: Knowledge, index: DistIndex) -> TorchBuild | None:
    """The installed torch and the CUDA it was built for; None when torch is not installed.

    Preference: the snapshot's torch section (torch/version.py or the deep probe), then the
    local version label (``+cu121``/``+cpu``), then the PyPI default CUDA of that release for
    an unlabelled Linux x86_64 wheel.
    """
    t = snap.torch
    dist = index.get("torch")
    ver = t.version or (dist.version if dist else "")
    if not ver:
        return None
    if t.status == "ok" and t.version:
        return TorchBuild(ver, cuda_minor(t.cuda) if t.cuda else None, True, t.source or "torch", t.hip)
    local = ver.partition("+")[2].lower()
    if local.startswith("cu") and local[2:].isdigit():
        return TorchBuild(ver, cuda_minor(local), True, "version label")
    if local in ("cpu",) or local.startswith("rocm"):
        return TorchBuild(ver, None, True, "version label", local if local.startswith("rocm") else None)
    rel = kb.torch_release(ver)
    system, machine = snap.platform.system.lower(), snap.platform.machine.lower()
    if not local and rel and rel.pypi_default_cuda and system == "linux" and machine == "x86_64":
        why = "" if rel.verified else f"torch {rel.torch}: {rel.unverified_reason}"
        source = "PyPI default wheel of this release"
        return TorchBuild(ver, rel.pypi_default_cuda, True, source, unverified=why)
    if not local and system == "darwin":
        return TorchBuild(ver, None, True, "macOS wheels carry no CUDA")
    return TorchBuild(ver, None, False, "unknown")


def torch_archs(snap: Snapshot, kb: Knowledge, build: TorchBuild) -> tuple[list[str], str, bool] | None:
    """(arch list, where it came from, verified) of a CUDA torch build; None when unknown. An
    unverified table row (or a CUDA build inferred from an unverified release) says why in the
    source text."""
    if snap.torch.arch_list:
        return list(snap.torch.arch_list), "torch.cuda.get_arch_list() (--deep)", True
    if build.cuda is None or not official_build(build.version):
        return None  # a source / NGC / nightly build carries whatever its builder chose
    row = kb.arch_build(build.version, build.cuda, snap.platform.machine or "x86_64")
    archs = kb.arch_list(
        build.version, build.cuda, snap.platform.machine or "x86_64", snap.platform.system or "linux"
    )
    if row is None or archs is None:
        return None
    why = "; ".join(w for w in (row.unverified_reason if not row.verified else "", build.unverified) if w)
    source = f"knowledge table ({', '.join(row.sources)})" + (f"; unverified: {why}" if why else "")
    return archs, source, not why


_RELEASED = re.compile(r"\d+(\.\d+)+(rc\d+)?(\.post\d+)?(\+(cu\d+|cpu|rocm[\d.]+))?")


def official_build(version_text: str) -> bool:
    """A released wheel (``2.6.0``, ``2.6.0+cu124``, ``0.6.4.post1``), which the tables describe
    — not ``2.5.0a0+872d972e41.nv24.08`` (NGC), a ``.dev`` nightly or a ``+git`` source build."""
    return bool(_RELEASED.fullmatch(version_text.strip()))


def uncovered_gpus(snap: Snapshot, archs: list[str]) -> list:
    return [
        g for g in snap.visible_gpus() if g.compute_capability and not covers(archs, g.compute_capability)
    ]


def cuda_torch(snap: Snapshot, kb: Knowledge, index: DistIndex) -> TorchBuild | ScopeMatch:
    """The installed CUDA torch build, or why there is none: a failed match when torch is
    absent or not a CUDA build, an unknown one when the snapshot cannot tell."""
    build = torch_build(snap, kb, index)
    if build is None:
        return ScopeMatch.failed("torch is not installed")
    if not build.known:
        return ScopeMatch.unknown(
            f"the CUDA build of torch {build.version} (no torch section, no +cuXYZ label)"
        )
    if build.cuda is None:
        kind = f"a ROCm build ({build.hip})" if build.hip else "a CPU build"
        return ScopeMatch.failed(f"torch {build.version} is {kind}, not a CUDA build")
    return build


class DriverFit(msgspec.Struct, frozen=True):
    """How the driver relates to what torch's CUDA runtime needs. ``driver`` is empty when only
    the highest CUDA the driver supports is known (``driver_cuda``, e.g. from nvidia-smi's
    header or torch's "found version 11040" warning in a pasted report)."""

    build: TorchBuild
    driver: str
    need: DriverRequirement
    driver_cuda: str = ""
    unverified: str = ""  # why the requirement rests on an unverified fact ("" when it does not)

    @property
    def band(self) -> str:
        """``below-floor`` (CUDA unusable) | ``compat-mode`` (floor met, toolkit driver not) | ``ok``."""
        if not self.driver:  # judged by CUDA levels: a major below torch's is below its floor
            have, need = version(self.driver_cuda), version(self.build.cuda)
            assert have is not None and need is not None  # driver_fit makes no DriverFit otherwise
            if have.major < need.major:
                return "below-floor"
            return "compat-mode" if (have.major, have.minor) < (need.major, need.minor) else "ok"
        d, floor = version(self.driver), version(self.need.mvc_floor)
        toolkit = version(self.need.toolkit_driver)
        assert d is not None and floor is not None  # driver_fit makes no DriverFit otherwise
        if d < floor:
            return "below-floor"
        if toolkit is not None and d < toolkit:
            return "compat-mode"
        return "ok"

    @property
    def shown(self) -> str:
        return f"driver {self.driver}" if self.driver else f"a driver for CUDA <= {self.driver_cuda}"

    @property
    def required(self) -> str | None:
        """The driver this band falls short of: the floor, else the toolkit driver (None when
        judged by CUDA levels for a CUDA the tables do not know)."""
        return (
            self.need.mvc_floor
            if self.band == "below-floor"
            else (self.need.toolkit_driver or self.need.mvc_floor)
        )

    @property
    def expected(self) -> str:
        if self.band == "below-floor":
            cuda = version(self.build.cuda)
            assert cuda is not None  # driver_fit makes no DriverFit otherwise
            return f"driver >= {self.need.mvc_floor} (CUDA {cuda.major}.x floor)"
        return f"driver >= {self.required} (CUDA {self.build.cuda} toolkit driver)"


def driver_fit(snap: Snapshot, kb: Knowledge, index: DistIndex) -> DriverFit | ScopeMatch:
    """The driver against torch's CUDA build, or why it cannot be judged."""
    build = cuda_torch(snap, kb, index)
    if isinstance(build, ScopeMatch):
        return build
    assert build.cuda is not None  # cuda_torch answers with CUDA builds only
    acc = snap.accelerators
    drv, drv_cuda = acc.driver_version, acc.cuda_driver_version
    need = kb.driver_requirement(build.cuda, snap.platform.system or "linux")
    table_why = kb.driver_unverified(build.cuda, snap.platform.system or "linux")
    why = "; ".join(w for w in (table_why, build.unverified) if w)
    if not drv and version(drv_cuda) is not None and version(build.cuda) is not None:
        return DriverFit(build, "", need, drv_cuda, why)
    if not drv:
        return (
            ScopeMatch.failed("no NVIDIA driver found")
            if no_nvidia_driver(snap)
            else ScopeMatch.unknown("driver version")
        )
    if version(drv) is None:
        return ScopeMatch.unknown(f"a readable driver version (the snapshot says {drv!r})")
    if need.mvc_floor is None:
        return ScopeMatch.unknown(
            f"a driver requirement for CUDA {build.cuda} on {need.platform} (not in the knowledge tables)"
        )
    return DriverFit(build, drv, need, drv_cuda, why)
