"""GPU001–GPU003, CUDA001, CUDA003, PLAT001: the profile's GPU needs against the machine.

The knowledge-driven checks (driver vs CUDA build, architectures per build) live in
:mod:`stackcheck.checks.compat`; these only compare facts with the profile's thresholds.
"""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackcheck.checks.context import pip_command
from stackcheck.checks.registry import DOCTOR, PREFLIGHT, blocked, check, ok, skipped, warning
from stackcheck.checks.torch_install import torch_install, torch_release_install
from stackcheck.shellcmd import code, command
from stackcheck.versions import parse_version

GIB = 1024**3
# Reported totals sit a little under the marketed size (an "80GB" H100 reports 79.6 GiB,
# firmware and ECC reserve the rest), so a threshold of 80 must accept it.
MEMORY_TOLERANCE = 0.97
_LIST_PROFILES = command("stackcheck", "preflight", "--list-profiles")


def _gpu_profile(ctx):
    return ctx.profile.gpu if ctx.profile is not None else None


def _gpu_list_unknown(acc) -> bool:
    """A driver is there but no GPU is listed, and no failure says why (a collect_env paste
    whose "GPU models and configuration" is "Could not collect"): the GPUs are not known to be
    absent, only not known."""
    return (
        acc.status == "ok"
        and not acc.gpus
        and bool(acc.driver_version or acc.cuda_driver_version)
        and (not acc.error or acc.source == "collect_env")
    )


def _no_gpu_reason(ctx) -> str:
    """Why a per-GPU check has nothing to judge (GPU002, GPU003)."""
    unknown = _gpu_list_unknown(ctx.snapshot.accelerators)
    return "the GPU list is unknown (see GPU001)" if unknown else "no visible GPU (see GPU001)"


def _no_gpu_outcome(ctx, need: str):
    """Why there are no GPUs to judge, as a blocked outcome with the right fix (a warning when
    the facts do not list the GPUs of a machine that has a driver)."""
    acc = ctx.snapshot.accelerators
    if _gpu_list_unknown(acc):
        driver = (
            f"NVIDIA driver {acc.driver_version}"
            if acc.driver_version
            else f"a driver for CUDA {acc.cuda_driver_version}"
        )
        snapshot = command("stackcheck", "snapshot", "--json", "-o", "env.json")
        return warning(
            observed=f"the GPU list is unknown: {driver} is installed, but {acc.error or 'no GPU is listed'}",
            expected=need,
            fix=f"list the GPUs on that machine (`{command('nvidia-smi', '-L')}`); "
            f"a snapshot taken there records them: {code(snapshot)}",
            category="gpu-list-unknown",
        )
    if acc.status in ("failed", "timeout") or (acc.error and not acc.gpus):  # e.g. driver/library mismatch
        status = f" ({acc.status})" if acc.status != "ok" else ""
        observed = f"GPU facts could not be gathered{status}: {acc.error or 'no detail'}"
        fix = (
            "fix the driver problem shown (e.g. reboot after a driver upgrade for a driver/library "
            "mismatch), then re-run"
        )
    else:
        observed = "no NVIDIA GPU found" + (
            f" (looked at {', '.join(acc.looked_for)})" if acc.looked_for else ""
        )
        fix = (
            f"run on a machine with a GPU, or choose a CPU profile ({code(_LIST_PROFILES)}); "
            f"on CPU-only CI skip the GPU checks: {code(_skip_gpu(ctx))}"
        )
    visible_env = acc.cuda_visible_devices
    if visible_env is not None and acc.gpus:
        observed += f"; CUDA_VISIBLE_DEVICES={visible_env!r} hides {len(acc.gpus)} GPU(s)"
        unset = command("unset", "CUDA_VISIBLE_DEVICES")
        fix = f"correct CUDA_VISIBLE_DEVICES, or show every GPU: {code(unset)}"
    return blocked(observed=observed, expected=need, fix=fix, category="no-gpu")


def _skip_gpu(ctx) -> str:
    """The preflight of this profile without its GPU and CUDA checks (CPU-only CI)."""
    return command("stackcheck", "preflight", "--profile", ctx.profile.id, "--skip", "GPU,CUDA")


