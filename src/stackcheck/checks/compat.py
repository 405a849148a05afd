"""Torch build vs. this machine: the driver (CUDA002) and the GPUs' architectures (GPU004).

Both are judged from the knowledge tables, so a pasted snapshot of another machine gets the
same answer as that machine would. Fixes name a concrete driver or the exact torch build (and
index URL) that fits the driver and every visible GPU.
"""

from __future__ import annotations

from collections.abc import Iterator

from stackcheck.checks.context import pip_command
from stackcheck.checks.registry import DOCTOR, PREFLIGHT, Outcome, blocked, check, ok, skipped, warning
from stackcheck.checks.torch_install import torch_install
from stackcheck.knowledge.base import Knowledge, release_of, version
from stackcheck.knowledge.facts import TorchBuild, official_build, torch_archs
from stackcheck.knowledge.scope import ScopeMatch
from stackcheck.models.finding import PipInstall

SOURCES = (
    "NVIDIA CUDA Toolkit Release Notes, Table 3",
    "docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html",
)


def install_torch(
    ctx,
    kb: Knowledge,
    build: TorchBuild,
    *,
    driver: str | None,
    ccs: list[str],
    driver_cuda: str | None = None,
    same_release: bool = False,
) -> PipInstall | None:
    """The pip install (as data) of the newest torch build that runs with ``driver`` on GPUs ``ccs``,
    preferring the installed release (``same_release``: only it, and only without compatibility
    mode); companions (torchvision/torchaudio) follow the release."""
    snap = ctx.snapshot
    plat, machine = snap.platform.system or "linux", snap.platform.machine or "x86_64"
    installed = release_of(build.version)
    builds: list = []
    for strict in (True,) if same_release else (True, False):
        builds = list(
            kb.fitting_builds(
                driver=driver, ccs=ccs, platform=plat, machine=machine, strict=strict, driver_cuda=driver_cuda
            )
        )
        if same_release:
            builds = [b for b in builds if b[0].torch == installed]
        if builds:
            break
    if not builds:
        return None
    same = [b for b in builds if b[0].torch == installed]
    rel, cuda = (same or builds)[0]
    torch_pin = f"torch=={version(build.version).public.split('+')[0]}" if same else f"torch=={rel.torch}.*"
    reqs = [torch_pin]
    for name in ("torchvision", "torchaudio"):
        paired = getattr(rel, name)
        if ctx.dist_index.get(name) is not None and paired:
            reqs.append(f"{name}=={paired}.*")
    return torch_install(ctx, *reqs, build=cuda)


@check(
    "CUDA002",
    "torch's CUDA build runs with this NVIDIA driver",
    explain="""
A pip/conda torch brings its own CUDA runtime, so the only system requirement is the NVIDIA
driver. The driver must be at least the minor-version-compatibility floor of the build's CUDA
major (11.x: 450.80.02, 12.x: 525.60.13, 13.x: 580 on Linux; Windows uses the Windows column):
below it, torch.cuda.is_available() is False ("The NVIDIA driver on your system is too old")
-> blocked. Between the floor and the driver the build's CUDA toolkit shipped with (e.g.
570.26 for CUDA 12.8), CUDA runs in compatibility mode where PTX JIT (Triton, torch.compile)
can fail -> warning. Plain `pip install torch` >= 2.11 on Linux is a CUDA 13 build: driver >= 580.
A requirement that rests on a table row marked unverified warns instead of blocking.
Fix: upgrade the driver, or install the torch build (index URL given) that fits the driver.
Skipped for CPU/ROCm builds and when the snapshot has no driver version.""",
    commands=(PREFLIGHT, DOCTOR),
    sources=SOURCES,
)
def cuda_driver(ctx) -> Iterator[Outcome]:
    fit = ctx.driver_fit
    if isinstance(fit, ScopeMatch):
        yield skipped(fit.reason)
        return
    snap, kb, build, req = ctx.snapshot, ctx.knowledge, fit.build, fit.need
    native = kb.newest_cuda_for_driver(fit.driver, snap.platform.system or "linux") if fit.driver else None
    observed = fit.shown + (f" (native CUDA {native})" if native and fit.band != "ok" else "")
    observed += f" with torch {build.version} (CUDA {build.cuda})"
    if fit.band != "ok":  # below the floor any fitting release will do; in compatibility mode only this one
        ccs = [g.compute_capability for g in snap.visible_gpus() if g.compute_capability]
        install = install_torch(
            ctx,
            kb,
            build,
            driver=fit.driver or None,
            ccs=ccs,
            driver_cuda=fit.driver_cuda or None,
            same_release=fit.band == "compat-mode",
        )
        alt = pip_command(install) if install else None  # an alternative to the driver upgrade
    if fit.band == "below-floor":
        target = req.toolkit_driver or req.mvc_floor
        fix = f"Upgrade the NVIDIA driver to >= {target}" + (
            f", or install a torch build this driver runs: {alt}" if alt else ""
        )
        verdict = warning if fit.unverified else blocked  # an unverified table fact never blocks
        yield verdict(
            observed + (f" [unverified fact: {fit.unverified}]" if fit.unverified else ""),
            f"driver >= {req.mvc_floor} (CUDA {version(build.cuda).major}.x floor); >= {target} recommended",
            fix,
            category="driver-too-old",
        )
    elif fit.band == "compat-mode":
        fix = f"Upgrade the NVIDIA driver to >= {req.toolkit_driver}" + (
            f", or install this torch's build for an older CUDA: {alt}"
            if alt
            else "; where you cannot (hosted notebooks), avoid paths that JIT-compile PTX "
            "(torch.compile, Triton kernels)"
        )
        yield warning(
            observed + f": compatibility mode (>= {req.mvc_floor} floor met)",
            f"driver >= {req.toolkit_driver} (CUDA {build.cuda} toolkit driver) for PTX JIT / Triton",
            fix,
            category="driver-too-old",
        )
    else:
        note = "" if req.toolkit_driver else f" (toolkit driver for CUDA {build.cuda} unknown; floor met)"
        yield ok(observed + note, f"driver >= {req.toolkit_driver or req.mvc_floor}")


