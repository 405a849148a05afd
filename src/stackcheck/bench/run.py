"""Run the suite: for every backend × shape, skip with the reason, or check, then time.

A case that cannot run here is ``skipped`` with why (not installed, CPU-only, GPU architecture
too old, dtype unsupported, no kernel for these inputs). A case that runs is compared with the
float64 reference first; a wrong result is ``wrong`` and is never timed. Only a correct case
is timed (warm-up, repetitions) and gets its TFLOP/s and, where the GPU's peak is known, the
fraction of it. An exception while running is ``error`` with its message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

import msgspec

from stackcheck.bench.cases import Backend, Shape, case_dtype, flops
from stackcheck.bench.timing import DEFAULT_REPS, DEFAULT_WARMUP, Timing, measure, summary
from stackcheck.shellcmd import command

__all__ = ["BenchRun", "CaseResult", "run_suite", "skip_reason"]

BENCH_SCHEMA_VERSION = "1.0"
Status = Literal["ok", "wrong", "skipped", "error"]


class CaseResult(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    backend: str
    group: str
    op: str
    shape: str
    geometry: str = ""  # Shape.label()
    dtype: str
    status: Status
    reason: str = ""  # skipped / wrong / error: why
    identity: str = "torch"  # the BackendIdentity name of its records
    times_s: list[float] = []  # the repetitions, seconds
    stats: dict[str, float] = {}  # timing.summary of times_s
    warmup: int = 0
    timer: str = ""
    flops: float = 0.0
    tflops: float | None = None
    peak_fraction: float | None = None
    max_error: float | None = None
    error_bound: float | None = None
    spec: dict = {}  # Shape.spec(): the inputs' definition
    seed: int = 0

    @property
    def key(self) -> tuple[str, str]:
        return (self.backend, self.shape)

    @property
    def median_s(self) -> float | None:
        return self.stats.get("median")


class BenchRun(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One run of the suite: what ``bench run -o DIR`` writes as ``bench.json``."""

    schema_version: str = BENCH_SCHEMA_VERSION
    kind: Literal["stackcheck-bench"] = "stackcheck-bench"
    created_at: str = ""
    device: dict[str, str] = {}
    environment: dict[str, str] = {}  # stackcheck.results.compare.environment of the snapshot
    snapshot_digest: str = ""
    source: str = "stackcheck"  # stackcheck | pytest-benchmark (read from its JSON)
    cases: list[CaseResult] = []


def skip_reason(backend: Backend, shape: Shape, device, available: Callable[[str], bool]) -> str:
    """Why ``backend`` cannot run ``shape`` on ``device`` ("" when it may try)."""
    if backend.op != shape.op:
        return f"a {backend.op} backend, {shape.name} is a {shape.op} shape"
    if not available(backend.module):
        dist = {"flash_attn": "flash-attn"}.get(backend.module, backend.module)
        return f"not installed: {dist} ({command('pip', 'install', dist)})"
    dtype = case_dtype(backend, shape)
    if backend.cuda_only and not device.cuda:
        return f"CPU-only: no CUDA GPU here for {backend.cuda_only}"
    if dtype == "float8_e4m3fn" and backend.op != "gemm":
        return f"dtype unsupported: {backend.name} has no float8_e4m3fn path (fp8 is a GEMM backend here)"
    if backend.dtypes and dtype not in backend.dtypes:
        return f"dtype unsupported: {backend.name} runs {', '.join(backend.dtypes)}, the shape is {dtype}"
    if device.cuda and device.capability < backend.min_capability:
        need = "sm{}{}".format(*backend.min_capability)
        have = "sm{}{}".format(*device.capability)
        return f"GPU architecture too old: {backend.name} needs {need}+, this GPU is {have}"
    if backend.name == "flash-attn" and shape.head_dim > 256:
        return f"dtype unsupported: flash-attn runs head_dim ≤ 256, the shape has {shape.head_dim}"
    if dtype == "float8_e4m3fn" and (shape.m % 16 or shape.n % 16 or shape.k % 16):
        return "dtype unsupported: fp8 scaled matmul needs m, n and k divisible by 16"
    return ""


