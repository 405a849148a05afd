"""Named scope predicates: facts a version specifier cannot express, computed from the
knowledge tables (never from versions written here).

A rule names one in ``scope.predicate``, optionally with arguments after colons:
``pin-mismatch:vllm:torch`` = "vllm is installed with a torch its pin table forbids".
"""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.version import Version

from stackcheck.knowledge.archs import arch_span, cc_tuple
from stackcheck.knowledge.base import Knowledge, cuda_minor, release_of, version
from stackcheck.knowledge.facts import (
    cuda_torch,
    driver_fit,
    official_build,
    torch_archs,
    torch_build,
    uncovered_gpus,
)
from stackcheck.knowledge.match import ScopeMatch, in_spec, no_nvidia_driver
from stackcheck.knowledge.tables import PinRow, TorchRelease
from stackcheck.models.snapshot import Snapshot
from stackcheck.requirements import DistIndex, marker_environment

# a predicate gets the snapshot, the tables, its arguments and the snapshot's DistIndex (built
# once by the caller for every rule judged on one snapshot)
Predicate = Callable[[Snapshot, Knowledge, list[str], DistIndex], ScopeMatch]
PREDICATES: dict[str, Predicate] = {}


def predicate(name: str) -> Callable[[Predicate], Predicate]:
    def register(fn: Predicate) -> Predicate:
        PREDICATES[name] = fn
        return fn

    return register


def predicate_name(text: str) -> str:
    return text.split(":", 1)[0]


