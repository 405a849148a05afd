"""Does a rule's scope hold in an environment? Pure evaluation of a Scope over a Snapshot.

Every condition answers one of three ways: holds (with evidence), does not hold, or cannot
be judged because the snapshot lacks the fact (e.g. a collect_env paste without a driver).
A scope matches when all its conditions hold; it is *not applicable* when none fails but
some could not be judged. An empty scope never matches (such a rule is for triage only).

The top of the knowledge layers: conditions use the derived facts (:mod:`.facts`) and the
named predicates (:mod:`.predicates`); the answer type and the shared lookups live below
all three in :mod:`.match` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stackcheck.knowledge.base import Knowledge, cuda_minor
from stackcheck.knowledge.facts import torch_build
from stackcheck.knowledge.match import ScopeMatch, in_spec, no_nvidia_driver, spec
from stackcheck.knowledge.predicates import run_predicate
from stackcheck.models.rule import Scope
from stackcheck.models.snapshot import Snapshot
from stackcheck.requirements import DistIndex, parse_requirement

__all__ = ["ScopeMatch", "evaluate", "in_spec", "no_nvidia_driver", "spec"]

# A condition gets the value of its Scope field (given: not empty), the snapshot, the tables and
# the snapshot's DistIndex.
Condition = Callable[[Any, Snapshot, Knowledge, DistIndex], ScopeMatch]


def evaluate(scope: Scope, snapshot: Snapshot, kb: Knowledge, index: DistIndex | None = None) -> ScopeMatch:
    """Evaluate every condition of ``scope``; see the module docstring for the semantics.
    ``index``: the snapshot's DistIndex, when the caller judges many rules on one snapshot
    (built here otherwise)."""
    given = [(cond, value) for name, cond in _CONDITIONS.items() if (value := getattr(scope, name))]
    dists = index if index is not None else DistIndex(snapshot)
    results = [cond(value, snapshot, kb, dists) for cond, value in given]
    if not results:
        return ScopeMatch(False, False, [], ["empty scope (triage-only rule)"])
    if any(r.applicable and not r.matches for r in results):
        failed = [m for r in results if r.applicable and not r.matches for m in r.missing]
        return ScopeMatch(False, True, [], failed)
    evidence = [e for r in results for e in r.evidence]
    missing = [m for r in results if not r.applicable for m in r.missing]
    if missing:
        return ScopeMatch(False, False, evidence, missing)
    expected = [e for r in results for e in r.expected]
    suggest = [s for r in results for s in r.suggest]
    return ScopeMatch(True, True, evidence, [], expected, suggest, [u for r in results for u in r.unverified])


# ----- one function per Scope field -----


def _packages(packages: list[str], snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    if snap.packages.status in ("failed", "timeout"):
        return ScopeMatch.unknown("installed packages")
    evidence = []
    for text in packages:
        st = index.evaluate(text)
        if st.state != "satisfied":
            return ScopeMatch.failed(f"{text}: {st.state}")
        req = parse_requirement(text)
        shown = f"{st.dist.name} {st.installed}" if st.dist else text
        evidence.append(f"{shown} ({req.specifier})" if req is not None and req.specifier else shown)
    return ScopeMatch.held(*evidence)


def _packages_absent(absent: list[str], snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    if snap.packages.status in ("failed", "timeout"):
        return ScopeMatch.unknown("installed packages")
    present = [n for n in absent if index.get(n) is not None]
    if present:
        return ScopeMatch.failed(f"{present[0]} is installed")
    return ScopeMatch.held(*(f"{n} not installed" for n in absent))


def _torch_cuda(want: str, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    build = torch_build(snap, kb, index)
    if build is None:
        return ScopeMatch.failed("torch not installed")
    if not build.known:
        return ScopeMatch.unknown("torch CUDA build")
    if want == "none":
        cpu = build.cuda is None and not build.hip
        return ScopeMatch.held(f"torch {build.version} is a CPU build") if cpu else ScopeMatch.failed()
    if build.cuda is None:
        return ScopeMatch.failed("torch is not a CUDA build")
    if in_spec(cuda_minor(build.cuda), want):
        return ScopeMatch.held(f"torch {build.version} built for CUDA {build.cuda} ({want})")
    return ScopeMatch.failed()


def _driver(want: str, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    drv = snap.accelerators.driver_version
    if not drv:
        if no_nvidia_driver(snap):
            return ScopeMatch.failed("no NVIDIA driver")
        return ScopeMatch.unknown("driver version")
    if in_spec(drv, want):
        return ScopeMatch.held(f"driver {drv} ({want})")
    return ScopeMatch.failed()


def _compute_capability(want: str, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    gpus = snap.visible_gpus()
    if not gpus:
        if no_nvidia_driver(snap) or snap.accelerators.status == "ok":
            return ScopeMatch.failed("no GPU")
        return ScopeMatch.unknown("GPUs")
    known = [g for g in gpus if g.compute_capability]
    hits = [g for g in known if in_spec(g.compute_capability, want)]
    if hits:
        return ScopeMatch.held(*(f"GPU{g.index} {g.name} CC {g.compute_capability}" for g in hits[:4]))
    return ScopeMatch.failed() if known else ScopeMatch.unknown("GPU compute capability")


def _python(want: str, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    v = snap.python.version
    if not v:
        return ScopeMatch.unknown("Python version")
    return ScopeMatch.held(f"Python {v} ({want})") if in_spec(v, want) else ScopeMatch.failed()


def _platform(platforms: list[str], snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    system = snap.platform.system.lower()
    if not system:
        return ScopeMatch.unknown("operating system")
    if system in [p.lower() for p in platforms]:
        return ScopeMatch.held(f"platform {system}")
    return ScopeMatch.failed()


def _glibc(want: str, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    plat = snap.platform
    if plat.libc_family and plat.libc_family != "glibc":
        return ScopeMatch.failed(f"libc is {plat.libc_family}")
    if not plat.libc_version:
        return ScopeMatch.unknown("glibc version")
    if in_spec(plat.libc_version, want):
        return ScopeMatch.held(f"glibc {plat.libc_version} ({want})")
    return ScopeMatch.failed()


def _gpu_name(want: str, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    gpus = snap.visible_gpus()
    if not gpus and not (no_nvidia_driver(snap) or snap.accelerators.status == "ok"):
        return ScopeMatch.unknown("GPUs")
    hits = [g for g in gpus if want.lower() in g.name.lower()]
    return ScopeMatch.held(*(f"GPU{g.index} {g.name}" for g in hits[:4])) if hits else ScopeMatch.failed()


def _requires_gpu(_: bool, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    gpus = snap.visible_gpus()
    if gpus:
        return ScopeMatch.held(f"{len(gpus)} GPU(s) visible")
    if no_nvidia_driver(snap) or snap.accelerators.status == "ok":
        return ScopeMatch.failed("no GPU")
    return ScopeMatch.unknown("GPUs")


def _predicate(text: str, snap: Snapshot, kb: Knowledge, index: DistIndex) -> ScopeMatch:
    return run_predicate(text, snap, kb, index)


# Scope field → its condition, in the order the evidence is listed.
_CONDITIONS: dict[str, Condition] = {
    "packages": _packages,
    "packages_absent": _packages_absent,
    "torch_cuda": _torch_cuda,
    "driver": _driver,
    "compute_capability": _compute_capability,
    "python": _python,
    "platform": _platform,
    "glibc": _glibc,
    "gpu_name": _gpu_name,
    "requires_gpu": _requires_gpu,
    "predicate": _predicate,
}
