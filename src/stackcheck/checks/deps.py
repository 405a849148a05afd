"""DEP001–DEP005: integrity of the installed distributions, judged without a profile.

Broken requirements (what ``pip check`` reports, plus requirements brought in by extras),
``Requires-Python`` and wheel tags that do not fit the interpreter, half-installed
distributions, and mixed torch / CUDA builds.
"""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from stackcheck.checks.registry import DOCTOR, PREFLIGHT, blocked, check, ok, skipped, warning
from stackcheck.checks.torch_install import torch_index_url
from stackcheck.deps.index import install_spec, parse_requirement, parse_version
from stackcheck.deps.wheeltags import Target, wheel_fits
from stackcheck.models.snapshot import Distribution, normalize_name
from stackcheck.shellcmd import command, with_note
from stackcheck.versions import unparsable_version

BOTH = (PREFLIGHT, DOCTOR)


def no_package_metadata(ctx):
    """A skip outcome when the snapshot holds no complete, metadata-based package list: none
    at all, or collect_env's (torch-related packages only, no requirements or files)."""
    pk = ctx.snapshot.packages
    if pk.status != "ok":
        return skipped(f"the snapshot has no package list ({pk.status}, source {pk.source or 'unknown'})")
    if pk.source == "collect_env":
        return skipped("collect_env lists only torch-related packages, without their metadata")
    return None


def _importable(ctx) -> list[Distribution]:
    return [d for d in ctx.snapshot.packages.distributions if not d.shadowed]


@check(
    "DEP001",
    "Requirements of installed distributions are met",
    commands=BOTH,
    explain="""
Every installed distribution's Requires-Dist, with markers evaluated for the checked
interpreter: a required project that is not installed, or installed in a version outside the
specifier, breaks the requirer at import or run time. The base requirements are exactly what
`pip check` reports (same set, same wording); requirements switched on by an extra that some
other installed package asks for (`transformers[torch]`) are reported too, as warnings, which
`pip check` does not see. Each finding names the chain of who requires the requirer. Fix:
install the required version with the checked interpreter; `stackcheck deps why PKG` shows who
needs it.""",
)
def broken_requirements(ctx):
    if (skip := no_package_metadata(ctx)) is not None:
        yield skip
        return
    graph = ctx.dep_graph
    problems = graph.problems()
    for p in problems:
        chain = graph.chain(p.package)
        evidence = {"required_by": " -> ".join(chain)} if len(chain) > 1 else {}
        outcome = warning if p.via_extra else blocked
        yield outcome(
            observed=p.message(),
            expected=install_spec(p.requirement) + (" installed" if p.state == "missing" else ""),
            fix=ctx.install(install_spec(p.requirement)),
            subject=normalize_name(p.package),
            evidence=evidence,
        )
    if not problems:
        edges = sum(len(e) for e in graph.edges.values())
        yield ok(observed=f"{len(graph.nodes)} distributions, {edges} requirements, none broken")


@check(
    "DEP002",
    "Requires-Python of installed distributions",
    commands=BOTH,
    explain="""
A distribution whose `Requires-Python` excludes the checked interpreter was installed by force,
copied from another environment, or came in through PYTHONPATH: it may use syntax or C-API this
Python does not have. Fix: reinstall it with the checked interpreter (pip then picks a release
that supports this Python), or use a Python it supports.""",
)
def requires_python(ctx):
    if (skip := no_package_metadata(ctx)) is not None:
        yield skip
        return
    version = ctx.snapshot.python.version
    if not version:
        yield skipped("the snapshot does not record the Python version")
        return
    if parse_version(version) is None:
        yield skipped(f"the snapshot's Python version is unreadable: {unparsable_version(version)}")
        return
    bad = 0
    for dist in _importable(ctx):
        if not dist.requires_python:
            continue
        try:
            spec = SpecifierSet(dist.requires_python)
        except InvalidSpecifier:
            continue  # pip ignores an unparsable Requires-Python too
        if not spec.contains(version, prereleases=True):
            bad += 1
            yield blocked(
                observed=f"{dist.name} {dist.version} requires Python {dist.requires_python} (in "
                f"{dist.location})",
                expected=f"Python {version} admitted",
                fix=with_note(
                    ctx.pip_install("--force-reinstall", dist.name), f"picks a release for Python {version}"
                ),
                subject=normalize_name(dist.name),
            )
    if not bad:
        yield ok(observed=f"Python {version} admitted by every installed distribution")


