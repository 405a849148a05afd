"""The dense peak TFLOP/s of known GPUs per dtype (data: ``peaks.json``, each entry with its source)."""

from __future__ import annotations

import functools
import json
from importlib import resources

__all__ = ["load_peaks"]


@functools.lru_cache(maxsize=1)
def load_peaks() -> dict:
    return json.loads(resources.files("stackcheck.bench").joinpath("peaks.json").read_text("utf-8"))