@check(
    "GPU001",
    "GPU count",
    needs_profile=True,
    explain="""
Counts the GPUs visible to the process (after CUDA_VISIBLE_DEVICES, matched by index or
UUID) and compares with the profile's gpu.min_count (1 when a profile needs a GPU at all).
A multi-GPU lab on one GPU does not fail at start; it quietly runs a different experiment.
Fix: a machine (or allocation: Slurm --gres=gpu:N) with enough GPUs, or correct
CUDA_VISIBLE_DEVICES.""",
)
def gpu_count(ctx):
    need = _gpu_profile(ctx)
    if need is None:
        return
    want = max(need.min_count or 1, 1)
    gpus = ctx.snapshot.visible_gpus()
    if not gpus:
        yield _no_gpu_outcome(ctx, f">= {want} GPU(s)")
        return
    names = ", ".join(sorted({g.name for g in gpus}))
    if len(gpus) < want:
        yield blocked(
            observed=f"{len(gpus)} visible GPU(s): {names}",
            expected=f">= {want} GPUs",
            fix=f"run on a node with >= {want} GPUs (Slurm: --gres=gpu:{want}) or widen CUDA_VISIBLE_DEVICES",
        )
    else:
        yield ok(observed=f"{len(gpus)} visible GPU(s): {names}", expected=f">= {want}")


@check(
    "GPU002",
    "GPU memory per device",
    needs_profile=True,
    explain="""
Compares each visible GPU's total memory with the profile's gpu.min_memory_gib. The
threshold is per device: model and KV cache must fit on each GPU unless the experiment
shards them. Reported totals sit below the marketed size (an 80 GB H100 reports 79.6 GiB),
so 3 % below the threshold still passes. Fix: a larger GPU, or a profile sized for this one \
(see `stackcheck memory`
for what the model needs).""",
)
def gpu_memory(ctx):
    need = _gpu_profile(ctx)
    if need is None or need.min_memory_gib is None:
        return
    gpus = ctx.snapshot.visible_gpus()
    if not gpus:
        yield skipped(_no_gpu_reason(ctx))
        return
    for g in gpus:
        if g.memory_total_bytes is None:
            yield skipped("memory of this GPU is unknown", subject=f"GPU {g.index}")
            continue
        have = g.memory_total_bytes / GIB
        observed = f"GPU {g.index} {g.name}: {have:.1f} GiB"
        if have < need.min_memory_gib * MEMORY_TOLERANCE:
            yield blocked(
                observed=observed,
                expected=f">= {need.min_memory_gib:g} GiB per GPU",
                fix=f"use a GPU with >= {need.min_memory_gib:g} GiB, "
                f"or {code(command('stackcheck', 'memory'))} "
                "to size a smaller model/context",
                subject=f"GPU {g.index}",
            )
        else:
            yield ok(observed=observed, expected=f">= {need.min_memory_gib:g} GiB", subject=f"GPU {g.index}")


@check(
    "GPU003",
    "GPU compute capability",
    needs_profile=True,
    explain="""
Compares each visible GPU's compute capability with the profile's
gpu.min_compute_capability / max_compute_capability. Features have floors: bf16 and
FlashAttention-2 need 8.0 (Ampere), Triton/torch.compile 7.0, FP8 8.9. Fix: a GPU in the
range, or a profile whose kernels this GPU supports (e.g. fp16 + SDPA on a T4).""",
)
def gpu_capability(ctx):
    need = _gpu_profile(ctx)
    if need is None or (need.min_compute_capability is None and need.max_compute_capability is None):
        return
    gpus = ctx.snapshot.visible_gpus()
    if not gpus:
        yield skipped(_no_gpu_reason(ctx))
        return
    lo, hi = parse_version(need.min_compute_capability), parse_version(need.max_compute_capability)
    expected = " and ".join(
        p
        for p in (
            f">= {need.min_compute_capability}" if lo else "",
            f"<= {need.max_compute_capability}" if hi else "",
        )
        if p
    )
    for g in gpus:
        cc = parse_version(g.compute_capability)
        subject = f"GPU {g.index}"
        if cc is None:
            yield skipped("compute capability of this GPU is unknown", subject=subject)
        elif (lo and cc < lo) or (hi and cc > hi):
            yield blocked(
                observed=f"{g.name}: compute capability {g.compute_capability}",
                expected=f"compute capability {expected}",
                fix="use a GPU in that range, or a profile meant for this GPU generation "
                f"({code(_LIST_PROFILES)})",
                subject=subject,
            )
        else:
            yield ok(observed=f"{g.name}: {g.compute_capability}", expected=expected, subject=subject)


