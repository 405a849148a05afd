"""The memory target: a GPU by name from the data table (``data/gpus.json``) or a size."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from stackcheck.errors import InputError
from stackcheck.models.memory import GIB

_UNITS = {
    "": GIB,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": GIB,
    "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_bytes: int
    basis: str  # where the figure comes from
    aliases: tuple[str, ...] = ()
    compute_capability: str | None = None  # NVIDIA's; None for other vendors


MAX_MEMORY_BYTES = 1 << 60  # 1 EiB: larger (or inf) is no GPU's memory


def parse_size(text: str, what: str = "--gpu-memory") -> int:
    """``80GiB``, ``24 GB``, ``81559MiB`` → bytes. A bare number means GiB."""
    m = _SIZE.match(str(text))
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS:
        raise InputError(f"{what}: {text!r} is not a memory size (expected e.g. 80GiB, 24GB, 81559MiB)")
    value = float(m.group(1)) * _UNITS[unit]
    if value <= 0:
        raise InputError(f"{what}: {text!r} must be larger than zero")
    if value > MAX_MEMORY_BYTES:
        raise InputError(f"{what}: {text!r} is more than {MAX_MEMORY_BYTES >> 50} PiB (expected e.g. 80GiB)")
    return int(value)


@lru_cache(maxsize=1)
def gpu_table() -> tuple[Gpu, ...]:
    data = json.loads(resources.files("stackcheck.memory").joinpath("data/gpus.json").read_text("utf-8"))
    return tuple(
        Gpu(
            g["name"],
            int(round(g["memory_gib"] * GIB)),
            g["basis"],
            tuple(g.get("aliases", ())),
            g.get("compute_capability"),
        )
        for g in data["gpus"]
    )


# Words nvidia-smi and NVML put around the model that do not tell GPUs of this table apart.
_NOISE = frozenset(
    {
        "nvidia",
        "tesla",
        "geforce",
        "amd",
        "instinct",
        "pcie",
        "sxm",
        "sxm2",
        "sxm3",
        "sxm4",
        "sxm5",
        "hbm2",
        "hbm2e",
        "hbm3",
        "hbm3e",
    }
)


def _key(name: str) -> str:
    """``NVIDIA A100-SXM4-80GB`` → ``a10080gb``; ``Tesla T4`` → ``t4``; ``H100`` → ``h100``."""
    return "".join(w for w in re.split(r"[^a-z0-9]+", name.lower()) if w and w not in _NOISE)


def find_gpu(name: str) -> Gpu:
    """A GPU by name or alias, as a user types it (``h100``, ``A100-80GB``) or as nvidia-smi
    and NVML report it (``NVIDIA H100 80GB HBM3``, ``Tesla T4``): case, punctuation, vendor
    and form-factor words are ignored."""
    key = _key(name)
    for gpu in gpu_table():
        if key == _key(gpu.name) or key in (_key(a) for a in gpu.aliases):
            return gpu
    known = ", ".join(g.name for g in gpu_table())
    raise InputError(f"--gpu: unknown GPU {name!r}; known: {known} (or give --gpu-memory SIZE)")