@check(
    "DEP003",
    "Wheel platform tags fit this interpreter",
    commands=BOTH,
    explain="""
The WHEEL file of each installed distribution names the interpreter, ABI and platform it was
built for (`cp311-cp311-manylinux_2_28_x86_64`). A wheel for another CPython minor, another OS
or CPU, or a newer glibc than this machine has was copied in from elsewhere (a shared
site-packages, a Docker layer, `pip --target` for another Python); its extension modules fail
to load with "undefined symbol" or "cannot open shared object file". Fix: reinstall it with
the checked interpreter so pip picks a matching wheel.""",
)
def wheel_tags(ctx):
    if (skip := no_package_metadata(ctx)) is not None:
        yield skip
        return
    target = Target(ctx.snapshot)
    bad = 0
    for dist in _importable(ctx):
        if dist.wheel_tags and wheel_fits(dist.wheel_tags, target) is False:
            bad += 1
            py = ctx.snapshot.python
            yield blocked(
                observed=f"{dist.name} {dist.version} is built for {', '.join(dist.wheel_tags)}",
                expected=f"a wheel for {py.implementation or 'CPython'} {py.version} "
                f"({py.soabi or py.platform_tag})",
                fix=ctx.pip_install("--force-reinstall", "--no-deps", f"{dist.name}=={dist.version}"),
                subject=normalize_name(dist.name),
            )
    if not bad:
        yield ok(observed="every wheel tag fits this interpreter and platform")


@check(
    "DEP004",
    "Distributions completely installed",
    commands=BOTH,
    explain="""
Traces of interrupted or half-removed installs: a .dist-info without METADATA (invisible to
pip and importlib.metadata, but its files are still there), a top-level module listed in
RECORD/top_level.txt that is missing from disk (import fails although pip lists the package),
and `~`-prefixed directories pip leaves behind when an uninstall or upgrade is interrupted
(they confuse later installs and waste space). Fix: reinstall the package with
`--force-reinstall --no-deps`; delete the `~` leftovers.""",
)
def broken_installs(ctx):
    if (skip := no_package_metadata(ctx)) is not None:
        yield skip
        return
    found = 0
    for dist in ctx.snapshot.packages.distributions:
        for problem in dist.problems:
            found += 1
            serious = problem.startswith(
                ("missing METADATA", "missing PKG-INFO", "RECORD lists top-level module", "cannot read")
            )
            outcome = blocked if serious else warning
            yield outcome(
                observed=f"{dist.name} {dist.version}: {problem} ({dist.metadata_dir or dist.location})",
                expected="a complete installation",
                fix=ctx.pip_install("--force-reinstall", "--no-deps", f"{dist.name}=={dist.version}"),
                subject=normalize_name(dist.name),
            )
    for path in ctx.snapshot.packages.stray_entries:
        found += 1
        yield warning(
            observed=f"leftover of an interrupted install: {path}",
            expected="no ~-prefixed entries in site-packages",
            fix=command("rm", "-rf", "--", path),
            subject=path.rsplit("/", 1)[-1],
        )
    if not found:
        yield ok(observed="no missing metadata, missing modules or install leftovers")


# ----- DEP005: mixed torch / CUDA builds -----

_CU_SUFFIX = re.compile(r"^(?:nvidia-[a-z0-9-]+)-cu(\d{1,4})$")
# unsuffixed CUDA runtime wheels whose version major is the CUDA major
_CUDA_VERSIONED = {
    "cuda-toolkit",
    "cuda-bindings",
    "nvidia-cuda-runtime",
    "nvidia-cuda-nvrtc",
    "nvidia-cuda-cupti",
    "nvidia-cublas",
}
_COMPANIONS = ("torchvision", "torchaudio")


def cuda_major_of_label(label: str) -> int | None:
    """``cu130`` → 13, ``cu121`` → 12, ``cu118`` → 11, ``cu92`` → 9; else None."""
    m = re.fullmatch(r"cu(\d{2,3})", label or "")
    if not m:
        return None
    digits = m.group(1)
    return int(digits[:-1])


def _local(version: str) -> str:
    return version.partition("+")[2]