def _builds_for(ctx, torch_version: str) -> tuple[str, ...]:
    """CUDA builds offered for this torch release (stable, experimental and index-only, in
    ascending order), from the knowledge tables; for a release they do not list builds of,
    every build they list (:meth:`Knowledge.published_cuda_builds`). Tables that do not load
    raise (InputError): the check reports it, as every check on them."""
    release = ctx.knowledge.torch_release(torch_version)
    if release is not None and release.cuda_builds:
        return tuple(sorted(release.all_cuda_builds, key=Version))
    return tuple(ctx.knowledge.published_cuda_builds())


@check(
    "CUDA001",
    "torch CUDA build matches the profile",
    needs_profile=True,
    explain="""
Compares the CUDA version torch was built with (torch/version.py `cuda`, read as text,
never by importing torch) with the profile's gpu.torch_cuda specifier. A CPU build
(`cuda = None`) never satisfies a CUDA profile. Results from a cu126 and a cu128 build are
different experiments (different kernels, cuDNN, NCCL). Fix: reinstall torch from the
matching download.pytorch.org index (the printed command keeps the torch version).""",
)
def torch_cuda_build(ctx):
    need = _gpu_profile(ctx)
    if need is None or not need.torch_cuda:
        return
    t = ctx.snapshot.torch
    if t.status != "ok" or not t.version:
        yield skipped("torch is not installed or its version file was not read (see PKG001)")
        return
    try:
        spec = SpecifierSet(need.torch_cuda)
    except InvalidSpecifier:
        yield skipped(f"invalid gpu.torch_cuda {need.torch_cuda!r} in the profile")
        return
    if t.cuda and (built := parse_version(t.cuda)) is not None and spec.contains(built, prereleases=True):
        yield ok(observed=f"torch {t.version} built with CUDA {t.cuda}", expected=f"CUDA {need.torch_cuda}")
        return
    fix, install = _fix_for_cuda_spec(ctx, t.version, spec, need.torch_cuda)
    build = f"CUDA {t.cuda}" if t.cuda else ("ROCm " + t.hip if t.hip else "CPU-only")
    observed = f"torch {t.version} is a {build} build"
    yield blocked(observed=observed, expected=f"CUDA {need.torch_cuda}", fix=fix, install=install)


@check(
    "CUDA003",
    "CPU-only torch on a machine with an NVIDIA GPU",
    commands=(PREFLIGHT, DOCTOR),
    explain="""
A CPU build of torch (torch.version.cuda is None, version label +cpu or a macOS/aarch64
wheel) on a machine where the probe found an NVIDIA GPU: everything runs, slowly, on the
CPU, and `torch.cuda.is_available()` is False. It happens when pip resolves torch from an
index without CUDA wheels or a requirements file pins `+cpu`. Blocked when the profile
needs a GPU, a warning otherwise. Fix: reinstall torch from the CUDA index that fits the
driver.""",
)
def cpu_torch_on_gpu(ctx):
    t = ctx.snapshot.torch
    gpus = ctx.snapshot.visible_gpus()
    if t.status != "ok" or not t.version:
        return
    if not gpus:
        yield ok(observed=f"torch {t.version}; no NVIDIA GPU", expected="CUDA torch only where a GPU exists")
        return
    if t.cuda or t.hip:
        yield ok(observed=f"torch {t.version} (CUDA {t.cuda})", expected="a CUDA build on a GPU machine")
        return
    drv = ctx.snapshot.accelerators.cuda_driver_version
    cuda = _newest_build_for_driver(ctx, t.version, drv)
    fix = (
        torch_release_install(ctx, t.version, cuda)
        if cuda
        else "reinstall torch from a download.pytorch.org CUDA index that fits the driver"
    )
    wants_gpu = _gpu_profile(ctx) is not None
    outcome = blocked if wants_gpu else warning
    yield outcome(
        observed=f"torch {t.version} is a CPU-only build, but {len(gpus)} NVIDIA GPU(s) are present "
        f"({gpus[0].name})",
        expected="a CUDA build of torch",
        fix=fix,
    )


