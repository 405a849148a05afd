"""Does a rule's scope hold in an environment? Pure evaluation of a Scope over a Snapshot.

Every condition answers one of three ways: holds (with evidence), does not hold, or cannot
be judged because the snapshot lacks the fact (e.g. a collect_env paste without a driver).
A scope matches when all its conditions hold; it is *not applicable* when none fails but
some could not be judged. An empty scope never matches (such a rule is for triage only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from stackcheck.knowledge.base import Knowledge, cuda_minor, version
from stackcheck.models.rule import Scope
from stackcheck.models.snapshot import Snapshot


@dataclass(frozen=True)
class ScopeMatch:
    matches: bool
    applicable: bool
    evidence: list[str] = field(default_factory=list)  # facts that held, human-readable
    missing: list[str] = field(default_factory=list)  # facts that could not be judged (or why it failed)
    expected: list[str] = field(default_factory=list)  # what a good environment has instead
    suggest: list[str] = field(default_factory=list)  # requirements whose install fixes it
    # why a held match rests on a fact no primary source confirmed: such a match warns, never blocks
    unverified: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """Why it did not match, in words (for a skipped or ok finding)."""
        if not self.missing:
            return "not affected" if self.applicable else "cannot judge"
        return self.missing[0] if self.applicable else f"cannot judge without {', '.join(self.missing)}"

    @classmethod
    def held(
        cls,
        *evidence: str,
        expected: list[str] | None = None,
        suggest: list[str] | None = None,
        unverified: str = "",
    ) -> ScopeMatch:
        why = [unverified] if unverified else []
        return cls(True, True, list(evidence), [], list(expected or []), list(suggest or []), why)

    @classmethod
    def failed(cls, why: str = "") -> ScopeMatch:
        return cls(False, True, [], [why] if why else [])

    @classmethod
    def unknown(cls, missing: str) -> ScopeMatch:
        return cls(False, False, [], [missing])


def evaluate(scope: Scope, snapshot: Snapshot, kb: Knowledge) -> ScopeMatch:
    """Evaluate every condition of ``scope``; see the module docstring for the semantics."""
    results = [cond(scope, snapshot, kb) for cond in _CONDITIONS if _given(cond, scope)]
    if not results:
        return ScopeMatch(False, False, [], ["empty scope (triage-only rule)"])
    if any(r.applicable and not r.matches for r in results):
        return ScopeMatch(False, True, [], [m for r in results if r.applicable and not r.matches for m in r.missing])
    evidence = [e for r in results for e in r.evidence]
    missing = [m for r in results if not r.applicable for m in r.missing]
    if missing:
        return ScopeMatch(False, False, evidence, missing)
    expected = [e for r in results for e in r.expected]
    suggest = [s for r in results for s in r.suggest]
    return ScopeMatch(True, True, evidence, [], expected, suggest, [u for r in results for u in r.unverified])


_INDEX: list = []  # one slot: (snapshot, distributions list, its length, DistIndex)


def dist_index(snap: Snapshot):
    """The snapshot's DistIndex, built once for the many rules judged on one snapshot (rebuilt
    when the snapshot or its distribution list changes)."""
    from stackcheck.deps.index import DistIndex

    dists = snap.packages.distributions
    if _INDEX and _INDEX[0] is snap and _INDEX[1] is dists and _INDEX[2] == len(dists):
        return _INDEX[3]
    index = DistIndex(snap)
    _INDEX[:] = [snap, dists, len(dists), index]
    return index


@lru_cache(maxsize=512)
def spec(text: str) -> SpecifierSet:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise ValueError(f"invalid version specifier {text!r}") from None


def in_spec(value: str, specifier: str) -> bool:
    v = version(value)
    return v is not None and spec(specifier).contains(v, prereleases=True)


# ----- one function per Scope field -----


def _packages(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    if snap.packages.status in ("failed", "timeout"):
        return ScopeMatch.unknown("installed packages")
    from stackcheck.deps.index import parse_requirement

    index = dist_index(snap)
    evidence = []
    for text in scope.packages:
        st = index.evaluate(text)
        if st.state != "satisfied":
            return ScopeMatch.failed(f"{text}: {st.state}")
        req = parse_requirement(text)
        shown = f"{st.dist.name} {st.installed}" if st.dist else text
        evidence.append(f"{shown} ({req.specifier})" if req is not None and req.specifier else shown)
    return ScopeMatch.held(*evidence)


def _packages_absent(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    if snap.packages.status in ("failed", "timeout"):
        return ScopeMatch.unknown("installed packages")
    present = [n for n in scope.packages_absent if dist_index(snap).get(n) is not None]
    if present:
        return ScopeMatch.failed(f"{present[0]} is installed")
    return ScopeMatch.held(*(f"{n} not installed" for n in scope.packages_absent))


def _torch_cuda(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    from stackcheck.knowledge.facts import torch_build

    build = torch_build(snap, kb)
    if build is None:
        return ScopeMatch.failed("torch not installed")
    if not build.known:
        return ScopeMatch.unknown("torch CUDA build")
    if scope.torch_cuda == "none":
        cpu = build.cuda is None and not build.hip
        return ScopeMatch.held(f"torch {build.version} is a CPU build") if cpu else ScopeMatch.failed()
    if build.cuda is None:
        return ScopeMatch.failed("torch is not a CUDA build")
    if in_spec(cuda_minor(build.cuda), scope.torch_cuda):
        return ScopeMatch.held(f"torch {build.version} built for CUDA {build.cuda} ({scope.torch_cuda})")
    return ScopeMatch.failed()


def _driver(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    drv = snap.accelerators.driver_version
    if not drv:
        return ScopeMatch.failed("no NVIDIA driver") if no_nvidia_driver(snap) else ScopeMatch.unknown("driver version")
    if in_spec(drv, scope.driver):
        return ScopeMatch.held(f"driver {drv} ({scope.driver})")
    return ScopeMatch.failed()


def _compute_capability(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    gpus = snap.visible_gpus()
    if not gpus:
        return ScopeMatch.failed("no GPU") if no_nvidia_driver(snap) or snap.accelerators.status == "ok" else ScopeMatch.unknown("GPUs")
    known = [g for g in gpus if g.compute_capability]
    hits = [g for g in known if in_spec(g.compute_capability, scope.compute_capability)]
    if hits:
        return ScopeMatch.held(*(f"GPU{g.index} {g.name} CC {g.compute_capability}" for g in hits[:4]))
    return ScopeMatch.failed() if known else ScopeMatch.unknown("GPU compute capability")


def _python(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    v = snap.python.version
    if not v:
        return ScopeMatch.unknown("Python version")
    return ScopeMatch.held(f"Python {v} ({scope.python})") if in_spec(v, scope.python) else ScopeMatch.failed()


def _platform(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    system = snap.platform.system.lower()
    if not system:
        return ScopeMatch.unknown("operating system")
    return ScopeMatch.held(f"platform {system}") if system in [p.lower() for p in scope.platform] else ScopeMatch.failed()


def _glibc(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    plat = snap.platform
    if plat.libc_family and plat.libc_family != "glibc":
        return ScopeMatch.failed(f"libc is {plat.libc_family}")
    if not plat.libc_version:
        return ScopeMatch.unknown("glibc version")
    if in_spec(plat.libc_version, scope.glibc):
        return ScopeMatch.held(f"glibc {plat.libc_version} ({scope.glibc})")
    return ScopeMatch.failed()


def _gpu_name(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    gpus = snap.visible_gpus()
    if not gpus and not (no_nvidia_driver(snap) or snap.accelerators.status == "ok"):
        return ScopeMatch.unknown("GPUs")
    hits = [g for g in gpus if scope.gpu_name.lower() in g.name.lower()]
    return ScopeMatch.held(*(f"GPU{g.index} {g.name}" for g in hits[:4])) if hits else ScopeMatch.failed()


def _requires_gpu(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    gpus = snap.visible_gpus()
    if gpus:
        return ScopeMatch.held(f"{len(gpus)} GPU(s) visible")
    if no_nvidia_driver(snap) or snap.accelerators.status == "ok":
        return ScopeMatch.failed("no GPU")
    return ScopeMatch.unknown("GPUs")


def _predicate(scope: Scope, snap: Snapshot, kb: Knowledge) -> ScopeMatch:
    from stackcheck.knowledge.predicates import run_predicate

    return run_predicate(scope.predicate, snap, kb)


def no_nvidia_driver(snap: Snapshot) -> bool:
    """The snapshot looked for an NVIDIA driver and found none (a fact, unlike a missing
    section in a pasted collect_env output)."""
    acc = snap.accelerators
    imported = acc.source == "collect_env" or snap.tool.command == "collect_env"  # silence in a paste is no proof
    return acc.status == "absent" and bool(acc.looked_for) and not acc.driver_version and not imported


_FIELDS: dict[Callable, str] = {
    _packages: "packages",
    _packages_absent: "packages_absent",
    _torch_cuda: "torch_cuda",
    _driver: "driver",
    _compute_capability: "compute_capability",
    _python: "python",
    _platform: "platform",
    _glibc: "glibc",
    _gpu_name: "gpu_name",
    _requires_gpu: "requires_gpu",
    _predicate: "predicate",
}
_CONDITIONS = tuple(_FIELDS)


def _given(cond: Callable, scope: Scope) -> bool:
    return bool(getattr(scope, _FIELDS[cond]))