def run_predicate(text: str, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    name, *args = text.split(":")
    fn = PREDICATES.get(name)
    if fn is None:
        raise ValueError(f"unknown scope predicate {name!r}")
    return fn(snap, kb, args, index)


@predicate("gpu-arch-not-in-torch-build")
def _gpu_arch(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
    """A visible GPU has no kernel image in the torch build; arg ``newer``/``older`` keeps
    only GPUs above/below the build's range."""
    build = cuda_torch(snap, kb, index)
    if isinstance(build, ScopeMatch):
        return build
    if not snap.visible_gpus():
        return (
            ScopeMatch.failed("no GPU")
            if no_nvidia_driver(snap) or snap.accelerators.status == "ok"
            else ScopeMatch.unknown("GPUs")
        )
    found = torch_archs(snap, kb, build)
    if found is None:
        return ScopeMatch.unknown(f"arch list of torch {build.version} (CUDA {build.cuda})")
    archs, source, verified = found
    span = arch_span(archs)
    # unreadable capabilities are not judged
    judged = [(g, cc) for g in uncovered_gpus(snap, archs) if (cc := cc_tuple(g.compute_capability))]
    lo, hi = (cc_tuple(span[0]), cc_tuple(span[1])) if args and span else (None, None)
    if args and args[0] == "newer" and hi:
        judged = [(g, cc) for g, cc in judged if cc > hi]
    elif args and args[0] == "older" and lo:
        judged = [(g, cc) for g, cc in judged if cc < lo]
    bad = [g for g, _ in judged]
    if not bad:
        return ScopeMatch.failed()
    return ScopeMatch.held(
        *(
            f"GPU{g.index} {g.name} CC {g.compute_capability} not covered by {' '.join(archs)}"
            for g in bad[:4]
        ),
        f"torch {build.version}; arch list from {source}",
        expected=[
            f"a torch build with kernels for CC {', '.join(sorted({g.compute_capability for g in bad}))}"
        ],
        unverified="" if verified else f"the arch list of torch {build.version} (CUDA {build.cuda})",
    )


def _driver_band(band: str, doc: str) -> Predicate:
    def judge(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
        fit = driver_fit(snap, kb, index)
        if isinstance(fit, ScopeMatch):
            return fit
        if fit.band != band:
            return ScopeMatch.failed()
        return ScopeMatch.held(
            f"{fit.shown} < {fit.required}",
            f"torch {fit.build.version} (CUDA {fit.build.cuda})",
            expected=[fit.expected],
            unverified=fit.unverified,
        )

    judge.__doc__ = doc
    return judge


predicate("driver-below-cuda-floor")(
    _driver_band(
        "below-floor", "The driver is below the minor-version-compatibility floor of torch's CUDA major."
    )
)
predicate("driver-below-toolkit-driver")(
    _driver_band(
        "compat-mode",
        "The driver meets the floor but not the toolkit driver of torch's CUDA minor (compatibility "
        "mode: PTX JIT of newer-toolkit PTX fails).",
    )
)


@predicate("nvcc-major-differs-from-torch-cuda")
def _nvcc(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
    """The system CUDA toolkit (nvcc) has another major than torch's CUDA: extension builds
    (DeepSpeed ops, flash-attn from source) refuse to compile."""
    build = cuda_torch(snap, kb, index)
    if isinstance(build, ScopeMatch):
        return build
    nvcc = snap.toolchain.nvcc
    if snap.toolchain.status in ("failed", "timeout"):
        return ScopeMatch.unknown("nvcc version")
    if nvcc is None or not nvcc.version:
        return ScopeMatch.failed("no nvcc")
    n, t = version(cuda_minor(nvcc.version)), version(build.cuda)
    if n and t and n.major != t.major:
        return ScopeMatch.held(
            f"nvcc {nvcc.version} (major {n.major}) vs torch CUDA {build.cuda} (major {t.major})",
            expected=[f"a CUDA {t.major}.x toolkit (nvcc) for extension builds"],
        )
    return ScopeMatch.failed()


@predicate("pin-mismatch")
def _pin_mismatch(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
    """``pin-mismatch:ENGINE:DEP``: ENGINE is installed with a DEP its wheel metadata (the
    pin table) does not allow."""
    if len(args) != 2:
        raise ValueError("pin-mismatch needs two arguments: pin-mismatch:ENGINE:DEPENDENCY")
    engine, dep = args
    e, d = index.get(engine), index.get(dep)
    if e is None or d is None:
        return ScopeMatch.failed(f"{engine if e is None else dep} not installed")
    if e.editable or not official_build(e.version):
        return ScopeMatch.unknown(
            f"pins of {e.name} {e.version} (a custom build: built against whatever torch was there)"
        )
    row = kb.engine_pins(engine, e.version)
    if row is None:
        return ScopeMatch.unknown(f"pins of {engine} {e.version} (not in the pin table)")
    reqs = kb.pins_for(row, dep, marker_environment(snap))
    dv = version(d.version)
    bad = [r for r in reqs if dv is None or not r.specifier.contains(dv, prereleases=True)]
    if not bad:
        return ScopeMatch.failed()
    wanted = ", ".join(str(r.specifier) for r in bad)
    return ScopeMatch.held(
        f"{e.name} {e.version} requires {dep}{wanted}",
        f"installed {d.name} {d.version}",
        expected=[f"{dep}{wanted} (pinned by {e.name} {e.version})"],
        suggest=[f"{dep}{r.specifier}" for r in bad],
        unverified="" if row.verified else f"{row.package} {row.version} pins: {row.unverified_reason}",
    )


@predicate("companion-mismatch")
def _companion(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
    """``companion-mismatch:torchvision`` (or ``torchaudio``): the installed companion is not
    the release paired with the installed torch."""
    if len(args) != 1 or args[0] not in ("torchvision", "torchaudio"):
        raise ValueError("companion-mismatch needs one argument: torchvision or torchaudio")
    name = args[0]
    torch, comp = index.get("torch"), index.get(name)
    if torch is None or comp is None:
        return ScopeMatch.failed(f"{'torch' if torch is None else name} not installed")
    rel = kb.torch_release(torch.version)
    paired = getattr(rel, name) if rel else None
    if rel is None or not paired:
        return ScopeMatch.unknown(f"{name} paired with torch {torch.version}")
    if release_of(comp.version) == paired:
        return ScopeMatch.failed()
    return ScopeMatch.held(
        f"{name} {comp.version} with torch {torch.version}",
        expected=[f"{name} {paired}.* (paired with torch {rel.torch})"],
        suggest=[f"{name}=={paired}.*"],
        unverified=_release_unverified(rel),
    )


def _release_unverified(rel) -> str:
    return "" if rel.verified else f"torch {rel.torch}: {rel.unverified_reason}"


@predicate("python-outside-torch-window")
def _python_window(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
    """The interpreter's Python is outside the installed torch release's supported window."""
    torch = index.get("torch")
    if torch is None:
        return ScopeMatch.failed("torch not installed")
    py = snap.python.version
    rel = kb.torch_release(torch.version)
    if not py or rel is None or not rel.python:
        return ScopeMatch.unknown("Python version or torch's Python window")
    minor = ".".join(py.split(".")[:2])
    if in_spec(py, rel.python) or minor in rel.python_experimental:
        return ScopeMatch.failed()
    return ScopeMatch.held(
        f"Python {py} with torch {torch.version}",
        expected=[
            f"Python {rel.python} for torch {rel.torch}"
            + (f" (experimental: {', '.join(rel.python_experimental)})" if rel.python_experimental else "")
        ],
        unverified=_release_unverified(rel),
    )


@predicate("glibc-below-wheel")
def _glibc_wheel(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
    """``glibc-below-wheel:PACKAGE``: the installed PACKAGE's wheels need a newer glibc
    (manylinux tag) than this system has — typically a source or conda build gone wrong."""
    if len(args) != 1:
        raise ValueError("glibc-below-wheel needs one argument: the package")
    dist = index.get(args[0])
    if dist is None:
        return ScopeMatch.failed(f"{args[0]} not installed")
    fact: TorchRelease | PinRow | None = (
        kb.torch_release(dist.version) if args[0] == "torch" else kb.engine_pins(args[0], dist.version)
    )
    need = fact.min_glibc if fact else None
    if fact is None or need is None:
        return ScopeMatch.failed(f"{args[0]} {dist.version} wheels need no recent glibc")
    plat = snap.platform
    if plat.system and plat.system != "Linux" or plat.libc_family == "musl":
        return ScopeMatch.failed("not a glibc system")
    have = version(plat.libc_version)
    if have is None:  # absent, or not a version ("N/A" in a collect_env paste, 4,400 digits)
        return ScopeMatch.unknown("glibc version")
    if have < Version(need):
        return ScopeMatch.held(
            f"glibc {plat.libc_version} with {dist.name} {dist.version}",
            expected=[f"glibc >= {need} (manylinux_{need.replace('.', '_')} wheels)"],
            unverified="" if fact.verified else f"{args[0]} {dist.version}: {fact.unverified_reason}",
        )
    return ScopeMatch.failed()


_FA_LABEL = re.compile(r"cu(\d+)torch(\d+\.\d+)cxx11abi(TRUE|FALSE)", re.IGNORECASE)


@predicate("flash-attn-wheel-mismatch")
def _flash_attn_wheel(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
    """The installed flash-attn is a prebuilt wheel for another torch minor or CUDA major than
    the installed torch (its wheel name / local version says ``+cu12torch2.3cxx11abiFALSE``)."""
    fa, torch = (
        index.get("flash-attn") or index.get("flash_attn"),
        index.get("torch"),
    )
    if fa is None or torch is None:
        return ScopeMatch.failed("flash-attn or torch not installed")
    m = _FA_LABEL.search(fa.version) or _FA_LABEL.search(fa.direct_url or "")
    if m is None:
        return ScopeMatch.failed("flash-attn was built from source here (no prebuilt-wheel label)")
    build = torch_build(snap, kb, index)
    wheel_cuda, wheel_torch = m.group(1)[:2], m.group(2)
    problems = []
    if release_of(torch.version) != wheel_torch:
        problems.append(f"built for torch {wheel_torch}, installed torch {torch.version}")
    cuda = version(build.cuda) if build and build.cuda else None
    if build and cuda and str(cuda.major) != wheel_cuda:
        problems.append(f"built for CUDA {wheel_cuda}, torch uses CUDA {build.cuda}")
    if not problems:
        return ScopeMatch.failed()
    return ScopeMatch.held(
        f"flash-attn {fa.version}: " + "; ".join(problems),
        expected=[
            f"a flash-attn wheel labelled torch{release_of(torch.version)} (cu{cuda.major if cuda else '?'})"
        ],
    )


@predicate("ld-library-path-has-system-cuda")
def _ld_path(snap: Snapshot, kb: Knowledge, args: list[str], index: DistIndex) -> ScopeMatch:
    """LD_LIBRARY_PATH puts a system CUDA's libraries before the pip nvidia-* ones."""
    env = snap.env
    if env.status in ("failed", "timeout"):
        return ScopeMatch.unknown("environment variables")
    value = env.variables.get("LD_LIBRARY_PATH", "")
    hits = [p for p in value.split(":") if "cuda" in p.lower() and "site-packages" not in p]
    if hits:
        return ScopeMatch.held(
            f"LD_LIBRARY_PATH has {hits[0]}", expected=["no system CUDA directory on LD_LIBRARY_PATH"]
        )
    return ScopeMatch.failed()