def _fix_for_cuda_spec(ctx, torch_version: str, spec: SpecifierSet, spec_text: str):
    """(fix, PipInstall or None): reinstall this torch release from a CUDA index inside
    ``spec`` (the newest the driver runs) when the profile admits the release; otherwise the
    profile's own torch range from such an index."""
    driver_cuda = ctx.snapshot.accelerators.cuda_driver_version
    wanted = _profile_torch_requirement(ctx)
    same_release = [
        c for c in _builds_for_driver(ctx, torch_version, driver_cuda) if spec.contains(c, prereleases=True)
    ]
    if same_release and _admits(wanted, torch_version):
        install = torch_release_install(ctx, torch_version, _preferred(ctx, torch_version, same_release))
        return pip_command(install), install
    published = ctx.knowledge.published_cuda_builds()
    any_release = [
        c for c in published if spec.contains(c, prereleases=True) and _driver_runs(driver_cuda, c)
    ]
    if not any_release:
        supports = driver_cuda or "unknown"
        fix = f"install a torch build for CUDA {spec_text}, after upgrading the driver"
        fix += f" (it supports CUDA {supports})"
        return fix, None
    install = torch_install(ctx, wanted or "torch", build=any_release[-1])
    why = "has no" if not same_release else "is outside the profile's torch range; install a"
    release = torch_version.split("+")[0]
    return f"torch {release} {why} CUDA {spec_text} build: {pip_command(install)}", install


def _admits(requirement: str | None, torch_version: str) -> bool:
    """Whether the profile's torch requirement admits the installed release (no requirement: yes)."""
    from stackcheck.deps.index import parse_requirement, parse_version

    req = parse_requirement(requirement) if requirement else None
    version = parse_version(torch_version)
    return req is None or version is None or req.specifier.contains(version, prereleases=True)


def _profile_torch_requirement(ctx) -> str | None:
    from stackcheck.deps.index import parse_requirement

    for text in ctx.profile.requirements if ctx.profile else ():
        req = parse_requirement(text)
        if req is not None and req.name.lower() == "torch":
            return f"torch{req.specifier}"
    return None


def _driver_runs(driver_cuda: str, build: str) -> bool:
    if not driver_cuda:
        return True
    b, d = parse_version(build), parse_version(driver_cuda)
    return b is None or d is None or b <= d


def _builds_for_driver(ctx, torch_version: str, driver_cuda: str) -> list[str]:
    return [b for b in _builds_for(ctx, torch_version) if _driver_runs(driver_cuda, b)]


def _newest_build_for_driver(ctx, torch_version: str, driver_cuda: str) -> str | None:
    """The newest CUDA build of this torch release that the driver's CUDA version covers
    (a stable one when there is one: experimental and index-only builds are the fallback)."""
    builds = _builds_for_driver(ctx, torch_version, driver_cuda)
    return _preferred(ctx, torch_version, builds) if builds else None


def _preferred(ctx, torch_version: str, builds: list[str]) -> str:
    """The newest of ``builds`` that is a stable build of this release, else the newest."""
    release = ctx.knowledge.torch_release(torch_version)
    stable = set(release.cuda_builds) if release is not None else set()
    return ([b for b in builds if b in stable] or builds)[-1]


@check(
    "PLAT001",
    "GPU profile on a CPU-only hosted platform",
    needs_profile=True,
    explain="""
A profile that needs a GPU judged on a hosted platform known to offer none here (a
GitHub-hosted runner, a Colab or Kaggle session without an accelerator attached). The
GPU checks would all fail for a reason the user cannot fix in the environment. Fix: attach
a GPU runtime (Colab: Runtime → Change runtime type), run on a GPU runner, or keep the GPU
checks out of CPU-only CI with `--skip GPU,CUDA`.""",
)
def gpu_profile_on_cpu_platform(ctx):
    if _gpu_profile(ctx) is None:
        return
    cpu_only = [p for p in ctx.snapshot.hosted.platforms if p.gpu_expected is False]
    if not cpu_only or ctx.snapshot.visible_gpus():
        if ctx.snapshot.hosted.platforms:
            names = ", ".join(p.name for p in ctx.snapshot.hosted.platforms)
            yield ok(observed=f"hosted on {names}", expected="a platform that offers a GPU")
        return
    p = cpu_only[0]
    yield blocked(
        observed=f"{p.name} ({p.signal}) offers no GPU here",
        expected="a GPU runtime",
        fix="attach a GPU runtime / use a GPU runner, or use a CPU profile; "
        f"on CPU-only CI skip the GPU checks: {code(_skip_gpu(ctx))}",
    )
