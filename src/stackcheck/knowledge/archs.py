"""GPU architecture coverage: does a torch build carry a kernel image for this GPU?

The rule (CUDA C++ Programming Guide, "Binary Compatibility"): a cubin ``sm_XY`` runs on a GPU
of compute capability X.z when z ≥ Y (same major); PTX ``compute_XY`` is JIT-compiled by the
driver for any GPU ≥ X.Y; arch-specific targets (``sm_90a``, ``sm_100a``, ``compute_90a``) run on
exactly that capability and are not forward compatible.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from stackcheck.versions import major_minor

_TARGET = re.compile(r"(sm|compute)_(\d{1,4})(\d)([af]?)")


def cc_tuple(cc: str) -> tuple[int, int] | None:
    """``"8.6"`` → ``(8, 6)``; ``None`` for anything else."""
    cc = cc.strip()
    return major_minor(cc) if cc.count(".") == 1 else None


def cc_target(cc: str, kind: str = "sm") -> str:
    """``"12.0"`` → ``"sm_120"`` (the spelling of ``torch.cuda.get_arch_list()``)."""
    major, minor = cc.split(".")
    return f"{kind}_{major}{minor}"


def covers(arch_list: Iterable[str], cc: str) -> bool:
    """Whether a build with ``arch_list`` (``["sm_80", "compute_90"]``) can run on a GPU of
    compute capability ``cc``."""
    gpu = cc_tuple(cc)
    if gpu is None:
        return False
    for entry in arch_list:
        m = _TARGET.fullmatch(entry.strip())
        if not m:
            continue
        kind, target, suffix = m.group(1), (int(m.group(2)), int(m.group(3))), m.group(4)
        if suffix == "a":
            if target == gpu:
                return True
        elif kind == "sm":
            if target[0] == gpu[0] and target[1] <= gpu[1]:
                return True
        elif target <= gpu:  # PTX: JIT-compiled for anything at least as new
            return True
    return False


def arch_span(arch_list: Iterable[str]) -> tuple[str, str] | None:
    """The lowest and highest compute capability named in an arch list, ("5.0", "9.0")."""
    found = []
    for entry in arch_list:
        m = _TARGET.fullmatch(entry.strip())
        if m:
            found.append((int(m.group(2)), int(m.group(3))))
    if not found:
        return None
    lo, hi = min(found), max(found)
    return f"{lo[0]}.{lo[1]}", f"{hi[0]}.{hi[1]}"