def _wheel_cuda_major(name: str, version: str) -> int | None:
    """CUDA major of an NVIDIA runtime wheel, from its ``-cuXX`` suffix or its version."""
    key = normalize_name(name)
    m = _CU_SUFFIX.match(key)
    if m:
        return int(m.group(1))
    if key in _CUDA_VERSIONED:
        v = parse_version(version)
        return v.major if v else None
    return None


def torch_cuda_major(ctx) -> int | None:
    """CUDA major of the installed torch build: torch section, local label, or its CUDA pins."""
    snap = ctx.snapshot
    if snap.torch.cuda:
        head = snap.torch.cuda.split(".")[0]
        return int(head) if head.isascii() and head.isdigit() and len(head) <= 4 else None
    torch = snap.distribution("torch")
    if torch is None:
        return None
    label = _local(torch.version)
    if label:
        return cuda_major_of_label(label)  # "cpu", "rocm6.2" → None
    for text in torch.requires:  # the PyPI default wheel: its CUDA pins say the build
        req = parse_requirement(text)
        pins = [s.version for s in req.specifier if s.operator == "=="] if req else []
        major = _wheel_cuda_major(req.name, pins[0] if pins else "") if req else None
        if major:
            return major
    return None


@check(
    "DEP005",
    "torch, its companions and CUDA wheels are one build",
    commands=BOTH,
    explain="""
torchvision and torchaudio are compiled against one torch release and one CUDA variant: their
own metadata pins the torch version, and the local label (+cu128, +cpu) names the variant. A
torchvision for another torch fails with "operator torchvision::nms does not exist" or an
undefined symbol. Leftover `nvidia-*-cuXX` runtime wheels of another CUDA major than torch's
build are dead weight at best and get loaded first at worst. (A CPU-only torch on a CUDA
machine is CUDA003's business.) Fix: reinstall the companion for the installed torch from the
same index; uninstall runtime wheels of the other CUDA major.""",
)
def mixed_builds(ctx):
    if ctx.snapshot.packages.status != "ok":  # collect_env's torch-related list is enough here
        yield skipped("the snapshot has no package list")
        return
    torch = ctx.snapshot.distribution("torch")
    if torch is None:
        yield skipped("torch is not installed")
        return
    graph = ctx.dep_graph
    found = 0
    torch_base = torch.version.partition("+")[0]
    for name in _COMPANIONS:
        comp = ctx.snapshot.distribution(name)
        if comp is None:
            continue
        pins = [e for e in graph.edges.get(name, ()) if e.target == "torch" and e.state == "mismatch"]
        label_t, label_c = _local(torch.version), _local(comp.version)
        if pins:
            found += 1
            yield blocked(
                observed=f"{comp.name} {comp.version} is built for {pins[0].requirement}, but torch is "
                f"{torch.version}",
                expected=f"the {comp.name} release built for torch {torch_base}",
                fix=ctx.pip_install(f"torch=={torch.version}", comp.name),
                subject=name,
            )
        elif label_t and label_c and label_t != label_c:
            found += 1
            yield blocked(
                observed=f"{comp.name} {comp.version} (+{label_c}) next to torch {torch.version} "
                f"(+{label_t})",
                expected=f"{comp.name} of the same variant, +{label_t}",
                fix=ctx.pip_install(
                    f"torch=={torch.version}",
                    comp.name,
                    "--index-url",
                    torch_index_url(label_t),
                ),
                subject=name,
            )
    major = torch_cuda_major(ctx)
    if major is not None:
        stray = [
            d
            for d in ctx.snapshot.packages.distributions
            if not d.shadowed and (m := _wheel_cuda_major(d.name, d.version)) is not None and m != major
        ]
        if stray:
            found += 1
            names = sorted(d.name for d in stray)
            yield warning(
                observed=f"CUDA {major} torch build ({torch.version}) with CUDA runtime wheels of another "
                "major: " + ", ".join(f"{d.name} {d.version}" for d in sorted(stray, key=lambda d: d.name)),
                expected=f"only CUDA {major} runtime wheels",
                fix=ctx.pip_uninstall(*names),
                subject="nvidia-runtime-wheels",
            )
    if not found:
        yield ok(observed=f"torch {torch.version}: companions and CUDA runtime wheels match")
