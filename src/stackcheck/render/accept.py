"""Text output of ``stackcheck accept``: the readable version report written as ``summary.txt``."""

from __future__ import annotations

from stackcheck.models.finding import Report
from stackcheck.models.snapshot import Snapshot
from stackcheck.render.text import report_text


def accept_summary_text(report: Report, snapshot: Snapshot, wanted: list[str]) -> str:
    """The readable version report of ``accept`` (``summary.txt``): the interpreter, platform,
    the installed versions of the ``wanted`` packages, torch and GPUs, then the report."""
    from packaging.utils import canonicalize_name

    py = snapshot.python
    installed = {canonicalize_name(d.name): d.version for d in snapshot.packages.distributions}
    shown = dict.fromkeys(canonicalize_name(w) for w in wanted)
    names = [f"{n} {installed[n]}" for n in shown if n in installed]
    plat = snapshot.platform
    torch = snapshot.torch
    acc = snapshot.accelerators
    lines = [
        f"stackcheck accept  {snapshot.tool.captured_at}",
        f"interpreter: {py.executable} (Python {py.version}, {py.env_kind or 'unknown env'})",
        f"platform:    {plat.system or '?'} {plat.machine} {plat.distro_name}".rstrip()
        + (f", {plat.libc_family} {plat.libc_version}" if plat.libc_family else ""),
        f"packages:    {', '.join(names) or 'none of the usual ML packages'} "
        f"({len(installed)} distributions in snapshot.json)",
        f"torch:       {torch.version or 'not installed'}"
        + (f", CUDA build {torch.cuda}" if torch.cuda else (", CPU build" if torch.version else "")),
        "GPUs:        "
        + (", ".join(f"{g.name} ({g.compute_capability})" for g in acc.gpus) or "none found")
        + (f", driver {acc.driver_version}" if acc.driver_version else ""),
        "",
        report_text(report, verbose=True).rstrip(),
        "",
    ]
    return "\n".join(lines)