def run_suite(
    backends: Iterable[Backend],
    shapes: Iterable[Shape],
    *,
    device=None,
    warmup: int = DEFAULT_WARMUP,
    reps: int = DEFAULT_REPS,
    seed: int = 0,
    clock: Callable[[], float] | None = None,
    prepare: Callable | None = None,
    available: Callable[[str], bool] | None = None,
    peaks: dict | None = None,
    progress: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    """Every backend on every shape of its operation, grouped by backend.

    ``prepare(backend, shape, device, seed) → (fn, inputs)`` defaults to the torch kernels of
    :mod:`stackcheck.bench.backends`; ``clock`` to the device's timer; ``available(module)`` to
    an import check. Tests inject a wrong kernel through ``prepare`` and a clock through ``clock``.
    """
    from stackcheck.bench import backends as kernels

    device = device or kernels.device_info()
    prepare = prepare or kernels.prepare
    available = available or kernels.installed
    shapes = list(shapes)
    out: list[CaseResult] = []
    for backend in backends:
        for shape in shapes:
            if shape.op != backend.op:
                continue
            result = run_case(backend, shape, device, warmup, reps, seed, clock, prepare, available, peaks)
            out.append(result)
            if progress is not None:
                progress(result)
    return out


def run_case(backend, shape, device, warmup, reps, seed, clock, prepare, available, peaks) -> CaseResult:
    from stackcheck.bench import reference
    from stackcheck.bench.backends import NoKernel

    dtype = case_dtype(backend, shape)
    base = {
        "backend": backend.name,
        "group": backend.group,
        "op": backend.op,
        "shape": shape.name,
        "geometry": shape.label(),
        "dtype": dtype,
        "identity": backend.identity,
        "flops": flops(shape),
        "spec": shape.spec(),
        "seed": seed,
    }
    why = skip_reason(backend, shape, device, available)
    if why:
        return CaseResult(**base, status="skipped", reason=why)
    try:
        fn, inputs = prepare(backend, shape, device, seed)
        output = fn()
        check = reference.judge(output, reference.reference(shape, inputs), dtype)
        base.update(max_error=check.max_error, error_bound=check.bound)
        if not check.ok:
            return CaseResult(**base, status="wrong", reason=check.why)
        timing = measure(fn, warmup=warmup, reps=reps, cuda=device.cuda, clock=clock)
    except NoKernel as exc:
        return CaseResult(**base, status="skipped", reason=f"no kernel: {exc}")
    except Exception as exc:  # a path that breaks is a finding, never the end of the suite
        from stackcheck.redaction import redact_text

        first = redact_text((str(exc).strip().splitlines() or [""])[0])[:300]  # bench.json, the matrix
        return CaseResult(**base, status="error", reason=f"{type(exc).__name__}: {first}")
    finally:
        if device.cuda:  # the next case starts from the same free memory
            _release()
    return timed(CaseResult(**base, status="ok"), timing, device, peaks)


def _release() -> None:
    import gc

    import torch

    gc.collect()
    torch.cuda.empty_cache()


def timed(result: CaseResult, timing: Timing, device, peaks: dict | None) -> CaseResult:
    stats = summary(timing.times_s)
    tflops = result.flops / stats["median"] / 1e12 if stats.get("median") else None
    peak = peak_tflops(device, result.dtype, peaks)
    return msgspec.structs.replace(
        result,
        times_s=list(timing.times_s),
        stats=stats,
        warmup=timing.warmup,
        timer=timing.timer,
        tflops=tflops,
        peak_fraction=tflops / peak if tflops is not None and peak else None,
    )


def peak_tflops(device, dtype: str, peaks: dict | None = None) -> float | None:
    """The dense peak TFLOP/s of ``device`` in ``dtype`` from the peak table (None: unknown)."""
    if not getattr(device, "cuda", False):
        return None
    if peaks is None:
        from stackcheck.bench.peaks import load_peaks

        peaks = load_peaks()
    for entry in peaks.get("gpus", []):
        if any(m.lower() in device.name.lower() for m in entry["match"]):
            value = entry["tflops"].get(dtype)
            return float(value) if value else None
    return None


def check_reps(reps: int) -> None:
    from stackcheck.errors import InputError

    if reps < 5:
        raise InputError(f"--reps: at least 5 repetitions for a median and a noise estimate, got {reps}")
