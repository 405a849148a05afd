"""The readable summary of a snapshot (``stackcheck snapshot`` without ``--json``): one line per
section with its status, its source and the facts people ask about first."""

from __future__ import annotations

from stackcheck.identifiers import printable
from stackcheck.models.memory import GIB
from stackcheck.models.snapshot import Snapshot


def snapshot_text(snap: Snapshot, origin: str | None = None) -> str:
    """One line per section: status, source, and the facts people ask about first."""
    rows = [
        ("python", snap.python, _python_facts(snap)),
        ("packages", snap.packages, _packages_facts(snap)),
        ("platform", snap.platform, _platform_facts(snap.platform)),
        ("hosted", snap.hosted, ", ".join(f"{p.name} ({p.signal})" for p in snap.hosted.platforms)),
        ("accelerators", snap.accelerators, _accelerator_facts(snap.accelerators)),
        ("torch", snap.torch, _torch_facts(snap.torch)),
        ("toolchain", snap.toolchain, _toolchain_facts(snap.toolchain)),
        ("kernels", snap.kernels, _kernel_facts(snap.kernels)),
        ("env", snap.env, _env_facts(snap.env)),
        ("git", snap.git, _git_facts(snap.git)),
        ("network", snap.network, _network_facts(snap.network)),
        ("launch", snap.launch, _launch_facts(snap.launch)),
        ("engines", snap.engines, _engine_facts(snap.engines)),
    ]
    how = snap.tool.command or "live"
    when = f", captured {snap.tool.captured_at}" if snap.tool.captured_at else ""
    head = f"stackcheck snapshot ({how}{when}{', read from ' + origin if origin else ''})"
    lines = [head]
    for name, section, facts in rows:
        status = section.status + (f" [{section.source}]" if section.source else "")
        detail = facts or ""
        if section.error:
            detail = f"{detail}; {section.error}" if detail else section.error
        lines.append(f"  {name:<13} {status:<28} {detail}".rstrip())
    return "\n".join(printable(line) for line in lines)  # a colleague's snapshot cannot rewrite the terminal


def _network_facts(n) -> str:
    names = ", ".join(i.name for i in n.interfaces if not i.loopback)
    return "  ".join(x for x in (n.hostname, f"interfaces: {names}" if names else "") if x)


def _launch_facts(launch) -> str:
    if launch.status != "ok":
        return ""
    return f"{launch.launcher} rank {launch.rank} of {launch.world_size} (local rank {launch.local_rank})"


def _python_facts(snap) -> str:
    py = snap.python
    env = f"{py.env_kind} ({py.env_marker})" if py.env_kind and py.env_marker else py.env_kind
    return "  ".join(x for x in (f"{py.implementation} {py.version}".strip(), py.executable, env) if x)


def _packages_facts(snap) -> str:
    dists = snap.packages.distributions
    shadowed = sum(1 for d in dists if d.shadowed)
    return _count(len(dists), "distribution") + (f" ({shadowed} shadowed)" if shadowed else "")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _env_facts(e) -> str:
    if e.status != "ok":
        return ""
    return _count(len(e.variables), "variable") + (
        f", redacted: {', '.join(e.redacted)}" if e.redacted else ""
    )


def _platform_facts(p) -> str:
    parts = [p.distro_name or p.system, p.machine, f"kernel {p.kernel}" if p.kernel else ""]
    if p.libc_family:
        parts.append(f"{p.libc_family} {p.libc_version}".strip())
    if p.cpu_count:
        parts.append(f"{p.cpu_count} CPUs" + (f" ({p.cpu_model})" if p.cpu_model else ""))
    if p.memory_total_bytes:
        parts.append(f"{p.memory_total_bytes / GIB:.1f} GiB RAM")
    if p.shm_total_bytes:
        parts.append(f"/dev/shm {p.shm_total_bytes / GIB:.1f} GiB")
    return ", ".join(x for x in parts if x)


def _accelerator_facts(a) -> str:
    if a.status != "ok":
        return "looked for: " + "; ".join(a.looked_for) if a.looked_for else ""
    parts = [
        f"{a.vendor} driver {a.driver_version}".strip() + (f" ({a.driver_source})" if a.driver_source else "")
    ]
    if a.cuda_driver_version:
        parts.append(f"CUDA {a.cuda_driver_version} max")
    for g in a.gpus:
        mem = f" {g.memory_total_bytes / GIB:.0f} GiB" if g.memory_total_bytes else ""
        cc = f" cc {g.compute_capability}" if g.compute_capability else ""
        hidden = "" if g.visible else " (hidden by CUDA_VISIBLE_DEVICES)"
        parts.append(f"GPU {g.index}: {g.name}{mem}{cc}{hidden}")
    return ", ".join(parts)


def _torch_facts(t) -> str:
    if t.status != "ok":
        return ""
    build = f"CUDA {t.cuda}" if t.cuda else (f"ROCm {t.hip}" if t.hip else "CPU build")
    text = f"{t.version} ({build})"
    if t.deep:
        if t.deep_error:
            text += f"; deep: {t.deep_error}"
        else:
            text += f"; cuda available: {t.cuda_available}" + (
                f", devices: {t.device_count}" if t.device_count is not None else ""
            )
            if t.arch_list:
                text += f", arch: {' '.join(t.arch_list)}"
    return text


def _toolchain_facts(tc) -> str:
    parts = []
    if tc.nvcc:
        parts.append(f"nvcc {tc.nvcc.version} {tc.nvcc.path}".strip())
    if tc.gcc:
        parts.append(f"gcc {tc.gcc.version} {tc.gcc.path}".strip())
    return ", ".join(parts)


def _kernel_facts(k) -> str:
    if not k.kernels:
        return f"no kernelspecs in {len(k.data_dirs)} data dirs" if k.data_dirs else ""
    return ", ".join(
        f"{s.name} → {s.interpreter or s.argv[0]}"
        + (" (bare python)" if s.bare_python else "")
        + ("" if s.interpreter_exists else " (missing)")
        for s in k.kernels
    )


def _engine_facts(section) -> str:
    parts = []
    for e in section.engines:
        extra = [x for x in (e.build, e.commit[:12], f"torch {e.torch}" if e.torch else "") if x]
        if e.backends:
            extra.append("/".join(b.removesuffix("ExecutionProvider") for b in e.backends))
        if e.container:
            extra.append(f"NGC {e.container}")
        parts.append(f"{e.name} {e.version}" + (f" ({', '.join(extra)})" if extra else ""))
    return ", ".join(parts)


def _git_facts(g) -> str:
    if g.status != "ok":
        return ""
    dirty = {True: ", dirty", False: ", clean", None: ""}[g.dirty]
    return f"{g.branch or '(detached)'} @ {g.commit[:12]}{dirty}  {g.root}"
