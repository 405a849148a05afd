"""A ``pip freeze`` output → Snapshot (``--from-pip-freeze FILE``).

A freeze lists the pinned distributions of one environment and nothing else: the packages
section is built from its ``NAME==VERSION`` lines (``source: "pip_freeze"``, installer pip,
no location), every other section is ``absent``. Comments, blank lines, options (``-e``,
``--index-url`` …) and direct references (``NAME @ URL``, which carry no version) are left out;
any other line is a one-line error naming it.
"""

from __future__ import annotations

import re

from stackcheck.errors import InputError
from stackcheck.models import snapshot as S

SOURCE = "pip_freeze"
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*===?\s*(?P<version>[^\s;#]+)\s*$")
_DIRECT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@\s*\S")
_SECTIONS = ("python", "platform", "hosted", "accelerators", "torch", "toolchain", "kernels", "env", "git")


def parse_pip_freeze(text: str, source: str = "<text>") -> S.Snapshot:
    """The snapshot of one ``pip freeze`` output; a line that is not a pin is a one-line error."""
    if not isinstance(text, str):
        raise InputError(f"{source}: not a pip freeze output: expected text")
    dists: dict[str, S.Distribution] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "-")) or _DIRECT.match(line):
            continue
        pin = _PIN.match(line)
        if pin is None:
            from stackcheck.identifiers import printable

            shown = printable(line[:80]) + ("…" if len(line) > 80 else "")
            raise InputError(
                f"{source}: line {number}: expected NAME==VERSION (a pip freeze line), got {shown}"
            )
        name = pin["name"]
        dists.setdefault(
            S.normalize_name(name),
            S.Distribution(name=name, version=pin["version"], location="", installer="pip"),
        )
    if not dists:
        raise InputError(f"{source}: not a pip freeze output: no NAME==VERSION lines")
    snap = S.Snapshot(tool=S.ToolInfo(command=SOURCE))
    snap.packages = S.PackagesSection(status="ok", source=SOURCE, distributions=list(dists.values()))
    for name in _SECTIONS:
        section = getattr(snap, name)
        section.status, section.source, section.error = "absent", SOURCE, "not part of a pip freeze output"
    return snap
