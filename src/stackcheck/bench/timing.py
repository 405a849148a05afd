"""Honest timing: warm-up, repetitions, the median and its dispersion.

On a GPU each repetition is timed with a pair of CUDA events and the device is synchronized
before the clock is read; on a CPU with ``time.perf_counter``. The clock is injectable
(``clock=``), so the measuring loop itself is what the tests exercise with a deterministic
clock. Torch is imported only when timing on a GPU.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Timing", "measure", "summary"]

DEFAULT_WARMUP = 3
DEFAULT_REPS = 20


@dataclass(frozen=True)
class Timing:
    """Seconds per repetition and how they spread."""

    times_s: list[float] = field(default_factory=list)
    warmup: int = 0
    timer: str = "wall"  # wall (perf_counter) | cuda-events


def summary(times: list[float]) -> dict[str, float]:
    """median, q1, q3, iqr, mean, stdev, min, max and cv (stdev / mean) of ``times``."""
    if not times:
        return {}
    ordered = sorted(times)
    q1, _, q3 = (
        statistics.quantiles(ordered, n=4, method="inclusive") if len(ordered) > 1 else (ordered[0],) * 3
    )
    mean = statistics.fmean(ordered)
    stdev = statistics.stdev(ordered) if len(ordered) > 1 else 0.0
    return {
        "median": statistics.median(ordered),
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
        "mean": mean,
        "stdev": stdev,
        "min": ordered[0],
        "max": ordered[-1],
        "cv": stdev / mean if mean else 0.0,
    }


def measure(
    fn: Callable[[], object],
    *,
    warmup: int = DEFAULT_WARMUP,
    reps: int = DEFAULT_REPS,
    cuda: bool = False,
    clock: Callable[[], float] | None = None,
) -> Timing:
    """Run ``fn`` ``warmup`` times untimed, then ``reps`` timed repetitions."""
    if cuda and clock is None:
        return _cuda(fn, warmup, reps)
    clock = clock or time.perf_counter
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = clock()
        fn()
        times.append(clock() - start)
    return Timing(times_s=times, warmup=warmup, timer="wall" if clock is time.perf_counter else "injected")


def _cuda(fn: Callable[[], object], warmup: int, reps: int) -> Timing:
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    pairs = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()
    return Timing(times_s=[s.elapsed_time(e) / 1e3 for s, e in pairs], warmup=warmup, timer="cuda-events")