@check(
    "GPU004",
    "torch build carries kernels for each visible GPU",
    explain="""
Each visible GPU's compute capability must be covered by the torch build's architectures:
SASS sm_XY runs on CC X.z when z >= Y (same major); PTX compute_XY is JIT-compiled for any
CC >= X.Y; arch-specific targets (sm_90a) are not forward compatible. Otherwise every kernel
fails with "no kernel image is available for execution on the device" -> blocked. Typical:
RTX 50xx / B200 on builds before cu128 (torch < 2.7), GTX 10xx / P100 / V100 on CUDA 13
builds and on the cu128 builds of 2.7 and 2.11+ (2.8-2.10 cu128 still carry Volta). The arch list comes from \
torch.cuda.get_arch_list() with --deep, else from the
knowledge table for (torch release, CUDA build) — released wheels only: source, NGC and nightly
builds are skipped without --deep; rows marked unverified (inferred, not read from a build)
give a warning instead of blocked. Fix: the exact torch build (index URL) that covers every GPU.""",
    commands=(PREFLIGHT, DOCTOR),
    sources=(
        "pytorch/pytorch RELEASE.md (CUDA support matrix)",
        "pytorch/builder manywheel/build_cuda.sh",
        "CUDA C++ Programming Guide, binary compatibility",
    ),
)
def gpu_archs(ctx) -> Iterator[Outcome]:
    build = ctx.cuda_torch
    if isinstance(build, ScopeMatch):
        yield skipped(build.reason)
        return
    snap, kb = ctx.snapshot, ctx.knowledge
    gpus = snap.visible_gpus()
    if not gpus:
        yield skipped("no visible NVIDIA GPU")
        return
    found = torch_archs(snap, kb, build)
    if found is None:
        why = (
            "a custom build (source, NGC container, nightly)"
            if not official_build(build.version)
            else "not in the tables"
        )
        yield skipped(
            f"the architectures of torch {build.version} (CUDA {build.cuda}): {why}; --deep "
            "reads them from torch"
        )
        return
    archs, source, verified = found
    groups: dict[tuple[str, str], list[int]] = {}
    for g in gpus:
        groups.setdefault((g.name, g.compute_capability), []).append(g.index)
    ccs = sorted({cc for _, cc in groups if cc})
    for (name, cc), indices in groups.items():
        subject = f"GPU{','.join(map(str, indices))} {name}".strip()
        if not cc:
            yield skipped("compute capability unknown", subject=subject)
            continue
        if kb.covers(archs, cc):
            yield ok(f"{name} CC {cc} covered by {' '.join(archs)}", subject=subject)
            continue
        install = install_torch(ctx, kb, build, driver=snap.accelerators.driver_version or None, ccs=ccs)
        verdict = blocked if verified else warning
        yield verdict(
            f"{name} (CC {cc}); torch {build.version} (CUDA {build.cuda}) carries "
            f"{' '.join(archs)} [{source}]",
            f"a build with sm_{cc.replace('.', '')} (or an older sm_{cc.split('.')[0]}x / PTX <= {cc})",
            f"Install a torch build that covers CC {cc}: {pip_command(install)}"
            if install
            else f"No known torch build covers CC {cc} with this driver; upgrade the driver or the GPU.",
            subject=subject,
            category="gpu-arch-unsupported",
            install=install,
        )
